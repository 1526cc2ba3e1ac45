import SwitchboardSession
import Testing

/// Entry and exit behaviour, and the backoff formula.
@Suite struct SessionMachineTests {
    @Test func entryEffectsFollowTheSpecification() {
        var machine = SessionMachine(jitter: { 1.0 })
        #expect(machine.handle(.loginUncached).effects == [.authenticate])
        #expect(machine.handle(.socketConnected).effects == [])
        #expect(machine.handle(.temporaryFailure).effects == [.startRetryTimer(.seconds(1))])
        #expect(machine.handle(.retry).effects == [.cancelRetryTimer, .invalidateCaches, .connect])
        #expect(machine.handle(.logout).effects == [.disposeClient])
        #expect(machine.handle(.ready).entered == [.ready])
        #expect(machine.handle(.loginCached).effects == [.connect])
    }

    @Test func aStableConnectionResetsAndDisconnectedCountsFailures() {
        var machine = SessionMachine(resumingIn: .connecting, jitter: { 1.0 })
        for expected in 1...4 {
            _ = machine.handle(.temporaryFailure)
            #expect(machine.failureCount == expected)
            _ = machine.handle(.retry)
        }
        _ = machine.handle(.socketConnected)
        #expect(machine.failureCount == 4, "connecting alone forgives nothing")
        machine.connectionProvedStable()
        #expect(machine.failureCount == 0)
        _ = machine.handle(.socketDropped)
        #expect(machine.state == .disconnected && machine.failureCount == 1)
        machine.connectionProvedStable()
        #expect(machine.failureCount == 1, "only a connection in CONNECTED proves anything")
    }

    /// A server that accepts every connection and drops it at once (draining, or overloaded
    /// behind a proxy) meets a growing backoff, not a retry about once a second for ever.
    @Test func aServerDroppingEveryConnectionMeetsAGrowingBackoff() {
        var machine = SessionMachine(resumingIn: .connected, jitter: { 1.0 })
        var delays: [Duration] = []
        for _ in 1...5 {
            let step = machine.handle(.socketDropped)
            for case let .startRetryTimer(delay) in step.effects { delays.append(delay) }
            _ = machine.handle(.retry)
            _ = machine.handle(.socketConnected)
        }
        #expect(delays == [.seconds(1), .seconds(3), .seconds(7), .seconds(15), .seconds(31)])
    }

    @Test func enteringDisconnectedWhileOfflineGoesOfflineWithoutATimer() {
        var machine = SessionMachine(resumingIn: .connected, jitter: { 1.0 })
        #expect(machine.handle(.deviceOffline).isIgnored, "CONNECTED does not take DEVICE_OFFLINE, but it is remembered")
        let step = machine.handle(.socketDropped)
        #expect(step.entered == [.disconnected, .offline])
        #expect(!step.effects.contains { if case .startRetryTimer = $0 { true } else { false } })
        #expect(machine.failureCount == 1)
        #expect(machine.handle(.deviceOnline).effects == [.invalidateCaches, .connect])
        #expect(machine.state == .reconnecting)
    }

    @Test func leavingDisconnectedCancelsTheTimer() {
        for (event, target) in [(SessionEvent.retry, SessionState.reconnecting), (.deviceOffline, .offline), (.logout, .dispose)] {
            var machine = SessionMachine(resumingIn: .disconnected, failureCount: 1, jitter: { 1.0 })
            let step = machine.handle(event)
            #expect(step.entered.first == target)
            #expect(step.effects.first == .cancelRetryTimer, "\(event) leaves DISCONNECTED and must cancel its timer")
        }
    }

