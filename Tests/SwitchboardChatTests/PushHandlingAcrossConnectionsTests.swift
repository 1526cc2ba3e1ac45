import Foundation
import SwitchboardChat
import SwitchboardRuntime
import Testing

/// Push handling seen across connections and passes (from the chat review).
@Suite(.timeLimit(.minutes(2)))
struct PushHandlingAcrossConnectionsTests {
    static func push(_ path: String = "/api/v1/message") -> ServerRequest { ServerRequest(verb: "PUT", path: path) }

    /// Closing connection B from connection A's push handler still lets B's running handler
    /// finish and answer: only a handler closing its own connection skips the wait (one
    /// flag for every connection skipped it, and B's answer was lost).
    @Test func closingAnotherConnectionFromAHandlerWaitsForItsHandler() async throws {
        let server = try ChatServer(routes: [])
        defer { server.stop() }
        let options = ChatConnectionOptions(keepalive: nil)
        let b = try await ChatClient.connectUnauthenticated(to: server.url, options: options) { _ in
            try? await Task.sleep(for: .milliseconds(300))
            return .ok
        }
        let clientB = try #require(await server.client(at: 0))
        let a = try await ChatClient.connectUnauthenticated(to: server.url, options: options) { _ in
            await b.close()
            return .ok
        }
        defer { Task { await a.close() } }
        let clientA = try #require(await server.client(at: 1))
        let answerB = Task { await clientB.push(Self.push(), timeout: .seconds(10)) }
        try await Task.sleep(for: .milliseconds(50))
        let answerA = await clientA.push(Self.push(), timeout: .seconds(10))
        #expect(await answerB.value?.status == 200, "B's handler was cut off by a close from A's")
        #expect(answerA?.status == 200)
    }

    /// A delivery pass whose task is cancelled sends nothing more and no "queue empty"; what
    /// it did not send stays stored (every push went out, then "queue empty").
    @Test func aCancelledDeliveryStopsSending() async throws {
        let server = try ChatServer(routes: [])
        defer { server.stop() }
        let received = Locked<[String]>([])
        let connection = try await ChatClient.connectUnauthenticated(to: server.url, options: .init(keepalive: nil)) { request in
            received.withLock { $0.append(request.path) }
            try? await Task.sleep(for: .milliseconds(200))
            return .ok
        }
        defer { Task { await connection.close() } }
        let client = try #require(await server.client(at: 0))
        let queue = PushQueue((0..<10).map { Self.push("/api/v1/message/\($0)") })
        let pass = Task { await queue.deliver(to: client, window: 1, ackTimeout: .seconds(10), queueEmpty: Self.push("/api/v1/queue/empty")) }
        try await Task.sleep(for: .milliseconds(50))
        pass.cancel()
        _ = await pass.value
        try await Task.sleep(for: .milliseconds(500))
        let paths = received.current
        #expect(paths.count <= 2, "\(paths)")
        #expect(!paths.contains("/api/v1/queue/empty"))
        #expect(queue.pending.count >= 9)
    }
}
