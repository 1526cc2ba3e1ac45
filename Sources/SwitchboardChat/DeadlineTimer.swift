import Foundation

/// Fires at the earliest of many deadlines with a single sleeping task: a connection with
/// thousands of requests in flight keeps one timer, not one per request.
final class DeadlineTimer: @unchecked Sendable {
    private let lock = NSLock()
    private let fire: @Sendable (ContinuousClock.Instant) -> Void
    private let next: @Sendable () -> ContinuousClock.Instant?
    private var sleeper: Task<Void, Never>?
    private var sleepingUntil: ContinuousClock.Instant?
    private var generation = 0

    /// `fire` expires what is due at the given instant; `next` says the earliest deadline left.
    init(fire: @escaping @Sendable (ContinuousClock.Instant) -> Void, next: @escaping @Sendable () -> ContinuousClock.Instant?) {
        self.fire = fire
        self.next = next
    }

    deinit { sleeper?.cancel() }

    /// Makes sure the timer wakes by `deadline`.
    func watch(_ deadline: ContinuousClock.Instant) {
        lock.withLock {
            if let sleepingUntil, sleepingUntil <= deadline { return }
            sleeper?.cancel()
            start(until: deadline)
        }
    }

    /// Called with the lock held.
    private func start(until deadline: ContinuousClock.Instant) {
        generation += 1
        let mine = generation
        sleepingUntil = deadline
        sleeper = Task { [weak self] in
            var target = deadline
            while true {
                try? await Task.sleep(until: target, clock: .continuous)
                guard let self, !Task.isCancelled else { return }
                self.fire(.now)
                // `next()` is read under the timer's lock: a request registered after it
                // calls `watch` only after this, and so sees the updated `sleepingUntil`;
                // one registered before is in `next()`. Either way its deadline is kept.
                let upcoming: ContinuousClock.Instant? = self.lock.withLock {
                    guard self.generation == mine else { return nil }
                    let upcoming = self.next()
                    self.sleepingUntil = upcoming
                    if upcoming == nil { self.sleeper = nil }
                    return upcoming
                }
                guard let upcoming else { return }
                target = upcoming
            }
        }
    }
}
