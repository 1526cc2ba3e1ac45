/// Carries requests to a server and brings responses back. Every transport implements
/// it: the WebSocket chat connection, the in-process transport, fakes, and the gRPC
/// transport, which uses ``EndpointDescriptor/rpcName`` instead of verb and path.
///
/// `Auth` states which connection the transport is, so generated clients for services
/// that need the other kind do not accept it.
public protocol RPCTransport<Auth>: Sendable {
    /// Which connection the transport is: ``Authenticated`` or ``Unauthenticated``.
    associatedtype Auth: AuthMode

    /// Sends one request. Implementations should stop promptly when the task is
    /// cancelled; ``RPCCall`` enforces deadlines and cancellation on top, unless the
    /// transport is a ``DeadlineEnforcingTransport`` that promises to do so itself.
    func send(_ request: RPCRequest) async throws(TransportError) -> RPCResponse

    /// Whether the transport enforces deadlines and cancellation itself; `true` exactly
    /// for a ``DeadlineEnforcingTransport``. A requirement, so ``RPCCall`` asks the witness
    /// table instead of casting to an existential on every call. Do not implement it: conform
    /// to ``DeadlineEnforcingTransport`` instead, or calls may go without a deadline.
    var enforcesDeadlines: Bool { get }

    /// How long a call may take when neither the call (``CallOptions/timeout``) nor the
    /// endpoint (`timeout` in the schema) says: every call has a deadline, so a server that
    /// never answers cannot hold a caller for ever. 30 s unless the transport says otherwise.
    var defaultRequestTimeout: Duration { get }

    /// The default timeout for a call to `rpcName`: ``defaultRequestTimeout`` unless the
    /// transport sends that RPC through another (``RoutingTransport``), whose default it is.
    func defaultRequestTimeout(for rpcName: String) -> Duration
}

extension RPCTransport {
    public var enforcesDeadlines: Bool { false }
    public var defaultRequestTimeout: Duration { RPCCall.defaultRequestTimeout }
    public func defaultRequestTimeout(for rpcName: String) -> Duration { defaultRequestTimeout }
}

/// A transport that enforces ``RPCRequest/deadline`` (failing with `timeout`) and task
/// cancellation (failing with `cancelled`) itself. ``RPCCall`` then calls it directly
/// instead of racing it against a timer task, which saves two task hops per call.
public protocol DeadlineEnforcingTransport<Auth>: RPCTransport {}

extension DeadlineEnforcingTransport {
    public var enforcesDeadlines: Bool { true }
}
