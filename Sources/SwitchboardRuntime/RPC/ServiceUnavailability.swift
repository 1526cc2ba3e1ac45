/// Why a call was refused before anything was sent: the provider's catalogue does not offer
/// what the call needs (``TransportError/unavailable(_:)``).
public enum ServiceUnavailability: Error, Sendable, Hashable, CustomStringConvertible {
    /// The provider does not list the service (`package.Service`).
    case serviceNotOffered(service: String)
    /// The provider lists the service as disabled.
    case serviceDisabled(service: String)
    /// The service is not offered in the user's country (`nil`: the country is unknown and
    /// the service is offered only in listed countries).
    case notOfferedInCountry(service: String, country: String?)
    /// No version both sides support: the client's range and the provider's.
    case noCommonVersion(service: String, client: ClosedRange<Int>?, provider: ClosedRange<Int>?)
    /// The provider does not serve this endpoint (`package.Service/Method`), or not in the
    /// version both sides agreed on.
    case endpointNotOffered(rpcName: String, version: Int?)

    public var description: String {
        switch self {
        case let .serviceNotOffered(service): return "the provider does not offer \(service)"
        case let .serviceDisabled(service): return "the provider has disabled \(service)"
        case let .notOfferedInCountry(service, country): return "\(service) is not offered in \(country ?? "an unknown country")"
        case let .noCommonVersion(service, client, provider):
            return "\(service): no common version (client \(client.map { "\($0.lowerBound)-\($0.upperBound)" } ?? "any"), provider \(provider.map { "\($0.lowerBound)-\($0.upperBound)" } ?? "any"))"
        case let .endpointNotOffered(rpcName, version): return "the provider does not serve \(rpcName)" + (version.map { " in version \($0)" } ?? "")
        }
    }
}
