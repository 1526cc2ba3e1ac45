import Foundation
import PeerSupport
import SwitchboardChat
import SwitchboardRuntime
import Testing

/// A push handler still running when the connection ends holds `disconnected` back at most
/// 5 s, and is then cancelled, not left running beside the next connection's handler.
@Suite(.timeLimit(.minutes(2)))
struct HungPushHandlerTests {
    /// A connection whose push handler never returns by itself, with one push in it; the
    /// flags say when the handler started and when it was cancelled.
    struct Hung {
        let server: ChatServer
        let connection: ChatConnection<Authenticated>
        let cancelled: Locked<Bool>
        let push: Task<RPCResponse?, Never>
    }

    static func hung(options: ChatConnectionOptions) async throws -> Hung {
        let server = try ChatServer(routes: [])
        let started = Locked(false)
        let cancelled = Locked(false)
        let connection = try await ChatClient.connectAuthenticated(
            to: server.url, credentials: .init(username: "aci-1", deviceID: 1, password: "pw"), options: options
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
        return Hung(server: server, connection: connection, cancelled: cancelled, push: push)
    }

    @Test func aHandlerThatOutlastsTheLimitIsCancelled() async throws {
        let hung = try await Self.hung(options: .init(keepalive: nil))
        let ended = ContinuousClock.now
        hung.server.stop()
        _ = await hung.connection.waitUntilFinished()
        let waited = ContinuousClock.now - ended
        #expect(waited >= .seconds(4) && waited < .seconds(15), "the handler held the end back for the limit: \(waited)")
        _ = await eventually(within: .seconds(60)) { hung.cancelled.current }
        #expect(hung.cancelled.current, "the hung handler was cancelled")
        _ = await hung.push.value
    }

    @Test func theGraceIsAnOption() async throws {
        let hung = try await Self.hung(options: .init(keepalive: nil, pushHandlerGrace: .milliseconds(200)))
        let ended = ContinuousClock.now
        hung.server.stop()
        _ = await hung.connection.waitUntilFinished()
        // Ended at the short grace: the default would hold it 5 s.
        #expect(ContinuousClock.now - ended < .seconds(4.8))
        _ = await eventually(within: .seconds(60)) { hung.cancelled.current }
        #expect(hung.cancelled.current)
        _ = await hung.push.value
    }

    /// The app's own `close()` gives a hung handler one grace, not two: it is cancelled when
    /// that grace ends and the connection is finished soon after (before, `close` waited the
    /// grace without cancelling, and the end then waited a second grace). Found by review.
    @Test func closingGivesAHungHandlerOneGrace() async throws {
        let hung = try await Self.hung(options: .init(keepalive: nil, pushHandlerGrace: .seconds(3)))
        let began = ContinuousClock.now
        await hung.connection.close()
        _ = await hung.connection.waitUntilFinished()
        let waited = ContinuousClock.now - began
        // One grace is 3 s; two would be 6 s. The slack is for a loaded machine (5.2 s seen
        // beside a fuzzer and the whole suite).
        #expect(waited >= .seconds(2.9) && waited < .seconds(5.9), "\(waited)")
        _ = await eventually(within: .seconds(10)) { hung.cancelled.current }
        #expect(hung.cancelled.current, "the hung handler was cancelled")
        hung.server.stop()
        _ = await hung.push.value
    }
}
