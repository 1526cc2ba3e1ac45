import Foundation

/// One route: an endpoint's verb and path template, and the function that serves it.
public struct RPCRoute: Sendable {
    /// The endpoint served, whose verb and path template the route matches.
    public let endpoint: EndpointDescriptor
    let template: PathTemplate
    let handler: @Sendable (ServerRequest, ServerContext) async -> RPCResponse
    /// Serves the whole request message in protobuf (gRPC), if the route can.
    let messageHandler: (@Sendable (Data, ServerContext) async -> RPCResponse)?

    /// Creates a route; generated handler extensions build these.
    public init(endpoint: EndpointDescriptor, handler: @escaping @Sendable (ServerRequest, ServerContext) async -> RPCResponse) {
        self.endpoint = endpoint
        self.template = PathTemplate(endpoint.pathTemplate)
        self.handler = handler
        messageHandler = nil
    }

    /// Creates a route that also serves the whole request message, as gRPC sends it:
    /// `message` decodes it (binary protobuf) and answers in protobuf.
    public init(endpoint: EndpointDescriptor, message: @escaping @Sendable (Data, ServerContext) async -> RPCResponse,
                handler: @escaping @Sendable (ServerRequest, ServerContext) async -> RPCResponse) {
        self.endpoint = endpoint
        self.template = PathTemplate(endpoint.pathTemplate)
        self.handler = handler
        messageHandler = message
    }
}

/// Routes requests by verb and path template to generated server handlers. The
/// in-process transport and the mock chat server both serve through it.
public final class RPCRouter: Sendable {
    let routes: [RPCRoute]
    /// Which routes' templates a path matches, without trying each; `nil` for a router of
    /// at most ``indexedRouteCount`` routes, where trying each costs less than the walk.
    let pathIndex: PathRouteIndex?
    /// Routers with more routes than this find them through an index. Measured in a call's
    /// profile (docs/performance.md, "Routing"): the walk with the route's parameters about
    /// 1,900 instructions, trying one template about 1,200, each further one 600 or more.
    static let indexedRouteCount = 2
    /// Each route's handler behind the interceptors, in the order of `routes`.
    let handlers: [@Sendable (ServerRequest, ServerContext) async -> RPCResponse]
    /// Whole-message handlers behind the interceptors, by RPC name.
    let messageHandlers: [String: MessageRoute]

    /// A route that serves whole request messages by RPC name (a gRPC server's unary
    /// method), found once with ``messageRoute(for:)`` and served with
    /// ``handleMessage(_:body:headers:auth:deadline:)`` as often as it is called: a server that keeps
    /// it does not look the name up on every call.
    public struct MessageRoute: Sendable {
        /// The endpoint the route serves.
        public let endpoint: EndpointDescriptor
        let serve: @Sendable (ServerRequest, ServerContext) async -> RPCResponse
    }

    /// Creates a router over `routes`; every request a route serves passes through
    /// `interceptors` first, outermost first. Routes are tried in order: where two serve
    /// the same verb and path, or the same RPC name, the first serves both ways.
    public init(routes: [RPCRoute], interceptors: [any ServerInterceptor] = []) {
        self.routes = routes
        pathIndex = routes.count > Self.indexedRouteCount ? PathRouteIndex(routes.map(\.template)) : nil
        // A handler's response headers join its answer inside the interceptors, so they see
        // the whole response, and again once the answer leaves them, with what they added
        // (or what one that answered by itself added). Without interceptors only the second
        // is needed, which saves an async frame on every call.
        handlers = routes.map { route in
            guard !interceptors.isEmpty else { return route.handler }
            let handler = route.handler
            return InterceptorChain.server(interceptors) { request, context in
                var response = await handler(request, context)
                context.responseHeaders.apply(to: &response)
                return response
            }
        }
        var byName: [String: MessageRoute] = [:]
        for route in routes {
            guard let serve = route.messageHandler, byName[route.endpoint.rpcName] == nil else { continue }
            let inner: @Sendable (ServerRequest, ServerContext) async -> RPCResponse = { request, context in
                var response = await serve(request.body ?? Data(), context)
                context.responseHeaders.apply(to: &response)
                return response
            }
            byName[route.endpoint.rpcName] = MessageRoute(endpoint: route.endpoint, serve: InterceptorChain.server(interceptors, around: inner))
        }
        messageHandlers = byName
    }

