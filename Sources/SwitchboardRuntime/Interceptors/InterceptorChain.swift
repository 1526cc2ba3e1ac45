/// Builds handlers that run through interceptor chains, outermost first.
public enum InterceptorChain {
    /// `handler` behind `interceptors`: each push passes through them in order.
    public static func push(
        _ interceptors: [any PushInterceptor], around handler: @escaping @Sendable (ServerRequest) async -> EventOutcome
    ) -> @Sendable (ServerRequest) async -> EventOutcome {
        guard !interceptors.isEmpty else { return handler }
        return { push in await Self.push(push, through: interceptors[...], handler: handler) }
    }

    private static func push(
        _ push: ServerRequest, through interceptors: ArraySlice<any PushInterceptor>,
        handler: @escaping @Sendable (ServerRequest) async -> EventOutcome
    ) async -> EventOutcome {
        guard let first = interceptors.first else { return await handler(push) }
        let rest = interceptors.dropFirst()
        return await first.intercept(push) { push in await Self.push(push, through: rest, handler: handler) }
    }

    /// `handler` behind `interceptors`: each request passes through them in order.
    public static func server(
        _ interceptors: [any ServerInterceptor],
        around handler: @escaping @Sendable (ServerRequest, ServerContext) async -> RPCResponse
    ) -> @Sendable (ServerRequest, ServerContext) async -> RPCResponse {
        guard !interceptors.isEmpty else { return handler }
        return { request, context in await Self.serve(request, context, through: interceptors[...], handler: handler) }
    }

    private static func serve(
        _ request: ServerRequest, _ context: ServerContext, through interceptors: ArraySlice<any ServerInterceptor>,
        handler: @escaping @Sendable (ServerRequest, ServerContext) async -> RPCResponse
    ) async -> RPCResponse {
        guard let first = interceptors.first else {
            // Handlers bind headers from the context: the request's, as the interceptors left them.
            var context = context
            context.headers = request.headers
            return await handler(request, context)
        }
        let rest = interceptors.dropFirst()
        return await first.intercept(request, context: context) { request, context in
            await Self.serve(request, context, through: rest, handler: handler)
        }
    }
}
