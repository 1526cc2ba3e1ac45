/// Where a service is offered, from `countries` in the schema or a provider's catalogue:
/// only in the listed countries, or everywhere but them. Codes are ISO 3166-1 alpha-3 (`CHN`).
public enum CountryAvailability: Sendable, Hashable {
    /// Offered only in these countries (`[USA, GBR]`).
    case only([String])
    /// Offered everywhere except these countries (`[!CHN]`).
    case except([String])

    /// Whether a user in `country` may use the service. An unknown country (`nil`) passes an
    /// exclusion list but not an allow list: offering a service only where it may be offered
    /// needs to know where the user is.
    public func permits(_ country: String?) -> Bool {
        switch self {
        case let .only(codes): return country.map { codes.contains($0.uppercased()) } ?? false
        case let .except(codes): return country.map { !codes.contains($0.uppercased()) } ?? true
        }
    }

    /// The catalogue's spelling: `[USA, GBR]` or `[!CHN]`.
    public var codes: [String] {
        switch self {
        case let .only(codes): return codes
        case let .except(codes): return codes.map { "!" + $0 }
        }
    }

    /// Reads the catalogue's spelling; `nil` for an empty list or one mixing both kinds.
    public init?(codes: [String]) {
        let denied = codes.filter { $0.hasPrefix("!") }.map { String($0.dropFirst()).uppercased() }
        let allowed = codes.filter { !$0.hasPrefix("!") }.map { $0.uppercased() }
        switch (allowed.isEmpty, denied.isEmpty) {
        case (false, true): self = .only(allowed)
        case (true, false): self = .except(denied)
        default: return nil
        }
    }
}
