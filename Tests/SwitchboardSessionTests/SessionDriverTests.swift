import Foundation
import SignalChat
import SwitchboardChat
import SwitchboardRuntime
import SwitchboardSession
import Testing

/// The driver around the pure machine, with a scripted connector, in virtual time.
@Suite(.timeLimit(.minutes(3))) struct SessionDriverTests {
    func makeSession(_ connector: FakeConnector, clock: ManualClock, jitter: Double = 0.8,
                     login: @escaping Session<ManualClock>.Login = { .account(credentials) },
                     invalidated: Locked<Int> = Locked(0), disposed: Locked<Int> = Locked(0)) -> Session<ManualClock> {
        Session(connector: connector, clock: clock, jitter: { jitter }, login: login,
                invalidateCaches: { invalidated.withLock { $0 += 1 } }, disposeClient: { disposed.withLock { $0 += 1 } })
    }

    /// A session logged in with cached credentials and connected, on a manual clock.
    func connectedSession() async throws -> (Session<ManualClock>, FakeConnector, ManualClock) {
        let clock = ManualClock()
        let connector = FakeConnector()
        let session = makeSession(connector, clock: clock)
        session.logIn(cached: credentials)
        try #require(await eventually { session.state == .connected })
        return (session, connector, clock)
    }

    @Test func cachedLoginConnectsAndRequestsFailFastOtherwise() async throws {
        let clock = ManualClock()
        let session = makeSession(FakeConnector(), clock: clock)
        let log = ChangeLog(session)
        let usernames = MessagesClient(transport: session.transport)
        guard case .failure(.notConnected) = await usernames.sendMessage(SendMessageRequest(destination: "bob")) else {
            Issue.record("before login, requests fail fast with notConnected")
            return
        }
        session.logIn(cached: credentials)
        #expect(await eventually { session.state == .connected })
        #expect(try await session.transport.send(RPCRequest(endpoint: Messages.sendMessage, path: "/v1/messages/bob")).status == 200)
        #expect(await eventually { log.states == [.connecting, .connected] })
        #expect(log.changes.current.map(\.uiHint) == [.clientUI(banner: .connecting), .clientUI(banner: nil)])
        await session.shutDown()
    }

    @Test func aDropRetriesAfterTheBackoffInVirtualTime() async throws {
        let clock = ManualClock()
        let connector = FakeConnector()
        let invalidated = Locked(0)
        let session = makeSession(connector, clock: clock, invalidated: invalidated)
        let log = ChangeLog(session)
        session.logIn(cached: credentials)
        #expect(await eventually { session.state == .connected })
        try #require(connector.links.current.first).drop(.transport(.io("network down")))
        #expect(await eventually { session.state == .disconnected })
        #expect(session.failureCount == 1)
        do {
            _ = try await session.transport.send(RPCRequest(endpoint: Messages.sendMessage, path: "/v1/messages/bob"))
            Issue.record("requests while disconnected fail fast")
        } catch {
            #expect(error == .notConnected)
        }
        #expect(await clock.waitForSleepers(1))
        clock.advance(by: .milliseconds(799))
        try await Task.sleep(for: .milliseconds(50))
        #expect(session.state == .disconnected, "not before (2^1 − 1) s × 0.8")
        clock.advance(by: .milliseconds(1))
        #expect(await eventually { session.state == .connected })
        #expect(connector.attempts.current == 2)
        #expect(invalidated.current == 1, "reconnecting invalidates cached data")
        #expect(await eventually { log.states == [.connecting, .connected, .disconnected, .reconnecting, .connected] })
        #expect(log.changes.current[2].failureCount == 1 && log.changes.current[2].uiHint == .clientUI(banner: .disconnected))
        // The failure is forgiven once the new connection has stayed up for 30 s.
        #expect(session.failureCount == 1)
        #expect(await heartbeatAndStabilityTimerSleep(clock))
        clock.advance(by: .seconds(29))
        try await Task.sleep(for: .milliseconds(50))
        #expect(session.failureCount == 1)
        clock.advance(by: .seconds(1))
        #expect(await eventually { session.failureCount == 0 })
        await session.shutDown()
    }

    /// Waits until exactly the heartbeat and the stability timer, both 30 s out, sleep on the
    /// clock and nothing else: another timer still counted for a moment (the connect
    /// attempt's, cancelled once connected) let time advance before the heartbeat was armed,
    /// on a loaded machine (the stability tests failed so twice).
    func heartbeatAndStabilityTimerSleep(_ clock: ManualClock) async -> Bool {
        await eventually {
            let due = clock.now.advanced(by: .seconds(30))
            return clock.sleeperDeadlines == [due, due]
        }
    }

    /// A session whose first connection dropped (one failure) and that reconnected, after the
    /// backoff, to `link`, which has spoken once.
    func reconnectedAfterOneFailure(to link: FakeLink) async throws -> (Session<ManualClock>, FakeConnector, ManualClock) {
        let clock = ManualClock()
        let connector = FakeConnector([.link(FakeLink()), .link(link)])
        let session = makeSession(connector, clock: clock)
        session.logIn(cached: credentials)
        #expect(await eventually { session.state == .connected })
        try #require(connector.links.current.first).drop(.transport(.io("network down")))
        #expect(await eventually { session.state == .disconnected && session.failureCount == 1 })
        #expect(await clock.waitForSleepers(1))
        clock.advance(by: .milliseconds(800))
        link.speak()
        #expect(await eventually { session.state == .connected })
        return (session, connector, clock)
    }

    /// A server that goes silent after its first message is not forgiven for being up 30 s:
    /// only hearing from it after that proves the connection stable, so a half-dead server
    /// is retried ever more slowly (found by review: it was forgiven at 30 s, dropped by the
    /// heartbeat at 40 s, and retried after the first backoff step for ever).
    @Test func aConnectionSilentPastTheStableIntervalIsNotForgiven() async throws {
        let silent = FakeLink(answersProbes: false)
        let (session, connector, clock) = try await reconnectedAfterOneFailure(to: silent)
        #expect(connector.attempts.current == 2)
        #expect(await heartbeatAndStabilityTimerSleep(clock))
        // The connect probed once already: counted from here, the heartbeat's is one more
        // (a count of exactly 1 was the connect's, and failed the test whenever the heartbeat
        // probed before it was read).
        let afterConnect = silent.probes.current
        #expect(afterConnect == 1, "the connect's own probe")
        clock.advance(by: .seconds(30))
        #expect(await eventually { silent.probes.current == afterConnect + 1 }, "a heartbeat after 30 s of silence")
        try await Task.sleep(for: .milliseconds(50))
        #expect(session.failureCount == 1, "up 30 s but not heard from since: not forgiven")
        #expect(await clock.waitForSleepers(1))
        clock.advance(by: .seconds(10))
        #expect(await eventually { session.state == .disconnected })
        #expect(session.failureCount == 2, "the silent connection's drop is a second failure in a row")
        await session.shutDown()
    }

    /// A connection heard from only after the stable interval proves stable then.
    @Test func aConnectionHeardFromAfterTheStableIntervalIsForgivenThen() async throws {
        let late = FakeLink(answersProbes: false)
        let (session, _, clock) = try await reconnectedAfterOneFailure(to: late)
        #expect(await heartbeatAndStabilityTimerSleep(clock))
        let afterConnect = late.probes.current
        clock.advance(by: .seconds(30))
        #expect(await eventually { late.probes.current == afterConnect + 1 })
        try await Task.sleep(for: .milliseconds(50))
        #expect(session.failureCount == 1)
        clock.advance(by: .seconds(5))
        late.speak() // the heartbeat's answer, late but within its timeout
        #expect(await eventually { session.failureCount == 0 })
        #expect(session.state == .connected)
        await session.shutDown()
    }

    @Test func goingOfflineCancelsTheRetryTimer() async throws {
        let (session, connector, clock) = try await connectedSession()
        try #require(connector.links.current.first).drop(.transport(.io("gone")))
        #expect(await eventually { session.state == .disconnected })
        #expect(await clock.waitForSleepers(1), "the retry timer is armed")
        session.deviceOffline()
        #expect(session.state == .offline)
        #expect(await eventually { clock.sleeperCount == 0 }, "leaving DISCONNECTED cancels the timer")
        clock.advance(by: .seconds(3600))
        try await Task.sleep(for: .milliseconds(50))
        #expect(session.state == .offline && connector.attempts.current == 1)
        session.deviceOnline()
        #expect(await eventually { session.state == .connected })
        await session.shutDown()
    }

    /// A network that flaps (offline, online, again) cancels the retry timer each time and
    /// reconnects at once; after repeated failures a connect still waits out the backoff from
    /// the last one's start, so flapping does not make one connect per flap (found by review).
    @Test func aFlappingNetworkMeetsTheBackoffAfterRepeatedFailures() async throws {
        let clock = ManualClock()
        let refused = ChatConnectionError.retryLater(retryAfter: nil)
        let connector = FakeConnector([.fail(refused), .fail(refused), .fail(refused)])
        let session = makeSession(connector, clock: clock)
        session.logIn(cached: credentials)
        #expect(await eventually { session.state == .disconnected && connector.attempts.current == 1 })
        // One failure: back online reconnects at once, as the specification says.
        session.deviceOffline()
        session.deviceOnline()
        #expect(await eventually { connector.attempts.current == 2 && session.state == .disconnected })
        // Two failures: the next connect waits (2^1 − 1) s × 0.8 from the last one's start.
        session.deviceOffline()
        session.deviceOnline()
        #expect(await clock.waitForSleepers(1))
        try await Task.sleep(for: .milliseconds(50))
        #expect(connector.attempts.current == 2)
        clock.advance(by: .milliseconds(799))
        try await Task.sleep(for: .milliseconds(50))
        #expect(connector.attempts.current == 2, "not before the backoff of the first failure")
        clock.advance(by: .milliseconds(1))
        #expect(await eventually { connector.attempts.current == 3 })
        await session.shutDown()
    }

    @Test func theHeartbeatProbesAfter30SecondsAndDropsWithoutAnAnswer() async throws {
        let clock = ManualClock()
        let silent = FakeLink(answersProbes: false)
        let connector = FakeConnector([.link(silent)])
        let session = makeSession(connector, clock: clock)
        let log = ChangeLog(session)
        session.logIn(cached: credentials)
        silent.speak() // the first message makes the connection count as connected
        #expect(await eventually { session.state == .connected })
        let afterConnect = silent.probes.current
        #expect(await clock.waitForSleepers(1))
        clock.advance(by: .seconds(29))
        try await Task.sleep(for: .milliseconds(30))
        #expect(silent.probes.current == afterConnect)
        clock.advance(by: .seconds(1))
        #expect(await eventually { silent.probes.current == afterConnect + 1 }, "a heartbeat after 30 s of silence")
        #expect(await clock.waitForSleepers(1))
        clock.advance(by: .seconds(10))
        #expect(await eventually { session.state == .disconnected }, "no answer within 10 s drops the socket")
        #expect(await eventually { log.changes.current.last?.reason == .keepaliveTimedOut })
        #expect(silent.hasEnded)
        await session.shutDown()
    }

    @Test func answeredHeartbeatsKeepTheSessionConnected() async throws {
        let clock = ManualClock()
        let live = FakeLink(answersProbes: true)
        let session = makeSession(FakeConnector([.link(live)]), clock: clock)
        session.logIn(cached: credentials)
        #expect(await eventually { session.state == .connected })
        for round in 1...5 {
            // Each answered heartbeat schedules the next one 30 s later.
            #expect(await eventually { clock.nextDeadline == clock.now.advanced(by: .seconds(30)) }, "round \(round)")
            clock.advance(by: .seconds(30))
            #expect(await eventually { live.probes.current >= round + 1 })
        }
        #expect(session.state == .connected)
        await session.shutDown()
    }

    @Test func aConnectionThatNeverSpeaksIsDroppedAfterTheConnectTimeout() async throws {
        let clock = ManualClock()
        let mute = FakeLink(answersProbes: false)
        let session = makeSession(FakeConnector([.link(mute)]), clock: clock)
        let log = ChangeLog(session)
        session.logIn(cached: credentials)
        #expect(await clock.waitForSleepers(1))
        clock.advance(by: .seconds(9))
        try await Task.sleep(for: .milliseconds(30))
        #expect(session.state == .connecting)
        clock.advance(by: .seconds(1))
        #expect(await eventually { session.state == .disconnected })
        #expect(session.failureCount == 1)
        _ = await eventually { log.changes.current.last?.to == .disconnected }
        if case .transport(.timeout)? = log.changes.current.last?.reason {} else {
            Issue.record("the connect timeout is a temporary failure, got \(String(describing: log.changes.current.last?.reason))")
        }
        #expect(await eventually { mute.hasEnded }, "the silent socket is closed, not leaked")
        await session.shutDown()
    }

    @Test func aPermanentFailureShowsTheErrorUntilDismissed() async throws {
        let clock = ManualClock()
        let disposed = Locked(0)
        let session = makeSession(FakeConnector([.fail(.credentialsRejected)]), clock: clock, disposed: disposed)
        let log = ChangeLog(session)
        session.logIn(cached: credentials)
        #expect(await eventually { session.state == .error })
        #expect(await eventually { log.changes.current.last?.reason == .credentialsRejected })
        #expect(log.changes.current.last?.uiHint == .permanentError)
        session.dismiss()
        #expect(await eventually { session.state == .ready })
        #expect(disposed.current == 1)
        #expect(await eventually { log.states == [.connecting, .error, .dispose, .ready] })
        await session.shutDown()
    }

    @Test func retryAfterSetsTheLeastDelay() async throws {
        let clock = ManualClock()
        let session = makeSession(FakeConnector([.fail(.retryLater(retryAfter: .seconds(30)))]), clock: clock)
        session.logIn(cached: credentials)
        #expect(await eventually { session.state == .disconnected })
        #expect(await clock.waitForSleepers(1))
        #expect(clock.nextDeadline == clock.now.advanced(by: .seconds(30)), "not (2^1 − 1) × 0.8 s but the server's 30 s")
        await session.shutDown()
    }

    @Test func loginOnboardingAndUserCreation() async throws {
        let clock = ManualClock()
        let logins = Locked(0)
        let session = makeSession(FakeConnector(), clock: clock, login: {
            let count = logins.withLock { value -> Int in
                value += 1
                return value
            }
            return count == 1 ? LoginOutcome.noUser : .account(credentials)
        })
        let log = ChangeLog(session)
        session.logIn()
        #expect(await eventually { session.state == .onboarding })
        #expect(await eventually { log.changes.current.last?.uiHint == .usernameSelection })
        session.userCreated()
        #expect(await eventually { session.state == .connected })
        #expect(await eventually { log.states == [.loggingIn, .onboarding, .loggingIn, .connected] })
        #expect(logins.current == 2)
        await session.shutDown()
    }

    @Test func connectedElsewhereStopsReconnecting() async throws {
        let clock = ManualClock()
        let connector = FakeConnector()
        let invalidated = Locked(0)
        let session = makeSession(connector, clock: clock, invalidated: invalidated)
        let log = ChangeLog(session)
        session.logIn(cached: credentials)
        try #require(await eventually { session.state == .connected })
        try #require(connector.links.current.first).drop(.connectedElsewhere)
        // Without the clock moving: a permanent close is reported at once, not after a backoff.
        #expect(await eventually { session.state == .error }, "4409 is permanent: no reconnect kicks the other device")
        #expect(connector.attempts.current == 1)
        #expect(invalidated.current == 0, "no reconnect ran, so the caches were kept")
        #expect(await eventually { log.states == [.connecting, .connected, .disconnected, .reconnecting, .error] })
        #expect(log.changes.current.last?.reason == .connectedElsewhere)
        await session.shutDown()
    }

    /// A reconnect waits until the dropped link has ended (its push handler returned), so
    /// the old handler and the new link's never run at once (from the session review).
    @Test func aReconnectWaitsForTheDroppedLinkToEnd() async throws {
        let clock = ManualClock()
        let first = FakeLink(answersProbes: false)
        first.slowEnd.withLock { $0 = true }
        let connector = FakeConnector([.link(first)])
        let session = makeSession(connector, clock: clock)
        session.logIn(cached: credentials)
        first.speak()
        try #require(await eventually { session.state == .connected })
        // The heartbeat declares the link dead; its end (a push handler finishing) takes a while.
        let afterConnect = first.probes.current
        #expect(await clock.waitForSleepers(1))
        clock.advance(by: .seconds(30))
        #expect(await eventually { first.probes.current == afterConnect + 1 })
        #expect(await clock.waitForSleepers(1))
        clock.advance(by: .seconds(10))
        #expect(await eventually { session.state == .disconnected })
        #expect(await clock.waitForSleepers(1))
        clock.advance(by: .seconds(1))
        #expect(await eventually { session.state == .reconnecting })
        try await Task.sleep(for: .milliseconds(100))
        #expect(connector.attempts.current == 1, "no second link while the first is still ending")
        first.finishEnding()
        #expect(await eventually { session.state == .connected })
        #expect(connector.attempts.current == 2)
        await session.shutDown()
    }

    /// A Retry-After holds when the device goes offline and back before it has passed:
    /// coming back online does not reconnect against the server's instruction.
    @Test func retryAfterHoldsAcrossOfflineAndOnline() async throws {
        let clock = ManualClock()
        let connector = FakeConnector([.fail(.retryLater(retryAfter: .seconds(600)))])
        let session = makeSession(connector, clock: clock)
        session.logIn(cached: credentials)
        #expect(await eventually { session.state == .disconnected })
        session.deviceOffline()
        #expect(await eventually { session.state == .offline })
        clock.advance(by: .seconds(5))
        session.deviceOnline()
        #expect(await eventually { session.state == .reconnecting })
        try await Task.sleep(for: .milliseconds(100))
        #expect(connector.attempts.current == 1, "the connect waits for the server's 600 s")
        clock.advance(by: .seconds(594))
        try await Task.sleep(for: .milliseconds(50))
        #expect(connector.attempts.current == 1)
        clock.advance(by: .seconds(1))
        #expect(await eventually { session.state == .connected })
        #expect(connector.attempts.current == 2)
        await session.shutDown()
    }

    /// A hostile `Retry-After` is held no longer than the backoff holds a server's word (an
    /// hour): the reconnect after it is not parked for 31 years (found by review).
    @Test func anAbsurdRetryAfterHoldsTheReconnectForAnHourAtMost() async throws {
        let clock = ManualClock()
        let connector = FakeConnector([.fail(.retryLater(retryAfter: .seconds(999_999_999)))])
        let session = makeSession(connector, clock: clock)
        session.logIn(cached: credentials)
        #expect(await eventually { session.state == .disconnected })
        #expect(await clock.waitForSleepers(1))
        clock.advance(by: .seconds(3_599))
        try await Task.sleep(for: .milliseconds(50))
        #expect(connector.attempts.current == 1, "the hour is held")
        clock.advance(by: .seconds(1))
        #expect(await eventually { session.state == .connected })
        #expect(connector.attempts.current == 2)
        await session.shutDown()
    }

    /// A push that arrives before the app set its handler is answered as failed (500), which
    /// the server keeps for a later connection; 404 would have acknowledged it as handled.
    @Test func aPushBeforeTheHandlerIsSetIsNotAcknowledged() async throws {
        let (session, connector, _) = try await connectedSession()
        let push = try #require(connector.pushHandlers.current.first)
        guard case .handlerFailed = await push(ServerRequest(verb: "PUT", path: "/api/v1/message")) else {
            Issue.record("a push with no handler set must not be acknowledged")
            return
        }
        await session.shutDown()
    }

    /// A socket that connects after the connect timeout decided the attempt is closed and
    /// never used: not probed, not a link for requests (from the client review).
    @Test func aSocketArrivingAfterTheConnectTimeoutIsClosedUnused() async throws {
        let clock = ManualClock()
        let late = FakeLink()
        let connector = FakeConnector([.held(late)])
        let session = makeSession(connector, clock: clock)
        session.logIn(cached: credentials)
        #expect(await eventually { connector.attempts.current == 1 })
        #expect(await clock.waitForSleepers(1))
        clock.advance(by: .seconds(10))
        #expect(await eventually { session.state == .disconnected })
        connector.release()
        #expect(await eventually { late.hasEnded }, "the late socket is closed")
        #expect(late.probes.current == 0, "and never probed")
        await session.shutDown()
    }

    @Test func aSocketArrivingAfterLogoutIsClosed() async throws {
        let clock = ManualClock()
        let late = FakeLink()
        let connector = FakeConnector([.held(late)])
        let session = makeSession(connector, clock: clock)
        session.logIn(cached: credentials)
        #expect(await eventually { connector.attempts.current == 1 })
        session.logOut()
        #expect(await eventually { session.state == .ready })
        connector.release()
        #expect(await eventually { late.hasEnded }, "the late socket is closed")
        try await Task.sleep(for: .milliseconds(30))
        #expect(session.state == .ready)
        await session.shutDown()
    }

    /// Lets the connect time out (10 s), then `meanwhile` runs in DISCONNECTED, then the
    /// retry timer fires (1 s): the session is RECONNECTING.
    static func timeOutTheConnectAndRetry(_ session: Session<ManualClock>, clock: ManualClock,
                                          meanwhile: () async -> Void = {}) async {
        #expect(await clock.waitForSleepers(1))
        clock.advance(by: .seconds(10))
        #expect(await eventually { session.state == .disconnected })
        await meanwhile()
        #expect(await clock.waitForSleepers(1))
        clock.advance(by: .seconds(1))
        #expect(await eventually { session.state == .reconnecting })
    }

    /// A connect that times out while its socket's push handler runs: the reconnect waits
    /// for that socket to end (and its handler to return), and the socket takes no more pushes.
    @Test func aReconnectAfterAConnectTimeoutWaitsForTheTimedOutSocket() async throws {
        let clock = ManualClock()
        let quiet = FakeLink(answersProbes: false)
        quiet.slowEnd.withLock { $0 = true }
        let connector = FakeConnector([.link(quiet)])
        let session = makeSession(connector, clock: clock)
        let handlerGate = AsyncStream<Void>.makeStream()
        let running = Locked(0)
        let calls = Locked(0)
        session.setPushHandler { _ in
            // Only the first call waits, so a test failing here fails fast.
            guard calls.withLock({ $0 += 1; return $0 }) == 1 else { return .ok }
            running.withLock { $0 += 1 }
            for await _ in handlerGate.stream {}
            running.withLock { $0 -= 1 }
            return .ok
        }
        session.logIn(cached: credentials)
        #expect(await eventually { connector.links.current.count == 1 })
        let push = try #require(connector.pushHandlers.current.first)
        let first = Task { await push(ServerRequest(verb: "PUT", path: "/api/v1/message")) }
        #expect(await eventually { running.current == 1 })
        await Self.timeOutTheConnectAndRetry(session, clock: clock) {
            if case .withhold = await push(ServerRequest(verb: "PUT", path: "/api/v1/message")) {} else {
                Issue.record("a socket whose connect timed out takes no more pushes")
            }
        }
        try await Task.sleep(for: .milliseconds(100))
        #expect(connector.attempts.current == 1, "no second socket while the timed-out one is ending")
        quiet.finishEnding()
        try await Task.sleep(for: .milliseconds(100))
        #expect(connector.attempts.current == 1, "nor while its push handler still runs")
        #expect(calls.current == 1)
        handlerGate.continuation.finish()
        _ = await first.value
        #expect(await eventually { connector.attempts.current == 2 })
        #expect(quiet.abruptEnds.current == 1, "a socket that never spoke is not asked for a closing handshake")
        await session.shutDown()
    }

    /// A push handler that ignores its cancellation holds the reconnect for
    /// `pushHandlerGrace` at most (its connection has cancelled it by then).
    @Test func aHungPushHandlerHoldsTheReconnectForTheGraceAtMost() async throws {
        let clock = ManualClock()
        let quiet = FakeLink(answersProbes: false)
        let connector = FakeConnector([.link(quiet)])
        let session = Session(connector: connector, configuration: SessionConfiguration(pushHandlerGrace: .seconds(5)), clock: clock,
                              jitter: { 0.8 }, login: { .account(credentials) })
        let release = AsyncStream<Void>.makeStream()
        let running = Locked(false)
        session.setPushHandler { _ in
            running.withLock { $0 = true }
            // Deaf to cancellation: returns only when the test lets it.
            await withTaskCancellationHandler {
                for await _ in release.stream {}
            } onCancel: {}
            return .ok
        }
        session.logIn(cached: credentials)
        #expect(await eventually { connector.links.current.count == 1 })
        let push = try #require(connector.pushHandlers.current.first)
        let hung = Task { await push(ServerRequest(verb: "PUT", path: "/api/v1/message")) }
        #expect(await eventually { running.current })
        await Self.timeOutTheConnectAndRetry(session, clock: clock)
        // The reconnect now waits on the grace's timer.
        #expect(await clock.waitForSleepers(1))
        try await Task.sleep(for: .milliseconds(100))
        #expect(connector.attempts.current == 1, "the handler still runs: no second socket yet")
        clock.advance(by: .seconds(5))
        #expect(await eventually { connector.attempts.current == 2 }, "past the grace the reconnect goes ahead")
        release.continuation.finish()
        _ = await hung.value
        await session.shutDown()
    }

    /// A logout while the socket is up but has not spoken yet: the socket is closed, and
    /// DISPOSE waits for it as for a connected one.
    @Test func disposeWaitsForASocketThatWasStillConnecting() async throws {
        let clock = ManualClock()
        let quiet = FakeLink(answersProbes: false)
        quiet.slowEnd.withLock { $0 = true }
        let connector = FakeConnector([.link(quiet)])
        let disposed = Locked(0)
        let session = makeSession(connector, clock: clock, disposed: disposed)
        session.logIn(cached: credentials)
        #expect(await eventually { connector.links.current.count == 1 })
        #expect(session.state == .connecting)
        session.logOut()
        #expect(await eventually { session.state == .dispose })
        try await Task.sleep(for: .milliseconds(100))
        #expect(disposed.current == 0, "the client is not disposed while its socket is still closing")
        quiet.finishEnding()
        #expect(await eventually { session.state == .ready })
        #expect(quiet.hasEnded && disposed.current == 1)
        await session.shutDown()
    }

    @Test func eventsAStateDoesNotTakeAreReported() async throws {
        let session = makeSession(FakeConnector(), clock: ManualClock())
        let log = ChangeLog(session)
        session.dismiss()
        session.deviceOnline()
        #expect(await eventually { log.ignored.current.count == 2 })
        #expect(log.ignored.current == [IgnoredSessionEvent(event: .dismiss, state: .ready), IgnoredSessionEvent(event: .deviceOnline, state: .ready)])
        #expect(session.state == .ready && log.changes.current.isEmpty)
        await session.shutDown()
    }

    @Test func anIgnoredCachedLoginDoesNotReplaceTheCredentials() async throws {
        let (session, connector, clock) = try await connectedSession()
        session.logIn(cached: ChatClient.Credentials(username: "someone-else", deviceID: 9, password: "x"))
        try #require(connector.links.current.first).drop(.transport(.io("gone")))
        #expect(await eventually { session.state == .disconnected })
        #expect(await clock.waitForSleepers(1))
        clock.advance(by: .seconds(1))
        #expect(await eventually { session.state == .connected })
        #expect(connector.usedCredentials.current.map(\.username) == ["aci", "aci"])
        await session.shutDown()
    }

    @Test func disposeWaitsForTheSocketToCloseAndOldPushesAreWithheld() async throws {
        let clock = ManualClock()
        let link = FakeLink()
        link.slowEnd.withLock { $0 = true }
        let connector = FakeConnector([.link(link)])
        let disposed = Locked(0)
        let session = makeSession(connector, clock: clock, disposed: disposed)
        let handled = Locked(0)
        session.setPushHandler { _ in
            handled.withLock { $0 += 1 }
            return .ok
        }
        session.logIn(cached: credentials)
        #expect(await eventually { session.state == .connected })
        let push = try #require(connector.pushHandlers.current.first)
        guard case .acknowledge = await push(ServerRequest(verb: "PUT", path: "/api/v1/message")) else {
            Issue.record("a push on the current connection reaches the app")
            return
        }
        session.logOut()
        #expect(await eventually { session.state == .dispose })
        try await Task.sleep(for: .milliseconds(50))
        #expect(disposed.current == 0, "the client is not disposed while its socket is still closing")
        guard case .withhold = await push(ServerRequest(verb: "PUT", path: "/api/v1/message")) else {
            Issue.record("a push on a connection the session left stays with the server")
            return
        }
        link.finishEnding()
        #expect(await eventually { session.state == .ready })
        #expect(disposed.current == 1 && handled.current == 1)
        await session.shutDown()
    }

    @Test func aConnectionDeliveringPushesBeforeItCountsAsUpCanTakeRequests() async throws {
        let clock = ManualClock()
        let quiet = FakeLink(answersProbes: false)
        let connector = FakeConnector([.link(quiet)])
        let session = makeSession(connector, clock: clock)
        session.logIn(cached: credentials)
        #expect(await eventually { connector.links.current.count == 1 })
        // The socket is open but has not spoken: a push handler running now may call out.
        var status: Int?
        for _ in 0..<6000 where status == nil {
            status = try? await session.transport.send(RPCRequest(endpoint: Messages.sendMessage, path: "/v1/messages/bob")).status
            if status == nil { try await Task.sleep(for: .milliseconds(5)) }
        }
        #expect(status == 200)
        #expect(session.state == .connecting)
        await session.shutDown()
    }

    @Test func aLoginThatHangsEndsInErrorAfterTheLoginTimeout() async throws {
        let clock = ManualClock()
        let gate = AsyncStream<Void>.makeStream()
        let session = Session(
            connector: FakeConnector(), configuration: SessionConfiguration(loginTimeout: .seconds(20)), clock: clock, jitter: { 1.0 },
            login: {
                for await _ in gate.stream {}
                return .noUser
            })
        let log = ChangeLog(session)
        session.logIn()
        #expect(session.state == .loggingIn)
        #expect(await clock.waitForSleepers(1), "the login timer")
        clock.advance(by: .seconds(19))
        try await Task.sleep(for: .milliseconds(50))
        #expect(session.state == .loggingIn)
        clock.advance(by: .seconds(1))
        #expect(await eventually { session.state == .error })
        #expect(await eventually { log.changes.current.last?.reason.map { "\($0)".contains("login did not finish") } == true })
        gate.continuation.finish()
        await session.shutDown()
    }

    @Test func aSessionLetGoWithoutShuttingDownClosesItsConnection() async throws {
        let clock = ManualClock()
        let connector = FakeConnector()
        var session: Session<ManualClock>? = makeSession(connector, clock: clock)
        session?.logIn(cached: credentials)
        #expect(await eventually { session?.state == .connected })
        let link = try #require(connector.links.current.first)
        weak let released = session
        session = nil
        #expect(await eventually { released == nil }, "nothing the session started keeps it alive")
        #expect(await eventually { link.hasEnded })
        #expect(await eventually { clock.sleeperCount == 0 }, "its heartbeat and timers stopped")
    }

    @Test func unreadChangesAreBounded() async throws {
        let clock = ManualClock()
        let session = Session(connector: FakeConnector(), configuration: SessionConfiguration(bufferedChanges: 4), clock: clock)
        for _ in 0..<100 { session.deviceOnline() } // ignored in READY, reported each time
        var seen = 0
        for await _ in session.ignoredEvents {
            seen += 1
            if seen == 4 { break }
        }
        #expect(seen == 4)
        await session.shutDown()
        var after = 0
        for await _ in session.ignoredEvents { after += 1 }
        #expect(after == 0, "only the newest four were kept")
    }
}
