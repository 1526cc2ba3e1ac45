/// Sends each endpoint through one of several transports, chosen at run time by RPC
/// name. This is how a gRPC-style transport takes over endpoint by endpoint while the
/// rest stay on the WebSocket, as libsignal migrates its chat API.
///
/// It enforces deadlines for the transports it routes to: one that enforces its own (the
/// chat connection, gRPC) is called directly, so routing costs no extra tasks per call; any
/// other is raced against the deadline here, as ``RPCCall`` would.
///
/// A call that sets no timeout gets the default of the transport its RPC name routes to as
/// the call starts (``defaultRequestTimeout(for:)``); the route is read again to send it, so a
/// call started just as its route changes goes through the new transport with the old one's
/// default timeout. Both are the app's own settings, so the table is not locked across the two.
public final class RoutingTransport<Auth: AuthMode>: DeadlineEnforcingTransport, Sendable {
    private let fallback: (any RPCTransport<Auth>)?
    private let overrides: Locked<[String: any RPCTransport<Auth>]>

    /// Routes every RPC name without an override to `fallback`; with no fallback,
    /// such calls fail with ``TransportError/unroutable(rpcName:)``.
    public init(default fallback: (any RPCTransport<Auth>)?, overrides: [String: any RPCTransport<Auth>] = [:]) {
        self.fallback = fallback
        self.overrides = Locked(overrides)
    }

    /// Sends `rpcName` (such as `signal.chat.Usernames/LookUpUsernameHash`) through `transport`
    /// from now on; `nil` returns it to the default.
    public func route(_ rpcName: String, to transport: (any RPCTransport<Auth>)?) {
        overrides.withLock { $0[rpcName] = transport }
    }

    /// Sends `endpoint` (such as `Usernames.lookUpUsernameHash`) through `transport` from now
    /// on; `nil` returns it to the default. Prefer it to the string form: a misspelt name
    /// routes nothing and says nothing, a descriptor cannot be misspelt.
    public func route(_ endpoint: EndpointDescriptor, to transport: (any RPCTransport<Auth>)?) {
        route(endpoint.rpcName, to: transport)
    }

    /// Sends every endpoint of `service` through `transport` from now on (`nil`: back to the default).
    public func route(_ service: ServiceDescriptor, to transport: (any RPCTransport<Auth>)?) {
        overrides.withLock { overrides in
            for endpoint in service.endpoints { overrides[endpoint.rpcName] = transport }
        }
    }

    /// The transport a call to `rpcName` would use.
    public func transport(for rpcName: String) -> (any RPCTransport<Auth>)? {
        overrides.withLock { $0[rpcName] } ?? fallback
    }

    /// The default transport's, for calls that set no timeout.
    public var defaultRequestTimeout: Duration { fallback?.defaultRequestTimeout ?? RPCCall.defaultRequestTimeout }

    /// The default of the transport `rpcName` goes through now.
    public func defaultRequestTimeout(for rpcName: String) -> Duration {
        transport(for: rpcName)?.defaultRequestTimeout(for: rpcName) ?? RPCCall.defaultRequestTimeout
    }

    public func send(_ request: RPCRequest) async throws(TransportError) -> RPCResponse {
        guard let transport = transport(for: request.endpoint.rpcName) else {
            throw .unroutable(rpcName: request.endpoint.rpcName)
        }
        if transport.enforcesDeadlines { return try await transport.send(request) }
        if Task.isCancelled { throw .cancelled }
        return try await RPCCall.race(request, over: transport, timeout: request.deadline.map { $0 - .now }).get()
    }
}
