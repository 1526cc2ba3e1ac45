/// Connects generated clients to generated server handlers in the same process,
/// through the real codecs and routing but no network. For tests and previews.
public struct InProcessTransport<Auth: AuthMode>: RPCTransport {
    let router: RPCRouter

    /// Serves requests with `router`, as a connection of kind `Auth`.
    public init(router: RPCRouter, as auth: Auth.Type = Auth.self) { self.router = router }

    /// Serves requests with these routes, each passing through `interceptors` first.
    public init(routes: [RPCRoute], interceptors: [any ServerInterceptor] = [], as auth: Auth.Type = Auth.self) {
        self.router = RPCRouter(routes: routes, interceptors: interceptors)
    }

    public func send(_ request: RPCRequest) async throws(TransportError) -> RPCResponse {
        // Refused as the real transports refuse it (a test must not pass on such a header).
        if !request.headers.fields.isEmpty { try request.headers.checkSendable() }
        let wire = ServerRequest(verb: request.verb, path: request.path, headers: request.headers, body: request.body)
        return await router.handle(wire, auth: Auth.requirement, deadline: request.deadline)
    }
}
