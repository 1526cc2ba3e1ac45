import Foundation
import PeerSupport
import SignalChat
@testable import SwitchboardChat
import SwitchboardRuntime
import Testing

/// Which arrivals reach `ChatConnection.activity`: enough for idle timers and probe answers,
/// without waking a listener on every frame.
@Suite struct ActivityThrottleTests {
    let start = ContinuousClock.now

    @Test func theFirstArrivalThenOneAQuietPeriodAreSignalled() {
        var throttle = ActivityThrottle()
        let signalled = [0, 10, 999, 1000, 1500].map { throttle.shouldSignal(at: start + .milliseconds($0)) }
        #expect(signalled == [true, false, false, true, false])
    }

    @Test func aProbesAnswerIsSignalledAtOnceAndOnlyOnce() {
        var throttle = ActivityThrottle()
        let first = throttle.shouldSignal(at: start)
        throttle.probeSent()
        // The probe's answer, then its second answer (a pong after the keepalive response).
        let answers = [5, 6].map { throttle.shouldSignal(at: start + .milliseconds($0)) }
        #expect(first)
        #expect(answers == [true, false])
    }

    /// Over a real connection: a burst of responses signals a handful of times, not once per
    /// frame, and a probe sent right after still gets its answer signalled.
    @Test func aBusyConnectionSignalsRarelyAndProbesStillGetAnswered() async throws {
        let server = try ChatServer(routes: [])
        defer { server.stop() }
        let connection = try await ChatClient.connectUnauthenticated(to: server.url, options: .init(keepalive: nil))
        let signals = Locked(0)
        let listener = Task { for await _ in connection.activity { signals.withLock { $0 += 1 } } }
        let usernames = UsernamesClient(transport: connection)
        let started = ContinuousClock.now
        for index in 0..<100 {
            // No routes: each request is answered 404, a frame like any other.
            _ = await usernames.lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([UInt8(index)])))
        }
        let elapsed = started.duration(to: .now)
        // Let the listener drain what was yielded: a loaded machine may run it late.
        var afterBurst = signals.withLock { $0 }
        for _ in 0..<20 {
            try await Task.sleep(for: .milliseconds(250))
            let now = signals.withLock { $0 }
            if now == afterBurst { break }
            afterBurst = now
        }
        #expect(afterBurst >= 1)
        #expect(afterBurst <= Int(elapsed.components.seconds) + 2, "\(afterBurst) signals for 100 responses in \(elapsed)")

        await connection.probe()
        _ = await eventually(within: .seconds(30)) { signals.withLock { $0 } != afterBurst }
        // The probe has two answers (a pong and the keepalive response): the first is signalled
        // at once; the second only if a starved machine delivers it a quiet period later.
        let afterProbe = signals.withLock { $0 }
        #expect(afterProbe > afterBurst, "the probe's answer is signalled")
        #expect(afterProbe <= afterBurst + 2, "\(afterProbe - afterBurst) signals for one probe")
        listener.cancel()
        await connection.close()
    }
}
