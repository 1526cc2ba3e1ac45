import SwitchboardSession
import Testing

/// The specification, written out again by hand from the issue so the table in the
/// product is checked against an independent copy.
let specification: [(SessionState, SessionEvent, SessionState)] = [
    (.ready, .loginUncached, .loggingIn), (.ready, .loginCached, .connecting),
    (.loggingIn, .noUser, .onboarding), (.loggingIn, .permanentFailure, .error),
    (.loggingIn, .temporaryFailure, .error), (.loggingIn, .socketConnected, .connected),
    (.onboarding, .userCreated, .loggingIn), (.onboarding, .cancel, .dispose),
    (.error, .dismiss, .dispose),
    (.dispose, .ready, .ready),
    (.connecting, .socketConnected, .connected), (.connecting, .temporaryFailure, .disconnected),
    (.connecting, .permanentFailure, .error),
    (.connected, .temporaryFailure, .disconnected),
    (.disconnected, .retry, .reconnecting), (.disconnected, .deviceOffline, .offline),
    (.reconnecting, .socketConnected, .connected), (.reconnecting, .temporaryFailure, .disconnected),
    (.reconnecting, .permanentFailure, .error),
    (.offline, .deviceOnline, .reconnecting),
]

/// Where the specification sends `event` from `state`: the list, SOCKET_DROPPED as a
/// temporary failure, LOGOUT from any logged-in state, nothing otherwise.
func specifiedTarget(_ event: SessionEvent, from state: SessionState) -> SessionState? {
    let loggedIn: Set<SessionState> = [.connecting, .connected, .disconnected, .reconnecting, .offline]
    if event == .logout { return loggedIn.contains(state) ? .dispose : nil }
    let effective = event == .socketDropped ? SessionEvent.temporaryFailure : event
    return specification.first { $0.0 == state && $0.1 == effective }?.2
}

@Suite struct SessionTransitionTests {
    @Test(arguments: specification.map { "\($0.0) -\($0.1)-> \($0.2)" })
    func everyListedTransition(_ row: String) {
        let entry = specification.first { "\($0.0) -\($0.1)-> \($0.2)" == row }!
        #expect(SessionTransitions.target(of: entry.1, from: entry.0) == entry.2)
        var machine = SessionMachine(resumingIn: entry.0, jitter: { 1.0 })
        let step = machine.handle(entry.1)
        #expect(step.entered.first == entry.2)
    }

    @Test(arguments: SessionState.allCases)
    func logoutLeavesEveryLoggedInStateForDispose(_ state: SessionState) {
        var machine = SessionMachine(resumingIn: state, jitter: { 1.0 })
        let step = machine.handle(.logout)
        #expect(step.entered == (state.isLoggedIn ? [.dispose] : []))
    }

    /// Every event in every state: the result is the specification's, or the event is
    /// ignored and reported with nothing changed.
    @Test func everyEventInEveryStateMatchesTheSpecification() {
        var checked = 0
        for state in SessionState.allCases {
            for event in SessionEvent.allCases {
                var machine = SessionMachine(resumingIn: state, failureCount: 2, jitter: { 1.0 })
                let step = machine.handle(event)
                if let expected = specifiedTarget(event, from: state) {
                    #expect(step.entered.first == expected, "\(state) + \(event)")
                    #expect(!step.isIgnored)
                } else {
                    #expect(step.isIgnored, "\(state) + \(event) must be ignored")
                    #expect(machine.state == state, "an ignored event never moves the machine")
                    #expect(machine.failureCount == 2, "an ignored event changes nothing")
                    #expect(step.effects.isEmpty)
                }
                checked += 1
            }
        }
        #expect(checked == SessionState.allCases.count * SessionEvent.allCases.count)
        #expect(checked == 150)
    }

    @Test func uiHintsMatchTheSpecification() {
        #expect(SessionState.ready.uiHint == .loginForm)
        #expect(SessionState.loggingIn.uiHint == .loadingIndicator)
        #expect(SessionState.dispose.uiHint == .loadingIndicator)
        #expect(SessionState.onboarding.uiHint == .usernameSelection)
        #expect(SessionState.error.uiHint == .permanentError)
        #expect(SessionState.connected.uiHint == .clientUI(banner: nil))
        #expect(SessionState.connecting.uiHint == .clientUI(banner: .connecting))
        #expect(SessionState.disconnected.uiHint == .clientUI(banner: .disconnected))
        #expect(SessionState.reconnecting.uiHint == .clientUI(banner: .reconnecting))
        #expect(SessionState.offline.uiHint == .clientUI(banner: .deviceOffline))
        #expect(SessionBanner.allCases.map(\.text) == ["Connecting", "Disconnected", "Reconnecting", "Device offline"])
    }
}
