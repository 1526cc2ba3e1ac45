import Foundation
import SwitchboardChat
import SwitchboardRuntime
import Testing

/// A push handler still running when the connection ends holds `disconnected` back at most
/// 5 s, and is then cancelled, not left running beside the next connection's handler.
@Suite(.timeLimit(.minutes(2)))
struct HungPushHandlerTests {
    @Test func aHandlerThatOutlastsTheLimitIsCancelled() async throws {
        let server = try ChatServer(routes: [])
        let started = Locked(false)
        let cancelled = Locked(false)
        let connection = try await ChatClient.connectAuthenticated(
            to: server.url, credentials: .init(username: "aci-1", deviceID: 1, password: "pw"), options: .init(keepalive: nil)
        ) { _ in
            started.withLock { $0 = true }
            // Never answers by itself; only cancellation ends it.
            while !Task.isCancelled { try? await Task.sleep(for: .milliseconds(20)) }
            cancelled.withLock { $0 = true }
            return .withhold(reason: "cancelled")
        }
        let client = try #require(await server.client(at: 0))
        let push = Task { await client.push(ServerRequest(verb: "PUT", path: "/api/v1/message"), timeout: .seconds(30)) }
        for _ in 0..<500 where !started.current { try await Task.sleep(for: .milliseconds(10)) }
        #expect(started.current)
        let ended = ContinuousClock.now
        server.stop()
        _ = await connection.waitUntilFinished()
        let waited = ContinuousClock.now - ended
        #expect(waited >= .seconds(4) && waited < .seconds(15), "the handler held the end back for the limit: \(waited)")
        for _ in 0..<300 where !cancelled.current { try await Task.sleep(for: .milliseconds(10)) }
        #expect(cancelled.current, "the hung handler was cancelled")
        _ = await push.value
    }

    @Test func theGraceIsAnOption() async throws {
        let server = try ChatServer(routes: [])
        let started = Locked(false)
        let cancelled = Locked(false)
        let connection = try await ChatClient.connectAuthenticated(
            to: server.url, credentials: .init(username: "aci-1", deviceID: 1, password: "pw"),
            options: .init(keepalive: nil, pushHandlerGrace: .milliseconds(200))
        ) { _ in
            started.withLock { $0 = true }
            while !Task.isCancelled { try? await Task.sleep(for: .milliseconds(20)) }
            cancelled.withLock { $0 = true }
            return .withhold(reason: "cancelled")
        }
        let client = try #require(await server.client(at: 0))
        let push = Task { await client.push(ServerRequest(verb: "PUT", path: "/api/v1/message"), timeout: .seconds(30)) }
        for _ in 0..<500 where !started.current { try await Task.sleep(for: .milliseconds(10)) }
        #expect(started.current)
        let ended = ContinuousClock.now
        server.stop()
        _ = await connection.waitUntilFinished()
        // Ended at the short grace: the default would hold it 5 s.
        #expect(ContinuousClock.now - ended < .seconds(4))
        for _ in 0..<300 where !cancelled.current { try await Task.sleep(for: .milliseconds(10)) }
        #expect(cancelled.current)
        _ = await push.value
    }
}
