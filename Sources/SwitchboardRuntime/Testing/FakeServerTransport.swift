import Foundation

/// A transport whose far end is the test itself, in the style of libsignal's
/// `FakeChatRemote`: the test reads each request the client sends and answers it by id.
///
/// ```swift
/// let fake = FakeServerTransport<Unauthenticated>()
/// async let result = UsernamesClient(transport: fake).lookUpUsernameHash(hash: hash)
/// let request = try await fake.nextRequest()
/// fake.respond(to: request.id, status: 404)
/// ```
public final class FakeServerTransport<Auth: AuthMode>: RPCTransport, Sendable {
    /// A request the client sent, as it would appear on the wire.
    public struct IncomingRequest: Sendable {
        /// The id the fake assigned, to answer with.
        public let id: UInt64
        /// The endpoint the client called.
        public let endpoint: EndpointDescriptor
        /// The endpoint's verb.
        public let verb: String
        /// The concrete path with its query string.
        public let path: String
        /// The path with sensitive values redacted, as logs see it.
        public let logSafePath: String
        /// The headers, credentials included.
        public let headers: RPCHeaders
        /// The encoded body, or `nil` when the endpoint sends none.
        public let body: Data?

        /// Decodes the body as `type`.
        public func decodeBody<M: ProtoMessage>(as type: M.Type, encoding: BodyEncoding = .protobuf) throws -> M {
            let bytes = body ?? Data()
            switch encoding {
            case .protobuf: return try M(serializedBytes: bytes)
            case .json: return try M(jsonUTF8Bytes: bytes)
            }
        }
    }

    struct State {
        var nextID: UInt64 = 1
        var unread: [IncomingRequest] = []
        /// Tests waiting in `nextRequest`, oldest first, each with its own key for its timeout.
        var readers: [(key: UInt64, continuation: CheckedContinuation<IncomingRequest?, Never>)] = []
        var nextReaderKey: UInt64 = 0
        /// Each request waiting for its answer, with its endpoint's encoding (what an answer's
        /// body is written in).
        var pending: [UInt64: (continuation: CheckedContinuation<Result<RPCResponse, TransportError>, Never>, encoding: BodyEncoding)] = [:]
        var disconnected: String?
    }

    private let state = Locked(State())

    /// Creates a fake with no requests yet.
    public init(as auth: Auth.Type = Auth.self) {}

