import Foundation

/// Fires at the earliest of many deadlines with a single timer on the connection's event
/// loop: a connection with thousands of requests in flight keeps one timer, not one per
/// request, and no task.
///
/// Each firing looks over every pending deadline, so after one it waits at least
/// ``batchInterval`` before the next: requests that all time out (a server that stopped
/// answering) expire in batches, up to that much late, instead of one scan each.
package final class DeadlineTimer: @unchecked Sendable {
    /// The least time between two firings: 50 ms.
    package static let batchInterval: Duration = .milliseconds(50)

    private let lock = AdaptiveLock()
    private let loop: EventLoop
    private let fire: @Sendable (ContinuousClock.Instant) -> Void
    private let next: @Sendable () -> ContinuousClock.Instant?
    private var timer: LoopTimer?

    /// `fire` expires what is due at the given instant; `next` says the earliest deadline left.
    package init(loop: EventLoop, fire: @escaping @Sendable (ContinuousClock.Instant) -> Void,
                 next: @escaping @Sendable () -> ContinuousClock.Instant?) {
        self.loop = loop
        self.fire = fire
        self.next = next
    }

    // Only a timer that has fired or been replaced is gone by now (an armed one holds this);
    // cancelling is then a no-op, kept so the timer never outlives this by accident.
    deinit { timer?.cancel() }

    /// Makes sure the timer fires by `deadline`.
    package func watch(_ deadline: ContinuousClock.Instant) {
        lock.withLock {
            if let timer, !timer.isCancelled, timer.deadline <= deadline { return }
            timer?.cancel()
            arm(at: deadline)
        }
    }

    /// Called with the lock held.
    private func arm(at deadline: ContinuousClock.Instant) {
        let armed = LoopTimerBox()
        // Held strongly (a weak reference would give this a side table, making the retain of
        // every `watch` several times dearer): once its owner is gone, the timer keeps this and
        // its two closures until the last deadline they still watch has fired.
        let timer = loop.schedule(at: deadline) { [self] in
            let fired = ContinuousClock.now
            self.fire(fired)
            // `next()` is read under the lock: a request registered after it calls `watch`
            // only after this, and so sees the timer armed here; one registered before is in
            // `next()`. Either way its deadline is kept.
            // A `watch` during `fire` may have armed a later timer already (this one looked
            // spent): the earliest deadline left still decides when the next firing comes.
            self.lock.withLock {
                if self.timer === armed.timer { self.timer = nil }
                guard let upcoming = self.next() else { return }
                let at = max(upcoming, fired + Self.batchInterval)
                if let current = self.timer, !current.isCancelled, current.deadline <= at { return }
                self.timer?.cancel()
                self.arm(at: at)
            }
        }
        armed.timer = timer
        self.timer = timer
    }
}

/// Lets a timer's callback recognise its own timer, which exists only once scheduled.
private final class LoopTimerBox: @unchecked Sendable {
    var timer: LoopTimer?
}
