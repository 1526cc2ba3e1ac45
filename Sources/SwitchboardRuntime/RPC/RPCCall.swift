import Foundation

/// Runs one call over a transport with the endpoint's deadline and the task's
/// cancellation, then turns the response into a typed ``RequestResult``.
///
/// The send runs in its own task and the caller waits on whichever finishes first:
/// the response, the deadline, or cancellation. So a transport that ignores
/// cancellation can delay its own cleanup, but never the caller.
public enum RPCCall {
    /// The deadline of a call that nothing else bounds: 30 s, as long as the keepalive
    /// interval of Signal's clients, so a lost answer is noticed about when a dead connection is.
    public static let defaultRequestTimeout: Duration = .seconds(30)

    /// Sends `request` and waits at most for the call's timeout: the call's own
    /// (``CallOptions/timeout``), else the endpoint's, else the transport's default
    /// (``RPCTransport/defaultRequestTimeout``); a deadline the request already carries is
    /// kept when it is earlier. A path with a dot-segment (a path parameter of `.` or
    /// `..`, see ``PathEncoding/dotSegment(in:)``) or an empty path parameter (see
    /// ``PathEncoding/emptyParameter(in:template:)``) fails with
    /// ``TransportError/invalidRequest(_:)`` without being sent. Inlinable, so a transport that enforces
    /// deadlines itself (the chat connection) is one async call away from the caller.
    @inlinable
    public static func send<Auth: AuthMode>(
        _ request: consuming RPCRequest, over transport: any RPCTransport<Auth>, options: CallOptions
    ) async -> Result<RPCResponse, TransportError> {
        if let problem = pathProblem(request.path, template: request.endpoint.pathTemplate) {
            options.responseCapture?.reset()
            return .failure(problem)
        }
        // Consuming: the caller's request (a generated client's, built for this call) is
        // changed in place rather than copied, a copy and a destroy of every field less.
        // A name the caller gives replaces the schema-bound values of that name (its own
        // `Idempotency-Key`, say): two values would leave the server to pick one.
        var given = RPCHeaders()
        for header in options.headers {
            if given[header.name] == nil {
                request.headers.set(header.name, header.value)
                given.add(header.name, "")
            } else {
                request.headers.add(header.name, header.value)
            }
        }
        // The transport records metadata that came with an error into a capture of the call's
        // own, copied to the caller's once the call is over: a transport still running after a
        // timeout or cancellation (one racing in a task of its own) writes where nobody reads.
        let transportCapture = options.responseCapture.map { _ in ResponseCapture() }
        request.responseCapture = transportCapture
        // At most ``maximumTimeout``: a sleep for `Int64.max` seconds traps converting its
        // deadline (found by review), and "no timeout" is a natural way to ask for one.
        let timeout = min(options.timeout ?? request.endpoint.defaultTimeout ?? transport.defaultRequestTimeout(for: request.endpoint.rpcName),
                          maximumTimeout)
        // An outer deadline the caller set on the request is never extended.
        let now = ContinuousClock.now
        var deadline = now.advanced(by: timeout)
        if let given = request.deadline, given < deadline { deadline = given }
        request.deadline = deadline
        if Task.isCancelled {
            options.responseCapture?.reset()
            return .failure(.cancelled)
        }
        // Out of time already (a handler passing on `timeRemaining` once it is zero): not
        // sent, as a gRPC client does not send it, rather than run on the server for a
        // caller that has stopped waiting (found by review).
        if deadline <= now {
            options.responseCapture?.reset()
            return .failure(.timeout)
        }
        let outcome: Result<RPCResponse, TransportError>
        if transport.enforcesDeadlines {
            do throws(TransportError) {
                outcome = .success(try await transport.send(request))
            } catch {
                outcome = .failure(error)
            }
        } else {
            outcome = await race(request, over: transport, timeout: now.duration(to: deadline))
        }
        if let capture = options.responseCapture {
            if case let .success(response) = outcome {
                capture.record(response)
            } else if let transportCapture {
                capture.record(status: nil, headers: transportCapture.headers, trailers: transportCapture.trailers)
            }
        }
        return outcome
    }

    /// The longest timeout a call is given: about 68 years (`Int32.max` seconds); a longer one
    /// (`Duration.seconds(Int64.max)` for "never") is cut to it.
    public static let maximumTimeout = Duration.seconds(Int(Int32.max))