    public func send(_ request: RPCRequest) async throws(TransportError) -> RPCResponse {
        // Refused as the real transports refuse it, so a test cannot pass on a header that
        // production would never send.
        if !request.headers.fields.isEmpty { try request.headers.checkSendable() }
        let id: UInt64 = state.withLock { state in
            defer { state.nextID &+= 1 }
            return state.nextID
        }
        let incoming = IncomingRequest(
            id: id, endpoint: request.endpoint, verb: request.verb, path: request.path,
            logSafePath: request.logSafePath, headers: request.headers, body: request.body)
        let result: Result<RPCResponse, TransportError> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let reader: CheckedContinuation<IncomingRequest?, Never>? = state.withLock { state in
                    if let reason = state.disconnected {
                        continuation.resume(returning: .failure(.disconnected(reason: DisconnectReason(reason))))
                        return nil
                    }
                    // Cancelled before this point, `onCancel` found nothing to answer; checked
                    // under the lock, so a later cancellation finds the entry.
                    if Task.isCancelled {
                        continuation.resume(returning: .failure(.cancelled))
                        return nil
                    }
                    state.pending[id] = (continuation, request.endpoint.encoding)
                    if state.readers.isEmpty {
                        state.unread.append(incoming)
                        return nil
                    }
                    return state.readers.removeFirst().continuation
                }
                reader?.resume(returning: incoming)
            }
        } onCancel: {
            // A request the test has not read yet is withdrawn too: `nextRequest()` must not
            // hand out a call its client has abandoned.
            state.withLock { state in
                state.unread.removeAll { $0.id == id }
                return state.pending.removeValue(forKey: id)?.continuation
            }?.resume(returning: .failure(.cancelled))
        }
        return try result.get()
    }

    /// The next request the client sends, waiting up to `timeout` for it. Throws
    /// ``TransportError/timeout`` when none came in time, ``TransportError/disconnected(reason:)``
    /// once the fake server has disconnected (and no request is left unread), and
    /// ``TransportError/cancelled`` when the waiting task is cancelled.
    public func nextRequest(timeout: Duration = .seconds(5)) async throws -> IncomingRequest {
        let key: UInt64 = state.withLock { state in
            defer { state.nextReaderKey += 1 }
            return state.nextReaderKey
        }
        var timer: Task<Void, Never>?
        let request: IncomingRequest? = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let ready: IncomingRequest?? = state.withLock { state in
                    if !state.unread.isEmpty { return .some(state.unread.removeFirst()) }
                    if state.disconnected != nil || Task.isCancelled { return .some(nil) }
                    state.readers.append((key, continuation))
                    return nil
                }
                if let ready {
                    continuation.resume(returning: ready)
                    return
                }
                // Bound the wait so a test whose client never sends fails instead of hanging;
                // only this reader expires, not one that started waiting later.
                timer = Task { [state] in
                    guard (try? await Task.sleep(for: timeout)) != nil else { return }
                    Self.expireReader(key, in: state)
                }
            }
        } onCancel: {
            Self.expireReader(key, in: state)
        }
        timer?.cancel()
        if let request { return request }
        if Task.isCancelled { throw TransportError.cancelled }
        if let reason = state.withLock({ $0.disconnected }) { throw TransportError.disconnected(reason: DisconnectReason(reason)) }
        throw TransportError.timeout
    }

    private static func expireReader(_ key: UInt64, in state: Locked<State>) {
        state.withLock { state -> CheckedContinuation<IncomingRequest?, Never>? in
            guard let index = state.readers.firstIndex(where: { $0.key == key }) else { return nil }
            return state.readers.remove(at: index).continuation
        }?.resume(returning: nil)
    }

    /// Answers request `id`; answers to unknown or already answered ids are ignored.
    public func respond(to id: UInt64, with response: RPCResponse) {
        finish(id, .success(response))
    }

    /// Ends request `id` with `result`, if it still waits.
    private func finish(_ id: UInt64, _ result: Result<RPCResponse, TransportError>) {
        state.withLock { $0.pending.removeValue(forKey: id)?.continuation }?.resume(returning: result)
    }

    /// Answers request `id` with a status and an optional message body, written in `encoding`
    /// (by default the request's endpoint's, as its server would write it, with its
    /// `Content-Type`). A body that cannot be written as JSON fails the call with
    /// `invalidRequest` naming why, rather than answer an empty body.
    public func respond(to id: UInt64, status: Int, body: (any ProtoMessage)? = nil, headers: RPCHeaders = [:], encoding: BodyEncoding? = nil) {
        let encoding = encoding ?? state.withLock { $0.pending[id]?.encoding } ?? .protobuf
        var data = Data()
        if let body {
            if encoding == .json {
                do {
                    data = Data(try body.jsonUTF8Bytes())
                } catch {
                    finish(id, .failure(.invalidRequest("the fake's answer cannot be written as JSON: \(error)")))
                    return
                }
            } else {
                data = body.serializedData()
            }
        }
        var headers = headers
        if body != nil, headers["Content-Type"] == nil { headers.set("Content-Type", encoding.contentType) }
        respond(to: id, with: RPCResponse(status: status, headers: headers, body: data, message: status == 200 ? "OK" : nil))
    }

    /// Fails every request waiting for an answer, and every later one, with `disconnected`.
    public func disconnect(reason: String = "closed by the fake server") {
        let (pending, readers) = state.withLock { state in
            state.disconnected = reason
            defer {
                state.pending.removeAll()
                state.readers.removeAll()
            }
            return (state.pending.values.map(\.continuation), state.readers.map(\.continuation))
        }
        for continuation in pending { continuation.resume(returning: .failure(.disconnected(reason: DisconnectReason(reason)))) }
        for reader in readers { reader.resume(returning: nil) }
    }

    /// Requests sent but not yet answered.
    public var pendingCount: Int { state.withLock { $0.pending.count } }
}
