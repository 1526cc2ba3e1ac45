import Foundation

/// Decides which arrivals from the server reach ``ChatConnection/activity``.
///
/// A listener on that stream (a session's heartbeat) is a task: signalling every frame would
/// wake it once per response, a thread wake-up on the hot path of every request. Idle timers
/// need far less: the first arrival, one a second after that, and the answer to a probe at
/// once, so a heartbeat waiting on it never mistakes a busy connection for a silent one.
struct ActivityThrottle {
    /// The longest an arrival may go unsignalled; small beside any heartbeat interval.
    static let quietPeriod: Duration = .seconds(1)

    private var lastSignal: ContinuousClock.Instant?
    private var isProbing = false

    /// A probe is about to go out: its answer (the next arrival) is signalled at once.
    mutating func probeSent() { isProbing = true }

    /// Whether an arrival at `now` is signalled.
    mutating func shouldSignal(at now: ContinuousClock.Instant) -> Bool {
        if !isProbing, let lastSignal, now - lastSignal < Self.quietPeriod { return false }
        isProbing = false
        lastSignal = now
        return true
    }
}
