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
        // Every access is under `lock`, which already makes it exclusive:
        // `@exclusivity(unchecked)` drops the runtime's own check (about 800 instructions a
        // request across these fields, measured with `CallProfile`).
        @exclusivity(unchecked) private var closed = false
        /// A request's place in ``slots`` and the generation of that slot when it entered: a
        /// slot is reused once its request left, so a late ``track(_:_:)`` must not reach the
        /// next one. Slots instead of a set keyed by id: this runs three times per request, and
        /// hashing cost about 500 instructions a call (`CallProfile`).
        struct Token {
            let index: Int
            let generation: UInt64
        }
        private struct Slot {
            var generation: UInt64 = 0
            var isActive = false
            var task: Task<Void, Never>?
            /// The client whose request this is, so its handlers stop when it leaves.
            var owner: ObjectIdentifier?
        }
        @exclusivity(unchecked) private var slots: [Slot] = []
        @exclusivity(unchecked) private var freeSlots: [Int] = []
        /// Requests in handlers now.
        @exclusivity(unchecked) private var activeCount = 0
        /// Shutdowns waiting for `activeCount` to reach 0: resumed with `true` when it has,
        /// `false` at their deadline.
        @exclusivity(unchecked) private var idleWaiters: [UInt64: CheckedContinuation<Bool, Never>] = [:]
        @exclusivity(unchecked) private var nextWaiter: UInt64 = 0

        /// Whether requests are refused: the server is shutting down or stopped.
        var isClosed: Bool { lock.withLock { closed } }

        /// Counts a request of `owner` in and returns its token; `nil`, counting nothing, once
        /// closed.
        func enter(owner: ObjectIdentifier) -> Token? {
            lock.withLock {
                guard !closed else { return nil }
                let index: Int
                if let free = freeSlots.popLast() {
                    index = free
                } else {
                    index = slots.count
                    slots.append(Slot())
                }
                slots[index].generation &+= 1
                slots[index].isActive = true
                slots[index].owner = owner
                activeCount += 1
                return Token(index: index, generation: slots[index].generation)
            }
        }

        /// Keeps the task of request `token` for ``cancelAll()``, unless it has already left
        /// (a handler that answered without suspending).
        func track(_ token: Token, _ task: Task<Void, Never>) {
            lock.withLock {
                guard slots[token.index].generation == token.generation, slots[token.index].isActive else { return }
                slots[token.index].task = task
            }
        }

        /// Request `token` answered; the last one out ends the shutdowns' wait.
        func leave(_ token: Token) {
            let waiters = lock.withLock { () -> [CheckedContinuation<Bool, Never>] in
                guard slots[token.index].generation == token.generation, slots[token.index].isActive else { return [] }
                slots[token.index].isActive = false
                slots[token.index].task = nil
                freeSlots.append(token.index)
                activeCount -= 1
                guard activeCount == 0, !idleWaiters.isEmpty else { return [] }
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
                    guard activeCount > 0 else { return false }
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
            let running = lock.withLock { slots.compactMap { $0.isActive ? $0.task : nil } }
            for task in running { task.cancel() }
        }

        /// Cancels the running handlers of `owner`'s requests: its connection ended, and nobody
        /// can be answered (each still leaves, giving back what it held, when its handler ends).
        func cancel(ownedBy owner: ObjectIdentifier) {
            let running = lock.withLock { slots.compactMap { $0.isActive && $0.owner == owner ? $0.task : nil } }
            for task in running { task.cancel() }
        }
    }
}
