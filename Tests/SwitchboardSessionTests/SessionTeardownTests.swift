import Foundation
import SignalChat
import SwitchboardChat
import SwitchboardRuntime
import SwitchboardSession
import Testing

/// Logging out and shutting down around push handlers (from the session review): a handler
/// that logs out still acknowledges its push, and `shutDown()` returns only once the
/// teardown it interrupts has finished.
@Suite(.timeLimit(.minutes(2)))
struct SessionTeardownTests {
    static let credentials = ChatClient.Credentials(username: "aci", deviceID: 1, password: "pw")

    /// The session's connections end in detached tasks: the task that closed the link after
    /// a logout used to inherit the handler's connection mark, so the close skipped waiting
    /// for the handler and its acknowledgement was refused (the push came back on the next login).
    @Test func aPushHandlerThatLogsOutStillAcknowledgesItsPush() async throws {
        let server = try ChatServer(routes: [])
        defer { server.stop() }
        let session = Session(connector: ChatSessionConnector(url: server.url), clock: ManualClock())
        let handled = Locked(0)
        session.setPushHandler { [weak session] _ in
            session?.logOut()
            // The wipe an app does on logout: the connection's close waits for it.
            try? await Task.sleep(for: .milliseconds(100))
            handled.withLock { $0 += 1 }
            return .acknowledge(RPCResponse(status: 200, message: "OK"))
        }
        session.logIn(cached: Self.credentials)
        #expect(await eventually { session.state == .connected })
        let client = try #require(await server.client(at: 0, timeout: .seconds(30)))
        let answer = await client.push(ServerRequest(verb: "PUT", path: "/api/v1/logout-notice"), timeout: .seconds(10))
        #expect(handled.current == 1)
        #expect(answer?.status == 200, "the handler's acknowledgement was lost to the logout's close")
        await session.shutDown()
    }

    /// `logOut()` then `shutDown()` (what the session guide shows): the app's `disposeClient`
    /// has run when `shutDown()` returns, not afterwards.
    @Test func shutDownRightAfterLogOutReturnsOnceTheClientIsDisposed() async throws {
        let connector = FakeConnector()
        // Whether each disposal slept its whole wipe: not cut short by the shutdown.
        let disposals = Locked<[Bool]>([])
        let session = Session(connector: connector, clock: ManualClock(), disposeClient: {
            let whole = (try? await Task.sleep(for: .milliseconds(200))) != nil
            disposals.withLock { $0.append(whole) }
        })
        session.logIn(cached: Self.credentials)
        #expect(await eventually { session.state == .connected })
        session.logOut()
        await session.shutDown()
        #expect(disposals.current == [true], "disposeClient ran after shutDown() had returned, or was cancelled by it")
    }

    /// DISPOSE waits for a cache invalidation still running before disposing of the client.
    @Test func disposalWaitsForARunningCacheInvalidation() async throws {
        let connector = FakeConnector()
        let events = Locked<[String]>([])
        let invalidating = Locked(false)
        let clock = ManualClock()
        let session = Session(connector: connector, clock: clock, jitter: { 1.0 }, invalidateCaches: {
            invalidating.withLock { $0 = true }
            try? await Task.sleep(for: .milliseconds(300))
            events.withLock { $0.append("invalidated") }
        }, disposeClient: {
            events.withLock { $0.append("disposed") }
        })
        session.logIn(cached: Self.credentials)
        #expect(await eventually { session.state == .connected })
        // The link drops; the retry enters RECONNECTING, whose invalidation starts and runs on.
        try #require(connector.links.current.first).drop(.transport(.io("reset")))
        #expect(await eventually { session.state == .disconnected && clock.nextDeadline != nil })
        if let next = clock.nextDeadline { clock.advance(by: clock.now.duration(to: next)) }
        #expect(await eventually { invalidating.current })
        session.logOut()
        #expect(await eventually { events.current.count == 2 })
        #expect(events.current == ["invalidated", "disposed"])
        await session.shutDown()
    }

    /// A door a push handler waits at, ignoring cancellation, until the test opens it.
    final class Gate: @unchecked Sendable {
        private let state = Locked<(open: Bool, waiter: CheckedContinuation<Void, Never>?, entered: Bool)>((false, nil, false))
        var entered: Bool { state.current.entered }
        func wait() async {
            await withCheckedContinuation { continuation in
                let now = state.withLock { state -> Bool in
                    state.entered = true
                    if state.open { return true }
                    state.waiter = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        }
        func open() {
            state.withLock { state -> CheckedContinuation<Void, Never>? in
                state.open = true
                defer { state.waiter = nil }
                return state.waiter
            }?.resume()
        }
    }

    /// The server going away is seen when the socket closes, not once a push handler still
    /// running returns (up to the 5 s grace): meanwhile the session stayed CONNECTED on a
    /// closed link, whose requests failed as `disconnected` (sent, for all a retry knew).
    @Test func aDropIsSeenWhileAPushHandlerStillRuns() async throws {
        let server = try ChatServer(routes: [])
        let session = Session(connector: ChatSessionConnector(url: server.url), clock: ManualClock())
        let gate = Gate()
        session.setPushHandler { _ in
            await gate.wait()
            return .acknowledge(RPCResponse(status: 200, message: "OK"))
        }
        session.logIn(cached: Self.credentials)
        #expect(await eventually { session.state == .connected })
        let client = try #require(await server.client(at: 0, timeout: .seconds(30)))
        let push = Task { await client.push(ServerRequest(verb: "PUT", path: "/api/v1/message"), timeout: .seconds(30)) }
        #expect(await eventually { gate.entered })
        server.stop()
        #expect(await eventually(.seconds(3)) { session.state == .disconnected }, "the session stayed on the closed link while its handler ran")
        let call = await MessagesClient(transport: session.transport).sendMessage(
            SendMessageRequest(destination: "a", timestamp: Date(), messages: [], online: false, urgent: false))
        guard case .failure(.notConnected) = call else {
            Issue.record("a call after the drop must fail unsent (notConnected), got \(call)")
            gate.open()
            return
        }
        gate.open()
        _ = await push.value
        await session.shutDown()
    }
}
