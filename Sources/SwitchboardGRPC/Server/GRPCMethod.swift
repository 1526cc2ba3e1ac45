import SwitchboardRuntime

/// What a gRPC request's `:path` names on a server: the RPC name and what serves it.
struct GRPCMethod: Sendable {
    /// How the server answers a call to the method.
    enum Kind: Sendable {
        /// A whole-message route of the router.
        case message(RPCRouter.MessageRoute)
        /// A service's event stream (`<service>/SwitchboardEvents`).
        case events(service: String)
        /// An acknowledgement of a pushed event (`<service>/SwitchboardAcknowledge`).
        case acknowledge
        /// A service's event stream or acknowledgement, for a service the server was told has
        /// no events (it is not in ``GRPCServerOptions/eventServices``): UNIMPLEMENTED.
        case noEvents(service: String)
        /// Nothing serves it: UNIMPLEMENTED.
        case unknown
    }

    /// The path without its leading `/`: `package.Service/Method`.
    let rpcName: String
    let kind: Kind

    /// The endpoint a whole-message method serves.
    var endpoint: EndpointDescriptor? {
        if case let .message(route) = kind { return route.endpoint }
        return nil
    }

    /// The two methods every service with events has over gRPC (see `GRPCPush`).
    static let eventsSuffix = "/SwitchboardEvents"
    static let acknowledgeSuffix = "/SwitchboardAcknowledge"

    /// The method `path` names (it begins with `/`). With `eventServices` (the server's
    /// ``GRPCServerOptions/eventServices``), the event and acknowledgement methods of a service
    /// not in it are ``Kind/noEvents(service:)``; without, every service's are served.
    init(path: String, router: RPCRouter, eventServices: Set<String>? = nil) {
        // By bytes: a character would swallow a combining mark after "/".
        rpcName = String(decoding: path.utf8.dropFirst(), as: UTF8.self)
        if rpcName.hasSuffix(Self.eventsSuffix) {
            let service = String(rpcName.dropLast(Self.eventsSuffix.count))
            if let eventServices, !eventServices.contains(service) {
                kind = .noEvents(service: service)
            } else {
                kind = .events(service: service)
            }
        } else if rpcName.hasSuffix(Self.acknowledgeSuffix) {
            let service = String(rpcName.dropLast(Self.acknowledgeSuffix.count))
            if let eventServices, !eventServices.contains(service) {
                kind = .noEvents(service: service)
            } else {
                kind = .acknowledge
            }
        } else {
            kind = router.messageRoute(for: rpcName).map(Kind.message) ?? .unknown
        }
    }
}