    /// Serves one whole request message by RPC name, as a gRPC server receives it; the
    /// interceptors see it as `POST /package.Service/Method`. 404 for an RPC name no route
    /// serves this way; 401 or 403 when the call's `auth` is not the endpoint's, as for paths.
    /// `deadline` is the handler's ``ServerContext/deadline``.
    public func handleMessage(rpcName: String, body: Data, headers: RPCHeaders, auth: AuthRequirement,
                              deadline: ContinuousClock.Instant? = nil) async -> RPCResponse {
        guard let route = messageHandlers[rpcName] else { return RPCResponse(status: 404, message: "Not Found") }
        return await handleMessage(route, body: body, headers: headers, auth: auth, deadline: deadline)
    }

    /// Serves one whole request message through `route`, as
    /// ``handleMessage(rpcName:body:headers:auth:deadline:)`` does. The route must be this router's
    /// (from its ``messageRoute(for:)``): it carries its router's interceptors with it.
    public func handleMessage(_ route: MessageRoute, body: Data, headers: RPCHeaders, auth: AuthRequirement,
                              deadline: ContinuousClock.Instant? = nil) async -> RPCResponse {
        guard route.endpoint.auth == auth else {
            return auth == .none ? RPCResponse(status: 401, message: "Unauthorized") : RPCResponse(status: 403, message: "Forbidden")
        }
        let request = ServerRequest(verb: "POST", path: route.endpoint.grpcPath, headers: headers, body: body)
        // `PathParameters()`, not `[:]`: the literal picked the dictionary overload, which
        // sorts (and allocates) on every call.
        let context = ServerContext(auth: auth, headers: headers, pathParameters: PathParameters(), query: [], endpoint: route.endpoint,
                                    deadline: deadline)
        var response = await route.serve(request, context)
        context.responseHeaders.apply(to: &response)
        return response
    }

    /// The endpoint a whole-message call to `rpcName` reaches, if any route serves it so.
    public func messageEndpoint(for rpcName: String) -> EndpointDescriptor? { messageHandlers[rpcName]?.endpoint }

    /// The route a whole-message call to `rpcName` reaches, if any, to serve with
    /// ``handleMessage(_:body:headers:auth:deadline:)``.
    public func messageRoute(for rpcName: String) -> MessageRoute? { messageHandlers[rpcName] }

    /// The endpoints whose routes serve `verb path` (the query ignored), for either kind of
    /// connection: for transports that must check which endpoint a request would reach.
    public func endpoints(verb: String, path: String) -> [EndpointDescriptor] {
        let bare = ServerRequest(verb: verb, path: path).pathWithoutQuery
        // The index finds exactly the matching templates; without one, each is tried.
        if let pathIndex { return pathIndex.candidates(for: bare).map { routes[$0].endpoint }.filter { $0.verb == verb } }
        return routes.filter { $0.endpoint.verb == verb && $0.template.parameters(matching: bare) != nil }.map(\.endpoint)
    }

    /// Serves one request: 404 for an unknown path, 405 for a known path with another
    /// verb, 401 when an account-only endpoint is called without an account, and 403
    /// when an unauthenticated-only endpoint is called on the authenticated connection.
    /// `deadline` is the handler's ``ServerContext/deadline``, if the transport carries one.
    public func handle(_ request: ServerRequest, auth: AuthRequirement, deadline: ContinuousClock.Instant? = nil) async -> RPCResponse {
        // One scan for both halves (each was a scan of its own, per request).
        let (path, queryText) = request.splitPath
        var pathMatched = false
        var wrongConnection = false
        let (candidates, onlyParameters) = pathIndex?.match(path) ?? (.all(count: routes.count), nil)
        for position in candidates {
            let route = routes[position]
            guard let parameters = onlyParameters ?? route.template.parameters(matching: path) else { continue }
            pathMatched = true
            guard route.endpoint.verb == request.verb else { continue }
            // A route may exist for both connections; serve the one for this connection.
            if route.endpoint.auth != auth {
                wrongConnection = true
                continue
            }
            guard let query = queryText.isEmpty ? [] : PathEncoding.parseQuery(queryText) else {
                return RPCResponse(status: 400, body: Data("malformed query string".utf8), message: "Bad Request")
            }
            let context = ServerContext(auth: auth, headers: request.headers, pathParameters: parameters, query: query, endpoint: route.endpoint,
                                        deadline: deadline)
            var response = await handlers[position](request, context)
            context.responseHeaders.apply(to: &response)
            return response
        }
        if wrongConnection {
            return auth == .none ? RPCResponse(status: 401, message: "Unauthorized") : RPCResponse(status: 403, message: "Forbidden")
        }
        return pathMatched ? RPCResponse(status: 405, message: "Method Not Allowed") : RPCResponse(status: 404, message: "Not Found")
    }

    /// The endpoints this router serves.
    public var endpoints: [EndpointDescriptor] { routes.map(\.endpoint) }
}
