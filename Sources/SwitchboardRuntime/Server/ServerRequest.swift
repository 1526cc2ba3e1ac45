import Foundation

/// A request as a server receives it: only what travels on the wire.
public struct ServerRequest: Sendable {
    /// The HTTP-like verb, such as `GET` or `PUT`.
    public var verb: String
    /// The path with its query string.
    public var path: String
    /// The request's headers.
    public var headers: RPCHeaders
    /// The encoded body, or `nil` when the request has none.
    public var body: Data?

    /// Creates a request.
    public init(verb: String, path: String, headers: RPCHeaders = [:], body: Data? = nil) {
        self.verb = verb
        self.path = path
        self.headers = headers
        self.body = body
    }

    /// The path without its query string.
    public var pathWithoutQuery: Substring { splitPath.path }

    /// The query string, or an empty one.
    public var query: Substring { splitPath.query }

    /// The path and the query string, split at the first `?` in one scan.
    var splitPath: (path: Substring, query: Substring) {
        guard let mark = path.firstIndex(ofASCII: UInt8(ascii: "?")) else { return (path[...], "") }
        return (path[..<mark], path[path.utf8.index(after: mark)...])
    }
}

/// What a handler knows about the request beyond its typed message.
public struct ServerContext: Sendable {
    /// The connection's authentication.
    public var auth: AuthRequirement
    /// The request's headers.
    public var headers: RPCHeaders
    /// Path parameters by name, still encoded.
    public var pathParameters: PathParameters
    /// Decoded query parameters, in order.
    public var query: [(name: String, value: String)]
    /// The endpoint the request matched; `nil` for a context made outside a router.
    public var endpoint: EndpointDescriptor?
    /// Headers the handler adds to its response (an `ETag`, a request id); a router sends
    /// them with the answer.
    public let responseHeaders: ServerResponseHeaders
    /// When the server stops waiting for this handler: over gRPC, the caller's `grpc-timeout`
    /// (or the server's `defaultCallTimeout` without one), bounded by its `maximumCallTimeout`;
    /// in process, the call's own deadline; `nil` where the transport carries none (the Signal
    /// WebSocket envelope has no field for it). Over gRPC the handler's task is cancelled then; a
    /// handler that calls other services on the request's behalf gives them what remains.
    public var deadline: ContinuousClock.Instant?

    /// Creates a context.
    public init(
        auth: AuthRequirement, headers: RPCHeaders = [:], pathParameters: PathParameters = [:],
        query: [(name: String, value: String)] = [], endpoint: EndpointDescriptor? = nil, responseHeaders: ServerResponseHeaders = ServerResponseHeaders(),
        deadline: ContinuousClock.Instant? = nil
    ) {
        self.auth = auth
        self.headers = headers
        self.pathParameters = pathParameters
        self.query = query
        self.endpoint = endpoint
        self.responseHeaders = responseHeaders
        self.deadline = deadline
    }

    /// Creates a context whose path parameters come from a dictionary.
    public init(
        auth: AuthRequirement, headers: RPCHeaders = [:], pathParameters: [String: String],
        query: [(name: String, value: String)] = [], endpoint: EndpointDescriptor? = nil, responseHeaders: ServerResponseHeaders = ServerResponseHeaders(),
        deadline: ContinuousClock.Instant? = nil
    ) {
        self.init(auth: auth, headers: headers, pathParameters: PathParameters(pathParameters), query: query, endpoint: endpoint,
                  responseHeaders: responseHeaders, deadline: deadline)
    }

    /// The time left before ``deadline`` (zero once it has passed); `nil` without one.
    public var timeRemaining: Duration? {
        deadline.map { max(.zero, $0 - ContinuousClock.now) }
    }

    /// The last value of query parameter `name`.
    public func queryValue(_ name: String) -> String? { query.last { $0.name == name }?.value }

    /// Every value of query parameter `name`, for list fields.
    public func queryValues(_ name: String) -> [String] { query.filter { $0.name == name }.map(\.value) }
}

/// Why a server could not turn a request into the endpoint's message; answered with 400.
public struct RequestBindingError: Error, Sendable, Hashable, CustomStringConvertible {
    public let description: String

    /// Creates an error explaining which part of the request was malformed.
    public init(_ description: String) { self.description = description }
}
