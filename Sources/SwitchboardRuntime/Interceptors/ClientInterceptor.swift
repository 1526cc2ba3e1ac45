/// Wraps every call a client makes: logging, metrics, credentials, retries.
///
/// An interceptor sees the request as the transport will (path, headers with the call's
/// own added, encoded body, deadline) and calls `next` to pass it on, zero or more times.
/// Over gRPC the request travels as its message (``RPCRequest/message``) with the headers as
/// metadata: header changes reach the server (header-bound fields included), changes to
/// `path` or `body` do not.
/// To refuse a call without sending it, answer for the transport (a status the endpoint
/// declares, such as a 401, reaches the caller as its typed error) or throw a
/// ``TransportError`` (``TransportError/invalidRequest(_:)`` for a call that must not go out,
/// say without credentials yet), which reaches the caller as the result's failure.
/// It runs inside the call's deadline: ``RPCCall`` stops waiting at the deadline however
/// long an interceptor takes, so one that waits (a retry) should check
/// ``RPCRequest/deadline`` first rather than sleep past it.
public protocol ClientInterceptor: Sendable {
    /// Handles one call; `next` sends the request on to the next interceptor, and after
    /// the last one to the transport.
    func intercept(
        _ request: RPCRequest,
        next: @Sendable (RPCRequest) async throws(TransportError) -> RPCResponse
    ) async throws(TransportError) -> RPCResponse
}

/// A transport whose calls pass through interceptors, in order, before reaching `base`:
/// the first interceptor sees each call first and its answer last.
public struct InterceptedTransport<Auth: AuthMode>: RPCTransport {
    /// The transport calls reach after the last interceptor.
    public let base: any RPCTransport<Auth>
    /// The chain, outermost first.
    public let interceptors: [any ClientInterceptor]

    /// Sends every call through `interceptors`, then `base`.
    public init(_ base: any RPCTransport<Auth>, interceptors: [any ClientInterceptor]) {
        self.base = base
        self.interceptors = interceptors
    }

    public func send(_ request: RPCRequest) async throws(TransportError) -> RPCResponse {
        try await send(request, from: 0)
    }

    private func send(_ request: RPCRequest, from index: Int) async throws(TransportError) -> RPCResponse {
        guard index < interceptors.count else { return try await base.send(request) }
        return try await interceptors[index].intercept(request) { (request: RPCRequest) async throws(TransportError) -> RPCResponse in
            try await self.send(request, from: index + 1)
        }
    }

    /// The base transport's, for calls that set no timeout.
    public var defaultRequestTimeout: Duration { base.defaultRequestTimeout }

    /// The base transport's for `rpcName` (a routing base may send it elsewhere).
    public func defaultRequestTimeout(for rpcName: String) -> Duration { base.defaultRequestTimeout(for: rpcName) }
}

extension RPCTransport {
    /// This transport with `interceptors` around every call, the first outermost.
    public func intercepted(by interceptors: [any ClientInterceptor]) -> InterceptedTransport<Auth> {
        InterceptedTransport(self, interceptors: interceptors)
    }
}
