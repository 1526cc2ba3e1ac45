import SwitchboardRuntime

/// Checks every call against a provider's catalogue before it is sent, and tags it with the
/// service version both sides speak: a disabled service, one not offered in the user's
/// country, a version range with nothing in common, or an endpoint the provider does not
/// serve fail with `TransportError.unavailable`, and nothing reaches the transport.
///
/// Install it on a client like any interceptor:
/// `UsernamesClient(transport: connection, interceptors: [CatalogueInterceptor(catalogue: catalogue, services: [Usernames.descriptor], country: "DEU")])`.
public struct CatalogueInterceptor: ClientInterceptor {
    /// The header carrying the agreed service version to the provider.
    public static let versionHeader = "Switchboard-Service-Version"

    /// The provider's catalogue.
    public let catalogue: ServiceCatalogue
    /// The user's country (ISO 3166-1 alpha-3), when known.
    public let country: String?
    let clientServices: [String: ServiceDescriptor]

    /// Checks calls of the client's `services` (generated `descriptor`s, which carry the
    /// versions this SDK speaks) against `catalogue`, for a user in `country`.
    public init(catalogue: ServiceCatalogue, services: [ServiceDescriptor], country: String?) {
        self.catalogue = catalogue
        self.country = country
        var byName: [String: ServiceDescriptor] = [:]
        for service in services { byName[service.name] = service }
        clientServices = byName
    }

    public func intercept(
        _ request: RPCRequest, next: @Sendable (RPCRequest) async throws(TransportError) -> RPCResponse
    ) async throws(TransportError) -> RPCResponse {
        let version = try catalogue.check(request.endpoint, client: clientServices[Self.serviceName(of: request.endpoint)], country: country)
        var request = request
        if let version { request.headers.add(Self.versionHeader, String(version)) }
        return try await next(request)
    }

    /// `package.Service` from `package.Service/Method`.
    static func serviceName(of endpoint: EndpointDescriptor) -> String {
        String(endpoint.rpcName.split(separator: "/", maxSplits: 1).first ?? "")
    }
}

extension ServiceCatalogue {
    /// The highest version of `client`'s service the provider also serves (`nil` when neither
    /// side states versions), or why there is none.
    public func negotiatedVersion(of client: ServiceDescriptor) -> Result<Int?, ServiceUnavailability> {
        guard let offered = service(client.name) else { return .failure(.serviceNotOffered(service: client.name)) }
        switch (client.versions, offered.versions) {
        case (nil, nil): return .success(nil)
        case let (mine?, nil): return .success(mine.upperBound)
        case let (nil, theirs?): return .success(theirs.upperBound)
        case let (mine?, theirs?):
            let low = max(mine.lowerBound, theirs.lowerBound), high = min(mine.upperBound, theirs.upperBound)
            return low <= high ? .success(high) : .failure(.noCommonVersion(service: client.name, client: mine, provider: theirs))
        }
    }

    /// Checks one call; returns the agreed service version, if versions are stated.
    public func check(_ endpoint: EndpointDescriptor, client: ServiceDescriptor?, country: String?) throws(TransportError) -> Int? {
        let name = CatalogueInterceptor.serviceName(of: endpoint)
        guard let offered = service(name) else { throw .unavailable(.serviceNotOffered(service: name)) }
        guard offered.status != .disabled else { throw .unavailable(.serviceDisabled(service: name)) }
        if let countries = offered.countries, !countries.permits(country) {
            throw .unavailable(.notOfferedInCountry(service: name, country: country))
        }
        let clientService = client ?? ServiceDescriptor(name: name, auth: endpoint.auth, versions: nil, status: .enabled, endpoints: [], events: [])
        let version: Int?
        switch negotiatedVersion(of: clientService) {
        case let .success(agreed): version = agreed
        case let .failure(reason): throw .unavailable(reason)
        }
        guard let served = offered.endpoint(rpcName: endpoint.rpcName) else {
            throw .unavailable(.endpointNotOffered(rpcName: endpoint.rpcName, version: nil))
        }
        if let version {
            let inProvider = served.versions?.contains(version) ?? true
            let inClient = endpoint.versions?.contains(version) ?? true
            guard inProvider, inClient else { throw .unavailable(.endpointNotOffered(rpcName: endpoint.rpcName, version: version)) }
        }
        return version
    }
}
