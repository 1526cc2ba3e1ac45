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

    /// The method `path` names (it begins with `/`).
    init(path: String, router: RPCRouter) {
        // By bytes: a character would swallow a combining mark after "/".
        rpcName = String(decoding: path.utf8.dropFirst(), as: UTF8.self)
        if rpcName.hasSuffix(Self.eventsSuffix) {
            kind = .events(service: String(rpcName.dropLast(Self.eventsSuffix.count)))
        } else if rpcName.hasSuffix(Self.acknowledgeSuffix) {
            kind = .acknowledge
        } else {
            kind = router.messageRoute(for: rpcName).map(Kind.message) ?? .unknown
        }
    }
}
