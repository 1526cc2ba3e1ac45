/// The retry delay after a failure: (2^x − 1) seconds times a jitter factor in [0.8, 1.2],
/// where x is the failure count, so the first retry comes after about a second. A delay past
/// ``maximum`` is drawn from 0.8 to 1.0 times the maximum by the same factor, so the jitter
/// never stops.
public struct RetryBackoff: Sendable, Hashable {
    /// The longest delay; the formula alone reaches 17 minutes by the tenth failure.
    public var maximum: Duration?
    /// The jitter range the formula allows.
    public static let jitterRange: ClosedRange<Double> = 0.8...1.2

    /// The longest a server's Retry-After may hold the next attempt back: one hour. A broken
    /// proxy or hostile server answering `Retry-After: 999999999` must not stop a session
    /// for decades.
    public var maximumServerDelay: Duration = .seconds(3600)

    /// Creates a backoff capped at `maximum` (five minutes by default); `nil` for no cap. A
    /// cap under a second counts as one second: a zero cap would retry in a tight loop.
    public init(maximum: Duration? = .seconds(300)) { self.maximum = maximum }

    /// The delay for `failureCount` (≥ 1) with `jitter` (clamped to 0.8...1.2), at least
    /// `floor` when the server said when to come back (Retry-After), a floor itself capped at
    /// ``maximumServerDelay``. A delay set by the floor is spread over 1.0 to 1.2 times it by
    /// the jitter: every client a server told "60 s" must not return at the same instant.
    public func delay(failureCount: Int, jitter: Double, floor: Duration? = nil) -> Duration {
        let exponent = min(max(failureCount, 0), 62)
        let seconds = Double((Int64(1) << exponent) - 1)
        // A jitter that is no number (NaN, from an injected source) is none: `min`/`max` pass
        // NaN through, and the delay's `Int64` conversion would trap on it.
        let factor = jitter.isFinite ? min(max(jitter, Self.jitterRange.lowerBound), Self.jitterRange.upperBound) : 1.0
        var milliseconds = (seconds * factor * 1000).rounded()
        if let maximum {
            let (seconds, attoseconds) = maximum.components
            let cap = max(Double(seconds) * 1000 + Double(attoseconds) / 1e15, 1000)
            if milliseconds > cap {
                // Past the cap the jitter still spreads the delay, over the cap's last fifth:
                // clients that lost the server together must not all come back together.
                let spread = Self.jitterRange.lowerBound + (factor - Self.jitterRange.lowerBound) / 2
                milliseconds = (cap * spread).rounded()
            }
        }
        // Without a maximum, stay within what a Duration of milliseconds can hold.
        var delay = Duration.milliseconds(Int64(min(milliseconds, 9.0e18)))
        if let floor, delay < floor {
            let held = min(floor, max(delay, maximumServerDelay))
            if held > delay {
                // Spread past the floor, never past the server cap.
                let (seconds, attoseconds) = held.components
                let spread = 1 + (factor - Self.jitterRange.lowerBound) / 2
                let spreadMilliseconds = ((Double(seconds) * 1000 + Double(attoseconds) / 1e15) * spread).rounded()
                delay = min(.milliseconds(Int64(min(spreadMilliseconds, 9.0e18))), max(held, maximumServerDelay))
            }
        }
        return delay
    }
}