    @Test(arguments: [0.8, 1.0, 1.2])
    func backoffMatchesTheFormulaExactly(jitter: Double) {
        // (2^x − 1) s × jitter, in milliseconds, for x = 1...6.
        let expected: [Int64] = [1, 3, 7, 15, 31, 63].map { Int64((Double($0) * jitter * 1000).rounded()) }
        var machine = SessionMachine(resumingIn: .connecting, jitter: { jitter })
        var delays: [Duration] = []
        for _ in 1...6 {
            let step = machine.handle(.temporaryFailure)
            if case let .startRetryTimer(delay)? = step.effects.last { delays.append(delay) }
            _ = machine.handle(.retry)
        }
        #expect(delays == expected.map { .milliseconds($0) })
        #expect(RetryBackoff().delay(failureCount: 1, jitter: jitter) == .milliseconds(Int64(jitter * 1000)))
    }

    /// A jitter source that gives no number is taken as no jitter (found by review: NaN went
    /// through the clamp, and converting the delay trapped); out-of-range ones are clamped.
    @Test func aJitterThatIsNoNumberIsNone() {
        let backoff = RetryBackoff()
        #expect(backoff.delay(failureCount: 3, jitter: .nan) == .seconds(7))
        #expect(backoff.delay(failureCount: 3, jitter: .infinity) == .seconds(7))
        #expect(backoff.delay(failureCount: 3, jitter: -.infinity) == .seconds(7))
        #expect(backoff.delay(failureCount: 3, jitter: 5) == .milliseconds(8400))
        #expect(backoff.delay(failureCount: 3, jitter: -5) == .milliseconds(5600))
    }

    @Test func retryAfterIsTheLowerBoundAndTheDelayIsCapped() {
        let backoff = RetryBackoff(maximum: .seconds(300))
        #expect(backoff.delay(failureCount: 1, jitter: 0.8, floor: .seconds(30)) == .seconds(30))
        #expect(backoff.delay(failureCount: 1, jitter: 1.0, floor: .seconds(30)) == .seconds(33), "spread past the floor")
        #expect(backoff.delay(failureCount: 1, jitter: 1.2, floor: .seconds(30)) == .seconds(36))
        #expect(backoff.delay(failureCount: 6, jitter: 1.0, floor: .seconds(30)) == .seconds(63))
        #expect(backoff.delay(failureCount: 20, jitter: 1.2) == .seconds(300))
        #expect(backoff.delay(failureCount: 20, jitter: 0.8) == .seconds(240), "at the cap the jitter still spreads clients")
        #expect(backoff.delay(failureCount: 20, jitter: 1.0) == .seconds(270))
        #expect(backoff.delay(failureCount: 8, jitter: 0.8) == .milliseconds(204_000), "below the cap, the formula")
        #expect(RetryBackoff(maximum: nil).delay(failureCount: 10, jitter: 1.0) == .seconds(1023))
        #expect(RetryBackoff(maximum: nil).delay(failureCount: 500, jitter: 1.2) > .seconds(1_000_000), "huge counts saturate, never trap")
        #expect(backoff.delay(failureCount: 2, jitter: 5) == .milliseconds(3600), "jitter is clamped to 1.2")
        #expect(RetryBackoff(maximum: .milliseconds(1500)).delay(failureCount: 5, jitter: 1.2) == .milliseconds(1500), "sub-second caps hold")
        #expect(RetryBackoff(maximum: .milliseconds(1500)).delay(failureCount: 5, jitter: 1.0) == .milliseconds(1350))
        #expect(RetryBackoff(maximum: .zero).delay(failureCount: 5, jitter: 1.2) == .seconds(1), "a zero cap would retry in a tight loop")
        // A server's Retry-After is a floor up to an hour, not a way to stop the session for good.
        #expect(backoff.delay(failureCount: 1, jitter: 1.0, floor: .seconds(999_999_999)) == .seconds(3600))
        #expect(RetryBackoff(maximum: nil).delay(failureCount: 20, jitter: 1.0, floor: .seconds(999_999_999)) == .seconds(1_048_575),
                "a longer delay of its own stays")
        var machine = SessionMachine(resumingIn: .connecting, jitter: { 0.8 })
        #expect(machine.handle(.temporaryFailure, retryAfter: .seconds(45)).effects == [.startRetryTimer(.seconds(45))])
    }
}
