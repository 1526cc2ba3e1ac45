import Foundation
import SwitchboardIO
import SwitchboardRuntime
import SwitchboardWebSocket

extension ChatServer {
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
        private var answers: [UInt64: FirstAnswer<RPCResponse?>] = [:]
        private var isClosed = false
        /// The client's requests being handled now, and how many may be.
        private let inFlight = Locked(0)
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

        /// Sends a request to the client; returns its response, or `nil` if the connection
        /// closed or `timeout` passed first (an unacknowledged push).
        public func push(_ request: ServerRequest, timeout: Duration = .seconds(10)) async -> RPCResponse? {
            await answer(to: start(request), timeout: timeout)
        }

        /// Sends `request` behind every push started before it and returns its id. The frame
        /// is handed to the socket under the lock, so concurrent callers cannot reorder pushes.
        func start(_ request: ServerRequest) -> (id: UInt64, answer: FirstAnswer<RPCResponse?>) {
            let slot = FirstAnswer<RPCResponse?>()
            let (id, sent): (UInt64, Bool) = lock.withLock {
                defer { nextID &+= 1 }
                guard !isClosed else { return (nextID, false) }
                let envelope = OutgoingEnvelope.request(verb: request.verb, path: request.path, headers: request.headers, body: request.body, id: nextID)
                // A failed send means the socket is gone; `failAll` answers the waiters.
                guard (try? socket.sendWithoutWaiting(envelope)) != nil else { return (nextID, false) }
                answers[nextID] = slot
                return (nextID, true)
            }
            if !sent { _ = slot.offer(nil) }
            return (id, slot)
        }

        /// Waits for a started push's answer, up to `timeout`; cancellation gives `nil` too.
        func answer(to started: (id: UInt64, answer: FirstAnswer<RPCResponse?>), timeout: Duration) async -> RPCResponse? {
            let timer = socket.eventLoop.schedule(after: timeout) { [weak self] in self?.answer(started.id, nil) }
            defer { timer.cancel() }
            return await withTaskCancellationHandler {
                await started.answer.value
            } onCancel: {
                self.answer(started.id, nil)
            }
        }

        /// How many `GET /v1/keepalive` requests this client has sent.
        public var keepalivesReceived: Int { keepalives.withLock { $0 } }

        func countKeepalive() { keepalives.withLock { $0 += 1 } }

        /// Answers push `id`; an unknown or already answered id is ignored.
        func answer(_ id: UInt64, _ response: RPCResponse?) {
            _ = lock.withLock { answers.removeValue(forKey: id) }?.offer(response)
        }

        /// Answers every waiting push with `nil`; later pushes get `nil` at once.
        func failAll() {
            let waiting = lock.withLock { () -> [FirstAnswer<RPCResponse?>] in
                isClosed = true
                defer { answers.removeAll() }
                return Array(answers.values)
            }
            for slot in waiting { _ = slot.offer(nil) }
        }

        /// Drops the connection abruptly, as a crashing server would.
        public func kill() { socket.abort() }

        /// Closes with a code, such as Signal's 4401 or 4409.
        public func close(code: WebSocketCloseCode) async { _ = await socket.close(code: code) }
    }
}
