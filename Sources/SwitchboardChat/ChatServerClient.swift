import Foundation
import SwitchboardIO
import SwitchboardRuntime
import SwitchboardWebSocket

extension ChatServer {
    /// Why a push got no answer to act on (see ``Client/sendPush(_:timeout:)``).
    public enum PushError: Error, Sendable, Hashable, CustomStringConvertible {
        /// The client did not answer within the push's timeout.
        case timedOut
        /// The connection ended before the client answered, or had ended before the push.
        case connectionClosed
        /// The push was not written: the connection is open but its send queue is full (a
        /// client that does not read; `WebSocketConnection.Options.maximumQueuedBytes`).
        case sendQueueFull
        /// The server is shutting down (``ChatServer/shutdown(timeout:)`` or ``ChatServer/stop()``):
        /// the push was not sent, or its answer is no longer awaited.
        case serverShuttingDown
        /// The task waiting for the answer was cancelled.
        case cancelled
        /// The client answered without an HTTP status, which Signal's server does not count
        /// as an acknowledgement.
        case invalidResponse

        public var description: String {
            switch self {
            case .timedOut: return "the client did not answer the push in time"
            case .connectionClosed: return "the connection ended before the client answered the push"
            case .sendQueueFull: return "the push was not sent: the connection's send queue is full"
            case .serverShuttingDown: return "the server is shutting down"
            case .cancelled: return "cancelled while waiting for the push's answer"
            case .invalidResponse: return "the client answered the push without an HTTP status"
            }
        }
    }

    /// One connected client, for pushes.
    ///
    /// Pushes go out strictly in the order they are started, so a pipeline of deliveries
    /// reaches the client in queue order, as Signal's server keeps it.
    public final class Client: @unchecked Sendable {
        let socket: WebSocketConnection
        /// Whether the upgrade carried accepted credentials.
        public let auth: AuthRequirement
        private let keepalives = Locked(0)
        private let lock = AdaptiveLock()
        /// Signal's server numbers its pushes from 1, apart from the client's ids.
        private var nextID: UInt64 = 1
        /// A push's outcome: the client's response, or why there is none.
        typealias PushResult = Result<RPCResponse, PushError>
        private var answers: [UInt64: FirstAnswer<PushResult>] = [:]
        /// Set once no push may start, with why: the connection ended, or the server is
        /// shutting down. The first reason stays.
        private var refusal: PushError?
        /// The client's requests being handled now, and how many may be.
        private let inFlight = Locked(0)
        private let refused = Locked(false)
        let maximumRequestsInFlight: Int
        /// The server's bytes of requests in handlers, shared by all its clients.
        private let sharedBudget: ByteBudget

        init(socket: WebSocketConnection, auth: AuthRequirement, maximumRequestsInFlight: Int = ChatServer.defaultMaximumRequestsInFlight,
             sharedBudget: ByteBudget = ByteBudget(limit: ChatServer.defaultMaximumRequestBytesInFlight)) {
            self.socket = socket
            self.auth = auth
            self.maximumRequestsInFlight = max(1, maximumRequestsInFlight)
            self.sharedBudget = sharedBudget
        }

        /// Takes a slot for a request that counts `cost` bytes; `false`, taking nothing, when
        /// the client already has the most in flight or the server's byte budget is spent.
        func beginRequest(cost: Int) -> Bool {
            let slot = inFlight.withLock { count in
                guard count < maximumRequestsInFlight else { return false }
                count += 1
                return true
            }
            guard slot else { return false }
            guard sharedBudget.take(cost) else {
                inFlight.withLock { $0 -= 1 }
                return false
            }
            return true
        }

        func endRequest(cost: Int) {
            sharedBudget.give(cost)
            inFlight.withLock { $0 -= 1 }
        }

        /// Whether any of the client's requests is in a handler now.
        var hasRequestsInFlight: Bool { inFlight.withLock { $0 > 0 } }

        /// Whether the server refused this client's frames (a badly formatted envelope): it
        /// is being closed, and nothing more it sends is served.
        var isRefused: Bool { refused.withLock { $0 } }

        /// Marks the client refused; `true` for the first call only, which closes it.
        func refuse() -> Bool {
            refused.withLock { refused in
                defer { refused = true }
                return !refused
            }
        }

