/// The scripted behaviour and call record of one endpoint of a generated mock service.
///
/// Calls first take the next queued result, then fall back to the stub, and fail with
/// ``TransportError/notStubbed(rpcName:)`` when there is neither. Every call is
/// recorded with its decoded request. Safe to use from any task.
public final class MockEndpoint<Request: Sendable, Response: Sendable, EndpointError: Error & Sendable>: Sendable {
    /// The endpoint's RPC name, used in "not stubbed" failures.
    public let rpcName: String
    private let state = Locked(State())

    struct State {
        var stub: (@Sendable (Request) async -> RequestResult<Response, EndpointError>)?
        var queue: [RequestResult<Response, EndpointError>] = []
        var calls: [Request] = []
    }

    /// Creates an endpoint mock named `rpcName`.
    public init(rpcName: String) { self.rpcName = rpcName }

    /// Answers every call that finds the queue empty with `body`.
    public func stub(_ body: @escaping @Sendable (Request) async -> RequestResult<Response, EndpointError>) {
        state.withLock { $0.stub = body }
    }

    /// Answers every call that finds the queue empty with `result`.
    public func stub(returning result: RequestResult<Response, EndpointError>) {
        state.withLock { $0.stub = { _ in result } }
    }

    /// Queues results answered in order, before the stub.
    public func enqueue(_ results: RequestResult<Response, EndpointError>...) {
        state.withLock { $0.queue.append(contentsOf: results) }
    }

    /// The requests received so far, in order.
    public var calls: [Request] { state.withLock { $0.calls } }

    /// How many calls were received.
    public var callCount: Int { state.withLock { $0.calls.count } }

    /// Forgets the stub, the queue and the recorded calls.
    public func reset() { state.withLock { $0 = State() } }

    /// Records a call and answers it; generated mocks call this.
    public func invoke(_ request: Request) async -> RequestResult<Response, EndpointError> {
        let (queued, stub): (RequestResult<Response, EndpointError>?, (@Sendable (Request) async -> RequestResult<Response, EndpointError>)?) = state.withLock { state in
            state.calls.append(request)
            return (state.queue.isEmpty ? nil : state.queue.removeFirst(), state.stub)
        }
        if let queued { return queued }
        if let stub { return await stub(request) }
        return .failure(.notStubbed(rpcName: rpcName))
    }
}
