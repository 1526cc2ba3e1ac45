/// The scripted behaviour and call record of one endpoint of a generated mock service.
///
/// Calls first take the next queued result, then fall back to the stub, and fail with
/// ``TransportError/notStubbed(rpcName:)`` when there is neither. Every call is
/// recorded with its decoded request and its ``CallOptions``. As with a real client, a call
/// from a cancelled task fails with ``TransportError/cancelled`` without being recorded, and
/// cancelling a call whose stub is still working ends it with `cancelled` at once; a call
/// with a timeout in its ``CallOptions`` whose stub outlasts it ends with
/// ``TransportError/timeout``, as a real call does (the endpoint's own timeout is the
/// generated client's to apply, not a mock's). Safe to use from any task.
public final class MockEndpoint<Request: Sendable, Response: Sendable, EndpointError: Error & Sendable>: Sendable {
    /// The endpoint's RPC name, used in "not stubbed" failures.
    public let rpcName: String
    private let state = Locked(State())

    struct State {
        var stub: (@Sendable (Request) async -> RequestResult<Response, EndpointError>)?
        var queue: [RequestResult<Response, EndpointError>] = []
        var calls: [Request] = []
        var options: [CallOptions] = []
        var responseHeaders = RPCHeaders()
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

    /// Headers every answered call puts in its caller's ``ResponseCapture`` (with status 200
    /// for a success), as a server's response headers would.
    public func setResponseHeaders(_ headers: RPCHeaders) {
        state.withLock { $0.responseHeaders = headers }
    }

    /// Queues results answered in order, before the stub.
    public func enqueue(_ results: RequestResult<Response, EndpointError>...) {
        state.withLock { $0.queue.append(contentsOf: results) }
    }

    /// The requests received so far, in order.
    public var calls: [Request] { state.withLock { $0.calls } }

    /// The options of each call received so far, in the order of ``calls``: the headers,
    /// and timeout a caller passed.
    public var callOptions: [CallOptions] { state.withLock { $0.options } }

    /// How many calls were received.
    public var callCount: Int { state.withLock { $0.calls.count } }

    /// Forgets the stub, the queue and the recorded calls.
    public func reset() { state.withLock { $0 = State() } }

    /// Records a call and answers it; generated mocks call this.
    public func invoke(_ request: Request, options: CallOptions = CallOptions()) async -> RequestResult<Response, EndpointError> {
        let result = await answer(request, options: options)
        if let capture = options.responseCapture {
            switch result {
            case .success: capture.record(status: 200, headers: state.withLock { $0.responseHeaders })
            // A scripted error knows no status of its own here.
            case .nonSuccess: capture.record(status: nil, headers: state.withLock { $0.responseHeaders })
            case .failure: capture.reset()
            }
        }
        return result
    }

    private func answer(_ request: Request, options: CallOptions) async -> RequestResult<Response, EndpointError> {
        if Task.isCancelled { return .failure(.cancelled) }
        let (queued, stub): (RequestResult<Response, EndpointError>?, (@Sendable (Request) async -> RequestResult<Response, EndpointError>)?) = state.withLock { state in
            state.calls.append(request)
            state.options.append(options)
            return (state.queue.isEmpty ? nil : state.queue.removeFirst(), state.stub)
        }
        if let queued { return queued }
        guard let stub else { return .failure(.notStubbed(rpcName: rpcName)) }
        // A stub that waits (on a gate, to show a loading state) ends with the caller's
        // cancellation, as a real call does.
        let answer = FirstAnswer<RequestResult<Response, EndpointError>>()
        let running = Task { _ = answer.offer(await stub(request)) }
        // A stub slower than the caller's timeout (a slow server in a test) times out.
        let timer = options.timeout.map { timeout in
            Task {
                try? await Task.sleep(for: timeout)
                if !Task.isCancelled, answer.offer(.failure(.timeout)) { running.cancel() }
            }
        }
        let result = await withTaskCancellationHandler {
            await answer.value
        } onCancel: {
            _ = answer.offer(.failure(.cancelled))
            running.cancel()
        }
        timer?.cancel()
        return result
    }
}
