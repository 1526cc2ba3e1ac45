/// The scripted behaviour and call record of one endpoint of a generated mock service.
///
/// Calls first take the next queued result, then fall back to the stub, and fail with
/// ``TransportError/notStubbed(rpcName:)`` when there is neither. Every call is
/// recorded with its decoded request and its ``CallOptions``. As with a real client, a call
/// from a cancelled task fails with ``TransportError/cancelled`` without being recorded, and
/// cancelling a call whose stub is still working ends it with `cancelled` at once; a call
/// with a timeout in its ``CallOptions`` whose stub outlasts it ends with
/// ``TransportError/timeout``, as a real call does. Generated mocks call
/// ``invoke(_:options:endpoint:path:)``, which also refuses what the real client refuses
/// before sending (an empty or dot-segment path parameter, headers no transport can send, no
/// time left), without recording the call, and applies the endpoint's timeout when the caller
/// gives none. Safe to use from any task.
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

    /// Records a call and answers it, with no checks and only the caller's timeout (for a
    /// mock written by hand).
    public func invoke(_ request: Request, options: CallOptions = CallOptions()) async -> RequestResult<Response, EndpointError> {
        await answered(request, options: options, timeout: options.timeout.map { min($0, RPCCall.maximumTimeout) })
    }

    /// Records a call to `endpoint` at `path` (as the generated client would build it) and
    /// answers it; generated mocks call this. A call the real client would refuse before
    /// sending fails the same way, unrecorded: a parameter that makes `path` empty in a
    /// segment or a dot-segment, or `options.headers` no transport sends (a line break in a
    /// value, say). Without a timeout in `options` the endpoint's own applies, else
    /// ``RPCCall/defaultRequestTimeout``, as a real call's: a stub that never answers ends.
    public func invoke(_ request: Request, options: CallOptions = CallOptions(), endpoint: EndpointDescriptor, path: String) async -> RequestResult<Response, EndpointError> {
        var problem = RPCCall.pathProblem(path, template: endpoint.pathTemplate)
        if problem == nil, !options.headers.fields.isEmpty {
            do throws(TransportError) { try options.headers.checkSendable() } catch { problem = error }
        }
        // As `RPCCall.send` takes it: cut to `maximumTimeout`, and none left is a timeout, unsent.
        let timeout = min(options.timeout ?? endpoint.defaultTimeout ?? RPCCall.defaultRequestTimeout, RPCCall.maximumTimeout)
        if problem == nil, timeout <= .zero { problem = .timeout }
        if let problem {
            options.responseCapture?.reset()
            return .failure(problem)
        }
        return await answered(request, options: options, timeout: timeout)
    }

    private func answered(_ request: Request, options: CallOptions, timeout: Duration?) async -> RequestResult<Response, EndpointError> {
        let result = await answer(request, options: options, timeout: timeout)
        if let capture = options.responseCapture {
            switch result {
            case .success: capture.record(status: 200, headers: state.withLock { $0.responseHeaders })
            // A generated error says the status it travels with, as the server's response would.
            case let .nonSuccess(error):
                capture.record(status: (error as? any EndpointErrorMapping)?.response(encoding: .protobuf).status, headers: state.withLock { $0.responseHeaders })
            case .failure: capture.reset()
            }
        }
        return result
    }

    private func answer(_ request: Request, options: CallOptions, timeout: Duration?) async -> RequestResult<Response, EndpointError> {
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
        let timer = timeout.map { timeout in
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