    /// Runs the send in a task of its own, racing the deadline and cancellation, for a
    /// transport that does not enforce deadlines itself.
    @usableFromInline
    static func race<Auth: AuthMode>(
        _ request: RPCRequest, over transport: any RPCTransport<Auth>, timeout: Duration?
    ) async -> Result<RPCResponse, TransportError> {
        let race = Race()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<RPCResponse, TransportError>, Never>) in
                race.start(continuation)
                let prepared = request
                let sender = Task {
                    do throws(TransportError) {
                        race.finish(.success(try await transport.send(prepared)))
                    } catch {
                        race.finish(.failure(error))
                    }
                }
                race.track(sender)
                if let timeout {
                    race.track(Task {
                        try? await Task.sleep(for: min(timeout, maximumTimeout))
                        if !Task.isCancelled { race.finish(.failure(.timeout)) }
                    })
                }
            }
        } onCancel: {
            race.finish(.failure(.cancelled))
        }
    }

    /// Sends `request` and interprets the response with the endpoint's generated mapping.
    /// Inlinable, as `interpret` is, so each endpoint gets a specialized copy instead of
    /// looking up generic metadata on every call.
    @inlinable
    public static func perform<Auth: AuthMode, Success: Sendable, EndpointError: EndpointErrorMapping>(
        _ request: consuming RPCRequest,
        over transport: any RPCTransport<Auth>,
        options: CallOptions,
        encoding: BodyEncoding,
        errors: EndpointError.Type,
        decode: (Data, BodyEncoding) throws -> Success
    ) async -> RequestResult<Success, EndpointError> {
        switch await send(consume request, over: transport, options: options) {
        case let .failure(error):
            return .failure(error)
        case let .success(response):
            return interpret(response, encoding: encoding, errors: errors, decode: decode)
        }
    }

    /// Maps a response: 2xx decodes the body; a status the endpoint declares becomes its
    /// error; 429 and 5xx become transport failures; anything else is `unrecognized`.
    /// Bodies are decoded as the response's `Content-Type` says when it names an encoding
    /// (a gRPC transport answers in protobuf whatever the endpoint's own encoding), else as
    /// the endpoint's `encoding`.
    @inlinable
    public static func interpret<Success: Sendable, EndpointError: EndpointErrorMapping>(
        _ response: RPCResponse,
        encoding endpointEncoding: BodyEncoding,
        errors: EndpointError.Type,
        decode: (Data, BodyEncoding) throws -> Success
    ) -> RequestResult<Success, EndpointError> {
        let encoding = response.headers["Content-Type"].flatMap(BodyEncoding.init(contentType:)) ?? endpointEncoding
        if response.isSuccess {
            do {
                return .success(try decode(response.body, encoding))
            } catch {
                return .failure(.undecodableResponse("\(error)"))
            }
        }
        do throws(TransportError) {
            if let declared = try EndpointError(response: response, encoding: encoding) {
                return .nonSuccess(declared)
            }
        } catch {
            return .failure(error)
        }
        switch response.status {
        case 429: return .failure(.retryLater(retryAfter: response.retryAfter()))
        case 503 where response.headers["Retry-After"] != nil: return .failure(.retryLater(retryAfter: response.retryAfter()))
        case 500..<600: return .failure(.serverError(status: response.status))
        case 100..<200, 300..<400: return .failure(.unexpectedResponse("status \(response.status)"))
        default: return .nonSuccess(EndpointError.unrecognized(status: response.status, body: response.body))
        }
    }

    /// Resumes the waiting caller exactly once and cancels the losers.
    final class Race: Sendable {
        private struct State {
            var continuation: CheckedContinuation<Result<RPCResponse, TransportError>, Never>?
            var pending: Result<RPCResponse, TransportError>?
            var tasks: [Task<Void, Never>] = []
            var finished = false
        }

        private let state = Locked(State())

        func start(_ continuation: CheckedContinuation<Result<RPCResponse, TransportError>, Never>) {
            let pending = state.withLock { state -> Result<RPCResponse, TransportError>? in
                if let pending = state.pending { return pending }
                state.continuation = continuation
                return nil
            }
            if let pending { continuation.resume(returning: pending) }
        }

        func track(_ task: Task<Void, Never>) {
            let cancelNow = state.withLock { state -> Bool in
                if !state.finished { state.tasks.append(task) }
                return state.finished
            }
            if cancelNow { task.cancel() }
        }

        func finish(_ result: Result<RPCResponse, TransportError>) {
            let ending = state.withLock { state -> (CheckedContinuation<Result<RPCResponse, TransportError>, Never>?, [Task<Void, Never>])? in
                guard !state.finished else { return nil }
                state.finished = true
                let continuation = state.continuation
                state.continuation = nil
                if continuation == nil { state.pending = result }
                defer { state.tasks = [] }
                return (continuation, state.tasks)
            }
            guard let (continuation, losers) = ending else { return }
            continuation?.resume(returning: result)
            for task in losers { task.cancel() }
        }
    }
}

extension RPCCall {
    /// Why a call to `path` (built from `template`) is refused before it is sent: a path
    /// parameter of `.` or `..` makes a dot-segment, which URL normalisation (a proxy's, a
    /// server's) turns into another resource; an empty one makes an empty segment
    /// (`/v1/profile//2`) or a trailing slash, which routers refuse or read as another
    /// resource. Refused on every transport, so a call fails alike whichever carries it.
    @inlinable
    public static func pathProblem(_ path: String, template: String) -> TransportError? {
        if let segment = PathEncoding.dotSegment(in: path) {
            return .invalidRequest("the path holds the dot-segment '\(segment)', which would reach another resource")
        }
        if let name = PathEncoding.emptyParameter(in: path, template: template) {
            return .invalidRequest("the path parameter '\(name)' is empty")
        }
        return nil
    }
}

/// Implemented by each generated endpoint error type: how declared statuses map to
/// cases, and back (for server handlers).
public protocol EndpointErrorMapping: Error, Sendable, Hashable {
    /// The case for a declared status, `nil` for an undeclared one; throws when a
    /// declared error body cannot be decoded.
    init?(response: RPCResponse, encoding: BodyEncoding) throws(TransportError)
    /// A status this version of the schema does not declare.
    static func unrecognized(status: Int, body: Data) -> Self
    /// The response a server sends for this error.
    func response(encoding: BodyEncoding) -> RPCResponse
}
