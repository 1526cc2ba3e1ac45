/// How many diagnostics a chat connection reports in a window of time. Past the limit they
/// are only counted, and the count is reported as one ``ChatDiagnostic/suppressed(count:)``
/// with the first diagnostic of a later window (or as the connection ends), so a server that
/// sends junk by the thousand cannot flood an app's logs.
public struct DiagnosticsLimit: Sendable, Hashable {
    /// The most reported in one window.
    public var count: Int
    /// The window's length.
    public var interval: Duration

    /// At most `count` diagnostics every `interval` (by default 100 every 10 s).
    public init(count: Int = 100, per interval: Duration = .seconds(10)) {
        self.count = max(0, count)
        self.interval = interval
    }
}

/// Counts a connection's diagnostics against its limit; kept under the connection's lock.
struct DiagnosticsGate {
    private let limit: DiagnosticsLimit
    private var windowStart: ContinuousClock.Instant
    private var reported = 0
    private var suppressed = 0

    init(limit: DiagnosticsLimit, now: ContinuousClock.Instant = .now) {
        // The fields are public vars: a negative count or an empty window set after `init`
        // means "none" and "the shortest window", not "no limit".
        self.limit = DiagnosticsLimit(count: limit.count, per: max(limit.interval, .milliseconds(1)))
        windowStart = now
    }

    /// Whether a diagnostic arriving `now` is reported, and how many the window before
    /// suppressed (to be reported first).
    mutating func admit(at now: ContinuousClock.Instant) -> (report: Bool, suppressedBefore: Int) {
        var before = 0
        if now - windowStart >= limit.interval {
            before = takeSuppressed()
            windowStart = now
            reported = 0
        }
        guard reported < limit.count else {
            suppressed += 1
            return (false, before)
        }
        reported += 1
        return (true, before)
    }

    /// The suppressed count not reported yet, which it resets.
    mutating func takeSuppressed() -> Int {
        defer { suppressed = 0 }
        return suppressed
    }
}
