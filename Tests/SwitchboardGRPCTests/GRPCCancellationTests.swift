import Foundation
import PeerSupport
import SignalChat
@testable import SwitchboardGRPC
import SwitchboardRuntime
import Testing

/// Waits that must end when their caller stops waiting or the server is gone: a cancelled
/// push, a cancelled shutdown, a cancelled subscription, and arrivals asked for after shutdown.
/// Found by review.
@Suite(.timeLimit(.minutes(2)))
struct GRPCCancellationTests {
    /// Holds whoever waits until opened; the wait ignores cancellation, as a stuck handler may.
    final class Gate: @unchecked Sendable {
        private let lock = NSLock()
        private var isOpen = false
        private var waiters: [CheckedContinuation<Void, Never>] = []
        private var entries = 0

        /// Whether anyone has come to the gate.
        var entered: Bool { lock.withLock { entries > 0 } }

        func wait() async {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let passes = lock.withLock { () -> Bool in
                    entries += 1
                    if isOpen { return true }
                    waiters.append(continuation)
                    return false
                }
                if passes { continuation.resume() }
            }
        }

        func open() {
            let waiting = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
                isOpen = true
                defer { waiters = [] }
                return waiters
            }
            for waiter in waiting { waiter.resume() }
        }
    }

    /// `arrivingSubscribers()` asked for after shutdown ends at once ("Ends when the server
    /// shuts down"): shutdown had already finished the streams it knew, and a later one was
    /// registered and never finished.
    @Test func arrivalsAskedForAfterShutdownEndAtOnce() async throws {
        let server = try GRPCServer(router: RPCRouter(routes: []))
        await server.shutdown(timeout: .seconds(1))
        let outcome = Locked<Bool?>(nil)
        let listening = Task {
            var iterator = server.arrivingSubscribers().makeAsyncIterator()
            let next = await iterator.next()
            outcome.withLock { $0 = next == nil }
        }
        let ended = await eventually(within: .seconds(5)) { outcome.current != nil }
        // Not ended: cancelled, which ends the stream, so the test does not hang.
        if !ended { listening.cancel() }
        await listening.value
        #expect(ended, "the stream of arrivals outlived the server")
        #expect(outcome.current == true, "no subscriber arrives after shutdown")
    }

    /// A push whose caller is cancelled returns nil at once (as `ChatServer.Client.push`
    /// does), not at its 30 s timeout; one cancelled before it starts is not sent at all.
    @Test func aCancelledPushReturnsAtOnce() async throws {
        let server = try GRPCServer(router: RPCRouter(routes: []))
        let arrivals = server.arrivingSubscribers()
        let transport = GRPCClientTransport<Authenticated>(host: "127.0.0.1", port: server.port)
        let received = Locked(0)
        let subscription = try await transport.subscribe(toEventsOf: "signal.chat.Messages") { _ in
            received.withLock { $0 += 1 }
            return .withhold(reason: "test")
        }
        var iterator = arrivals.makeAsyncIterator()
        let subscriber = try #require(await iterator.next())
        let returned = Locked(false)
        let push = Task { () -> Int? in
            let status = await subscriber.push(ServerRequest(verb: "PUT", path: "/api/v1/message"), timeout: .seconds(30))
            returned.withLock { $0 = true }
            return status
        }
        #expect(await eventually(within: .seconds(30)) { received.current == 1 }, "the push reached the client")
        try await Task.sleep(for: .milliseconds(200))
        push.cancel()
        #expect(await eventually(within: .seconds(10)) { returned.current }, "the cancelled push waited on")
        // Bounded by the push's own timeout if the expectation above failed.
        #expect(await push.value == nil)
        #expect(subscriber.isOpen, "cancelling one push leaves the subscription")

        let early = await Task { () -> Int? in
            withUnsafeCurrentTask { $0?.cancel() }
            return await subscriber.push(ServerRequest(verb: "PUT", path: "/api/v1/message"), timeout: .seconds(30))
        }.value
        #expect(early == nil)
        try await Task.sleep(for: .milliseconds(300))
        #expect(received.current == 1, "a push cancelled before it started was sent")
        subscription.cancel()
        transport.close()
        await server.shutdown(timeout: .seconds(1))
    }

    /// A handler still running when its subscription is cancelled is not acknowledged when it
    /// returns (the server keeps the push, unacknowledged), and so a transport closed
    /// meanwhile is not reopened to send that acknowledgement.
    @Test func aCancelledSubscriptionSendsNoAcknowledgement() async throws {
        let server = try GRPCServer(router: RPCRouter(routes: []))
        let arrivals = server.arrivingSubscribers()
        let transport = GRPCClientTransport<Authenticated>(host: "127.0.0.1", port: server.port)
        let gate = Gate()
        let returned = Locked(false)
        let subscription = try await transport.subscribe(toEventsOf: "signal.chat.Messages") { _ in
            await gate.wait()
            returned.withLock { $0 = true }
            return .ok
        }
        var iterator = arrivals.makeAsyncIterator()
        let subscriber = try #require(await iterator.next())
        let push = Task { await subscriber.push(ServerRequest(verb: "PUT", path: "/api/v1/message"), timeout: .seconds(30)) }
        let entered = await eventually(within: .seconds(30)) { gate.entered }
        if !entered { gate.open() }
        try #require(entered, "the push reached the handler")
        #expect(transport.connectionsOpened == 1)
        subscription.cancel()
        transport.close()
        gate.open()
        #expect(await eventually(within: .seconds(10)) { returned.current }, "the handler returned")
        try await Task.sleep(for: .milliseconds(500))
        #expect(transport.connectionsOpened == 1, "an acknowledgement after cancel() reopened the closed transport")
        #expect(await push.value == nil, "the push was acknowledged after its subscription was cancelled")
        transport.close()
        await server.shutdown(timeout: .seconds(1))
    }

    /// A shutdown called from a cancelled task waits out its timeout for a call that does
    /// not finish, pausing between checks: `Task.sleep` throws at once there, and the wait
    /// spun a core until the timeout.
    @Test func aCancelledShutdownWaitsWithoutSpinning() async throws {
        let gate = Gate()
        let route = RPCRoute(endpoint: Usernames.lookUpUsernameHash, message: { _, _ in
            await gate.wait()
            return RPCResponse(status: 200)
        }, handler: { _, _ in RPCResponse(status: 500) })
        let server = try GRPCServer(router: RPCRouter(routes: [route]))
        let transport = GRPCClientTransport<Unauthenticated>(host: "127.0.0.1", port: server.port)
        let call = Task {
            _ = await UsernamesClient(transport: transport).lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([1])),
                                                                                options: CallOptions(timeout: .seconds(60)))
        }
        let entered = await eventually(within: .seconds(30)) { gate.entered }
        if !entered { gate.open() }
        try #require(entered, "the call reached its handler")
        let started = ContinuousClock.now
        let shutdown = Task { await server.shutdown(timeout: .seconds(2)) }
        shutdown.cancel()
        await shutdown.value
        let waited = ContinuousClock.now - started
        gate.open()
        // 10 ms apart: about 200 pauses in 2 s (fewer on a loaded machine); a spinning wait
        // loops millions of times.
        #expect(server.shutdownPauses < 1000, "\(server.shutdownPauses) checks in \(waited)")
        #expect(waited >= .milliseconds(1500), "a cancelled shutdown still waits for its calls, up to the timeout: \(waited)")
        #expect(waited < .seconds(20))
        _ = await call.value
        transport.close()
    }
}