        /// Sends a request to the client; returns its response, or `nil` if the connection
        /// closed, `timeout` passed, or the server began shutting down first (an
        /// unacknowledged push). ``sendPush(_:timeout:)`` says which.
        public func push(_ request: ServerRequest, timeout: Duration = .seconds(10)) async -> RPCResponse? {
            let result = await answer(to: start(request), timeout: timeout)
            if case let .success(response) = result { return response }
            return nil
        }

        /// Sends a request to the client and returns its response (whatever its status), or
        /// throws why there is none: ``PushError/timedOut`` after `timeout`,
        /// ``PushError/connectionClosed`` when the connection ends first,
        /// ``PushError/serverShuttingDown`` once the server is shutting down (a push still
        /// waiting then fails with it, and a push started afterwards fails at once),
        /// ``PushError/cancelled`` when the waiting task is cancelled,
        /// ``PushError/sendQueueFull`` when the push could not be written, and
        /// ``PushError/invalidResponse`` when the client answered without an HTTP status.
        public func sendPush(_ request: ServerRequest, timeout: Duration = .seconds(10)) async throws(PushError) -> RPCResponse {
            let result = await answer(to: start(request), timeout: timeout)
            switch result {
            case let .success(response): return response
            case let .failure(error): throw error
            }
        }

        /// Sends `request` behind every push started before it and returns its id. The frame
        /// is handed to the socket under the lock, so concurrent callers cannot reorder pushes.
        func start(_ request: ServerRequest) -> (id: UInt64, answer: FirstAnswer<PushResult>) {
            let slot = FirstAnswer<PushResult>()
            let (id, failure): (UInt64, PushError?) = lock.withLock {
                defer { nextID &+= 1 }
                if let refusal { return (nextID, refusal) }
                let envelope = OutgoingEnvelope.request(verb: request.verb, path: request.path, headers: request.headers, body: request.body, id: nextID)
                // A failed send means the socket is gone (`failAll` answers the waiters), or
                // its queue is full while it stays open.
                guard (try? socket.sendWithoutWaiting(envelope)) != nil else {
                    return (nextID, socket.isOpen ? PushError.sendQueueFull : PushError.connectionClosed)
                }
                answers[nextID] = slot
                return (nextID, nil)
            }
            if let failure { _ = slot.offer(.failure(failure)) }
            return (id, slot)
        }

        /// Waits for a started push's answer, up to `timeout`; cancellation ends the wait too.
        func answer(to started: (id: UInt64, answer: FirstAnswer<PushResult>), timeout: Duration) async -> PushResult {
            let timer = socket.eventLoop.schedule(after: timeout) { [weak self] in self?.answer(started.id, .failure(.timedOut)) }
            defer { timer.cancel() }
            return await withTaskCancellationHandler {
                await started.answer.value
            } onCancel: {
                self.answer(started.id, .failure(.cancelled))
            }
        }

        /// How many `GET /v1/keepalive` requests this client has sent.
        public var keepalivesReceived: Int { keepalives.withLock { $0 } }

        func countKeepalive() { keepalives.withLock { $0 += 1 } }

        /// Answers push `id`; an unknown or already answered id is ignored.
        func answer(_ id: UInt64, _ result: PushResult) {
            _ = lock.withLock { answers.removeValue(forKey: id) }?.offer(result)
        }

        /// Refuses pushes started from now on with `reason` (unless refused already), leaving
        /// those already waiting to their answers.
        func refusePushes(_ reason: PushError) {
            lock.withLock { if refusal == nil { refusal = reason } }
        }

        /// Fails every waiting push with `reason`; later pushes fail at once (with the first
        /// reason given).
        func failAll(_ reason: PushError = .connectionClosed) {
            let waiting = lock.withLock { () -> [FirstAnswer<PushResult>] in
                if refusal == nil { refusal = reason }
                defer { answers.removeAll() }
                return Array(answers.values)
            }
            for slot in waiting { _ = slot.offer(.failure(reason)) }
        }

        /// Drops the connection abruptly, as a crashing server would.
        public func kill() { socket.abort() }

        /// Closes with a code, such as Signal's 4401 or 4409.
        public func close(code: WebSocketCloseCode) async { _ = await socket.close(code: code) }
    }
}
