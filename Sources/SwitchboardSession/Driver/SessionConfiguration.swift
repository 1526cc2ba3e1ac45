import SwitchboardRuntime
import SwitchboardChat

/// Timers and failure classification for a session. The defaults follow Revolt's session
/// lifecycle and Signal's clients.
public struct SessionConfiguration: Sendable {
    /// A heartbeat after this long without hearing from the server (30 s).
    public var heartbeatInterval: Duration
    /// How long a heartbeat may go unanswered before the socket is dropped (10 s).
    public var heartbeatTimeout: Duration
    /// How long a new connection has to deliver its first message (10 s).
    public var connectTimeout: Duration
    /// How long the app's `login` may take before LOGGING_IN gives up with a temporary
    /// failure, which the specification sends to ERROR (60 s): a login request that hangs
    /// (a captive portal, a stalled request) must not leave the loading indicator up for ever.
    public var loginTimeout: Duration
    /// The retry delays.
    public var backoff: RetryBackoff
    /// How long a connection must stay up before the failures before it are forgiven and
    /// the backoff starts again from its first step (30 s); the server must also be heard
    /// from (a message, or the answer to a heartbeat) once that time has passed. A
    /// connection dropped sooner counts as one more failure: a server that accepts and at
    /// once drops every connection (draining, overloaded behind a proxy), or that goes
    /// silent after its first message, is retried ever more slowly, not at the same pace
    /// for ever.
    public var stableConnectionInterval: Duration
    /// Which connection errors invalidate the session (an ERROR, not a retry).
    public var isPermanent: @Sendable (ChatConnectionError) -> Bool
    /// How many state changes (and, separately, ignored events) wait for a reader before
    /// the oldest are dropped (256): an app that never reads ``Session/ignoredEvents`` must
    /// not collect every reachability report of its lifetime.
    public var bufferedChanges: Int
    /// How long a reconnect (or DISPOSE) waits for the push handlers of links it left behind
    /// to return (5 s, as `ChatConnectionOptions.pushHandlerGrace`): their connections cancel
    /// them after their own grace, and one that ignores its cancellation is not waited for
    /// past this, so a hung handler cannot hold a reconnect or a logout for ever.
    public var pushHandlerGrace: Duration

    /// Creates a configuration; the defaults are those given on each property.
    public init(
        heartbeatInterval: Duration = .seconds(30), heartbeatTimeout: Duration = .seconds(10),
        connectTimeout: Duration = .seconds(10), loginTimeout: Duration = .seconds(60), backoff: RetryBackoff = RetryBackoff(),
        stableConnectionInterval: Duration = .seconds(30),
        isPermanent: @escaping @Sendable (ChatConnectionError) -> Bool = SessionConfiguration.signalPermanentFailures,
        bufferedChanges: Int = 256, pushHandlerGrace: Duration = .seconds(5)
    ) {
        self.heartbeatInterval = heartbeatInterval
        self.heartbeatTimeout = heartbeatTimeout
        self.connectTimeout = connectTimeout
        self.loginTimeout = loginTimeout
        self.backoff = backoff
        self.stableConnectionInterval = stableConnectionInterval
        self.isPermanent = isPermanent
        self.bufferedChanges = max(1, bufferedChanges)
        self.pushHandlerGrace = max(.zero, pushHandlerGrace)
    }

    /// Signal's session-ending errors: credentials rejected (401 or 403, 4401), app expired (499),
    /// connected elsewhere (4409). Everything else (network, timeouts, 5xx) is temporary.
    public static let signalPermanentFailures: @Sendable (ChatConnectionError) -> Bool = { error in
        switch error {
        case .credentialsRejected, .reauthenticationRequired, .appExpired, .connectedElsewhere: return true
        default: return false
        }
    }
}

/// What the app's login function found.
public enum LoginOutcome: Sendable {
    /// Logged in: connect with these credentials.
    case account(ChatClient.Credentials)
    /// The account has no user yet: onboarding (username selection) follows.
    case noUser
    /// Logging in failed; `permanent` failures show the error screen either way, as specified.
    case failed(reason: String, permanent: Bool)
}

/// One state change, for the UI.
public struct SessionChange: Sendable, Hashable, CustomStringConvertible {
    /// The event that caused the change; `DEVICE_OFFLINE` for OFFLINE entered straight
    /// after DISCONNECTED.
    public var event: SessionEvent
    /// The state left.
    public var from: SessionState
    /// The state entered.
    public var to: SessionState
    /// What the UI should show now.
    public var uiHint: SessionUIHint
    /// Consecutive connection failures after the change.
    public var failureCount: Int
    /// The connection error behind a failure, when there was one.
    public var reason: ChatConnectionError?

    public var description: String {
        var text = "\(from) -\(event)-> \(to)"
        if case let .clientUI(banner?) = uiHint { text += " [\(banner.text)]" }
        if failureCount > 0 { text += " failures=\(failureCount)" }
        if let reason { text += " (\(reason))" }
        return text
    }
}

/// An event the current state does not accept; reported, never acted on.
public struct IgnoredSessionEvent: Sendable, Hashable {
    /// The event that was ignored.
    public var event: SessionEvent
    /// The state that does not accept it.
    public var state: SessionState

    /// Creates a report of `event` ignored in `state`.
    public init(event: SessionEvent, state: SessionState) {
        self.event = event
        self.state = state
    }
}
