import Foundation

/// A clock that moves only when told to, for deterministic tests of timers: retries,
/// heartbeats and connect timeouts run in virtual time, with no real waiting.
public final class ManualClock: Clock, @unchecked Sendable {
    /// A point in virtual time: the offset from the clock's start.
    public struct Instant: InstantProtocol, Sendable, Hashable, CustomStringConvertible {
        /// How far the instant is from the clock's start.
        public var offset: Duration
        /// Creates the instant `offset` after the clock's start.
        public init(offset: Duration) { self.offset = offset }
        /// The instant `duration` later.
        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        /// The time from this instant to `other`; negative when `other` is earlier.
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
        public var description: String { "t+\(offset)" }
    }

    private struct Sleeper {
        let deadline: Instant
        let continuation: CheckedContinuation<Void, any Error>
    }

    private let lock = NSLock()
    private var current = Instant(offset: .zero)
    private var sleepers: [UInt64: Sleeper] = [:]
    private var nextKey: UInt64 = 0

    /// Creates a clock at its start, `t+0`, with nobody sleeping.
    public init() {}

    /// The current virtual time; it moves only with ``advance(by:)``.
    public var now: Instant { lock.withLock { current } }
    /// Zero: virtual time has no granularity.
    public var minimumResolution: Duration { .zero }

    /// How many tasks are sleeping on this clock.
    public var sleeperCount: Int { lock.withLock { sleepers.count } }

    /// The earliest deadline anyone sleeps until.
    public var nextDeadline: Instant? { lock.withLock { sleepers.values.map(\.deadline).min() } }

    /// Every deadline someone sleeps until, earliest first: a test can wait for exactly the
    /// timers it expects before it advances time.
    public var sleeperDeadlines: [Instant] { lock.withLock { sleepers.values.map(\.deadline).sorted() } }

    /// Suspends until ``advance(by:)`` reaches `deadline`, at once if it has passed;
    /// throws `CancellationError` if the task is cancelled first. `tolerance` is ignored.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let key: UInt64 = lock.withLock {
            defer { nextKey += 1 }
            return nextKey
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let resumeNow: Bool = lock.withLock {
                    if deadline <= current || Task.isCancelled { return true }
                    sleepers[key] = Sleeper(deadline: deadline, continuation: continuation)
                    return false
                }
                if resumeNow {
                    if Task.isCancelled { continuation.resume(throwing: CancellationError()) } else { continuation.resume() }
                }
            }
        } onCancel: {
            lock.withLock { sleepers.removeValue(forKey: key) }?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves time forward by `duration`, waking every sleeper whose deadline has come, earliest first.
    public func advance(by duration: Duration) {
        let due: [Sleeper] = lock.withLock {
            current = current.advanced(by: duration)
            let ready = sleepers.filter { $0.value.deadline <= current }.sorted { $0.value.deadline < $1.value.deadline }
            for (key, _) in ready { sleepers.removeValue(forKey: key) }
            return ready.map(\.value)
        }
        for sleeper in due { sleeper.continuation.resume() }
    }

    /// Waits (in real time, bounded by `timeout`) until at least `count` tasks sleep on the
    /// clock, so a test advances time only after the code under test armed its timers.
    @discardableResult
    public func waitForSleepers(_ count: Int = 1, timeout: Duration = .seconds(60)) async -> Bool {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while sleeperCount < count {
            if ContinuousClock.now >= deadline { return false }
            try? await Task.sleep(for: .milliseconds(2))
        }
        return true
    }
}
