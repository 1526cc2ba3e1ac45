import SwitchboardIO

extension ChatServer {
    /// The requests in handlers across a server, so a graceful shutdown can refuse new ones,
    /// wait for those under way, and cancel the ones that outlast it.
    ///
    /// A request enters before its handler starts and leaves once its answer is handed to
    /// the socket (so the close that follows queues behind the answer); its task is kept
    /// while it runs, for ``cancelAll()``.
    final class RequestDrain: @unchecked Sendable {
        private let lock = AdaptiveLock()
        private var closed = false
        private var nextToken: UInt64 = 0
        /// Requests in handlers now.
        private var active = Set<UInt64>()
        /// Their tasks, once started, until they leave.
        private var tasks: [UInt64: Task<Void, Never>] = [:]
        /// Shutdowns waiting for `active` to empty: resumed with `true` when it has, `false`
        /// at their deadline.
        private var idleWaiters: [UInt64: CheckedContinuation<Bool, Never>] = [:]
        private var nextWaiter: UInt64 = 0

        /// Whether requests are refused: the server is shutting down or stopped.
        var isClosed: Bool { lock.withLock { closed } }

        /// Counts a request in and returns its token; `nil`, counting nothing, once closed.
        func enter() -> UInt64? {
            lock.withLock {
                guard !closed else { return nil }
                nextToken &+= 1
                active.insert(nextToken)
                return nextToken
            }
        }

        /// Keeps the task of request `token` for ``cancelAll()``, unless it has already left
        /// (a handler that answered without suspending).
        func track(_ token: UInt64, _ task: Task<Void, Never>) {
            lock.withLock {
                if active.contains(token) { tasks[token] = task }
            }
        }

        /// Request `token` answered; the last one out ends the shutdowns' wait.
        func leave(_ token: UInt64) {
            let waiters = lock.withLock { () -> [CheckedContinuation<Bool, Never>] in
                active.remove(token)
                tasks[token] = nil
                guard active.isEmpty else { return [] }
                defer { idleWaiters = [:] }
                return Array(idleWaiters.values)
            }
            for waiter in waiters { waiter.resume(returning: true) }
        }

        /// Refuses every request from now on.
        func close() {
            lock.withLock { closed = true }
        }

        /// Returns `true` once no request is in a handler, or `false` at `deadline`.
        func waitUntilIdle(until deadline: ContinuousClock.Instant) async -> Bool {
            let key: UInt64 = lock.withLock {
                nextWaiter &+= 1
                return nextWaiter
            }
            var timer: Task<Void, Never>?
            defer { timer?.cancel() }
            return await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let waiting: Bool = lock.withLock {
                    guard !active.isEmpty else { return false }
                    idleWaiters[key] = continuation
                    return true
                }
                guard waiting else {
                    continuation.resume(returning: true)
                    return
                }
                // Armed only once the waiter is registered, so the deadline cannot be missed.
                timer = Task { [self] in
                    try? await Task.sleep(until: deadline)
                    lock.withLock { idleWaiters.removeValue(forKey: key) }?.resume(returning: false)
                }
            }
        }

        /// Ends every shutdown's wait at once, as if its deadline had come: ``ChatServer/stop()``
        /// drops everything and must not leave a graceful shutdown waiting beside it.
        func abortWaiters() {
            let waiters = lock.withLock { () -> [CheckedContinuation<Bool, Never>] in
                defer { idleWaiters = [:] }
                return Array(idleWaiters.values)
            }
            for waiter in waiters { waiter.resume(returning: false) }
        }

        /// Cancels the handler of every request still in one.
        func cancelAll() {
            let running = lock.withLock { Array(tasks.values) }
            for task in running { task.cancel() }
        }
    }
}
