/// The specification: which event moves which state where. Everything not listed is
/// ignored (and reported), never a crash and never a silent jump.
public enum SessionTransitions {
    /// The listed transitions, state by state, exactly as specified.
    public static let table: [SessionState: [SessionEvent: SessionState]] = [
        .ready: [.loginUncached: .loggingIn, .loginCached: .connecting],
        .loggingIn: [.noUser: .onboarding, .permanentFailure: .error, .temporaryFailure: .error, .socketConnected: .connected],
        .onboarding: [.userCreated: .loggingIn, .cancel: .dispose],
        .error: [.dismiss: .dispose],
        .dispose: [.ready: .ready],
        .connecting: [.socketConnected: .connected, .temporaryFailure: .disconnected, .permanentFailure: .error],
        .connected: [.temporaryFailure: .disconnected],
        .disconnected: [.retry: .reconnecting, .deviceOffline: .offline],
        .reconnecting: [.socketConnected: .connected, .temporaryFailure: .disconnected, .permanentFailure: .error],
        .offline: [.deviceOnline: .reconnecting],
    ]

    /// Where `event` takes `state`, or `nil` if the event does not apply there.
    ///
    /// Two rules sit on top of the table: `SOCKET_DROPPED` behaves as `TEMPORARY_FAILURE`
    /// wherever that is accepted, and `LOGOUT` leads from any logged-in state to `DISPOSE`.
    public static func target(of event: SessionEvent, from state: SessionState) -> SessionState? {
        if event == .logout { return state.isLoggedIn ? .dispose : nil }
        let effective = event == .socketDropped ? SessionEvent.temporaryFailure : event
        return table[state]?[effective]
    }
}
