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
                let upcoming = self.next()
                let keepGoing: Bool = self.lock.withLock {
                    guard self.generation == mine else { return false }
                    self.sleepingUntil = upcoming
                    if upcoming == nil { self.sleeper = nil }
                    return upcoming != nil
                }
                guard keepGoing, let upcoming else { return }
                target = upcoming
            }
        }
    }
}
