/// Wraps every request a server's router hands to a handler: logging, metrics, checks
/// of credentials. ``ServerContext/endpoint`` says which endpoint the request matched.
/// The handler binds header fields from the request's headers as the last interceptor
/// passed them on, so an interceptor changes headers on the request.
/// Requests that match no route (404, 405) never reach a handler, and no interceptor sees them.
public protocol ServerInterceptor: Sendable {
    /// Handles one request; `next` passes it on to the next interceptor, and after the last
    /// one to the endpoint's handler. Answering without calling `next` refuses the request.
    func intercept(
        _ request: ServerRequest, context: ServerContext,
        next: @Sendable (ServerRequest, ServerContext) async -> RPCResponse
    ) async -> RPCResponse
}
