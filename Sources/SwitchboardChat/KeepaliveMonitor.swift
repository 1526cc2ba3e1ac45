/// How a chat connection checks that the server is still there.
public struct KeepalivePolicy: Sendable, Hashable {
    /// How long the connection may be quiet before it probes (Signal: 30 s).
    public var interval: Duration
    /// How long a probe may go unanswered before the connection is dropped (Signal: 10 s).
    public var timeout: Duration
    /// A request sent with each WebSocket ping, as Signal's `GET /v1/keepalive`; its
    /// response counts as an answer too. `nil` sends the ping alone.
    public var requestPath: String?

    /// The shortest interval and timeout a monitor honours (50 ms): a zero interval would
    /// probe again the moment each answer lands, a busy loop on both ends.
    public static let minimumPeriod: Duration = .milliseconds(50)

    /// Creates a policy; the defaults are Signal's.
    public init(interval: Duration = .seconds(30), timeout: Duration = .seconds(10), requestPath: String? = "/v1/keepalive") {
        self.interval = interval
        self.timeout = timeout
        self.requestPath = requestPath
    }
}

/// The keepalive decision, without timers or sockets: feed it what was heard and when,
/// ask it what to do at a given instant. Drivers (the chat connection on the real clock,
/// the session tests on a virtual one) sleep until ``nextDeadline``.
///
/// It probes after `interval` of silence rather than on a fixed beat: any frame from the
/// server proves it alive, so a busy connection sends no extra traffic.
public struct KeepaliveMonitor<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration, Instant: Sendable {
    /// What the driver should do now.
    public enum Action: Sendable, Hashable {
        /// Nothing is due yet.
        case wait
        /// Send a ping (and the keepalive request).
        case probe
        /// The probe went unanswered: drop the connection as a temporary failure.
        case timedOut
    }

    /// When to probe and how long to wait for an answer.
    public let policy: KeepalivePolicy
    private var lastHeard: Instant
    private var probeSentAt: Instant?

    /// Starts watching a connection that opened at `now`. An interval or timeout under
    /// ``KeepalivePolicy/minimumPeriod`` counts as that.
    public init(policy: KeepalivePolicy, now: Instant) {
        var policy = policy
        policy.interval = max(policy.interval, KeepalivePolicy.minimumPeriod)
        policy.timeout = max(policy.timeout, KeepalivePolicy.minimumPeriod)
        self.policy = policy
        lastHeard = now
    }

    /// When the server was last heard from (the connection's opening, until something arrives).
    public var lastHeardAt: Instant { lastHeard }

    /// Whether a probe is out and unanswered.
    public var isAwaitingAnswer: Bool { probeSentAt != nil }

    /// Records that something arrived from the server at `now`.
    public mutating func heard(at now: Instant) {
        if now > lastHeard { lastHeard = now }
        if let sent = probeSentAt, now >= sent { probeSentAt = nil }
    }

    /// What to do at `now`; `probe` assumes the driver sends it at once.
    public mutating func tick(at now: Instant) -> Action {
        if let sent = probeSentAt {
            return now >= sent.advanced(by: policy.timeout) ? .timedOut : .wait
        }
        guard now >= lastHeard.advanced(by: policy.interval) else { return .wait }
        probeSentAt = now
        return .probe
    }

    /// When ``tick(at:)`` next has something to do.
    public var nextDeadline: Instant {
        if let sent = probeSentAt { return sent.advanced(by: policy.timeout) }
        return lastHeard.advanced(by: policy.interval)
    }
}
