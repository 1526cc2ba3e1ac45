import SwitchboardRuntime

/// The session's pure core: the specification's transitions plus the entry and exit
/// behaviour of each state, as effects for a driver to perform. No clocks, sockets or
/// tasks, so every path is tested exhaustively and deterministically.
public struct SessionMachine: Sendable {
    /// What the driver must do after a step, in order.
    public enum Effect: Sendable, Hashable {
        /// Run the app's login (entry to LOGGING_IN); its outcome comes back as an event.
        case authenticate
        /// Open the socket (entry to CONNECTING and RECONNECTING).
        case connect
        /// Drop cached data such as message history and member lists (entry to RECONNECTING).
        case invalidateCaches
        /// Arm the retry timer; it sends `RETRY` when it fires (entry to DISCONNECTED).
        case startRetryTimer(Duration)
        /// Cancel the retry timer (exit from DISCONNECTED).
        case cancelRetryTimer
        /// Close the socket, dispose of the client and make a new one, then send `READY`
        /// (entry to DISPOSE).
        case disposeClient
    }

    /// One handled event.
    public struct Step: Sendable, Hashable {
        /// The event handled.
        public var event: SessionEvent
        /// The state the event found the machine in.
        public var from: SessionState
        /// The states entered, in order (entering DISCONNECTED while offline enters OFFLINE
        /// too); empty when the event was ignored.
        public var entered: [SessionState]
        /// What the driver must do, in order; empty when the event was ignored.
        public var effects: [Effect]
        /// The event does not apply in `from`; nothing changed.
        public var isIgnored: Bool { entered.isEmpty }
    }

    /// The current state; READY at first.
    public private(set) var state: SessionState = .ready
    /// Consecutive connection failures: kept through CONNECTED until the connection proves
    /// stable (``connectionProvedStable()``, which a driver calls once a connection has stayed
    /// up long enough), so a server that accepts and then drops every connection still meets
    /// a growing backoff; back to 0 in READY.
    public private(set) var failureCount = 0
    /// Whether the device has a network, as the app last reported.
    public private(set) var isDeviceOnline = true
    /// The delay before each retry, growing with ``failureCount``.
    public var backoff: RetryBackoff
    /// A jitter factor in [0.8, 1.2] for each retry delay; injected so tests can pin it.
    private let jitter: @Sendable () -> Double

    /// A machine in READY; `jitter` gives each retry delay's factor, random by default.
    public init(backoff: RetryBackoff = RetryBackoff(), jitter: @escaping @Sendable () -> Double = { Double.random(in: RetryBackoff.jitterRange) }) {
        self.backoff = backoff
        self.jitter = jitter
    }

    /// A machine resuming in `state` (restoring a saved session, or a test placing it).
    public init(resumingIn state: SessionState, failureCount: Int = 0, isDeviceOnline: Bool = true,
                backoff: RetryBackoff = RetryBackoff(), jitter: @escaping @Sendable () -> Double = { Double.random(in: RetryBackoff.jitterRange) }) {
        self.init(backoff: backoff, jitter: jitter)
        self.state = state
        self.failureCount = failureCount
        self.isDeviceOnline = isDeviceOnline
    }

    /// Applies `event`. `retryAfter` (from a failure's Retry-After) is the least delay
    /// before the next retry.
    public mutating func handle(_ event: SessionEvent, retryAfter: Duration? = nil) -> Step {
        // Reachability is remembered whatever the state, for DISCONNECTED's entry check.
        if event == .deviceOffline { isDeviceOnline = false }
        if event == .deviceOnline { isDeviceOnline = true }
        var step = Step(event: event, from: state, entered: [], effects: [])
        guard let target = SessionTransitions.target(of: event, from: state) else { return step }
        if state == .disconnected { step.effects.append(.cancelRetryTimer) }
        enter(target, retryAfter: retryAfter, step: &step)
        return step
    }

    /// The connection has stayed up long enough to count as working (the driver's
    /// ``SessionConfiguration/stableConnectionInterval``): the failures before it are
    /// forgiven. Nothing happens outside CONNECTED.
    public mutating func connectionProvedStable() {
        if state == .connected { failureCount = 0 }
    }

    private mutating func enter(_ target: SessionState, retryAfter: Duration?, step: inout Step) {
        state = target
        step.entered.append(target)
        switch target {
        case .loggingIn:
            step.effects.append(.authenticate)
        case .connecting:
            step.effects.append(.connect)
        case .disconnected:
            failureCount += 1
            if !isDeviceOnline {
                // The spec's DEVICE_OFFLINE transition, taken at once; no timer is armed.
                enter(.offline, retryAfter: nil, step: &step)
                return
            }
            step.effects.append(.startRetryTimer(backoff.delay(failureCount: failureCount, jitter: jitter(), floor: retryAfter)))
        case .reconnecting:
            step.effects.append(contentsOf: [.invalidateCaches, .connect])
        case .dispose:
            step.effects.append(.disposeClient)
        case .ready:
            // A new login starts with a clean slate: the last account's failures are not its.
            failureCount = 0
        case .onboarding, .error, .offline, .connected:
            break
        }
    }
}
