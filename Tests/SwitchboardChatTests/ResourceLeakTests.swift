import Foundation
import PeerSupport
import SwitchboardChat
import SwitchboardWebSocket
import Testing

/// A server that runs for days must give back what each connection took.
@Suite(.serialized, .timeLimit(.minutes(4)))
struct ResourceLeakTests {

    /// Every socket of 300 connections that came and went, the server's and the client's,
    /// is released: the sockets on the server's port return to none.
    @Test func socketsOfEndedConnectionsAreReleased() async throws {
        let server = try ChatServer(routes: [])
        defer { server.stop() }
        // The listening socket.
        let baseline = try #require(OpenSockets.count(port: server.port), "needs /proc (Linux)")
        for round in 0..<300 {
            switch round % 3 {
            case 0:
                let connection = try await ChatClient.connectUnauthenticated(to: server.url, options: .init(keepalive: nil))
                await connection.close()
            case 1:
                let connection = try await ChatClient.connectUnauthenticated(to: server.url, options: .init(keepalive: nil))
                let client = try #require(await server.client(at: round))
                await client.close(code: .normalClosure)
                _ = await connection.waitUntilClosed()
            default:
                // Gone without a close handshake.
                let socket = try await WebSocketClient.connect(to: server.url)
                socket.abort()
            }
        }
        let released = await eventually { OpenSockets.count(port: server.port) == baseline }
        #expect(released, "\((OpenSockets.count(port: server.port) ?? 0) - baseline) sockets still open")
    }
}

/// A server connection is freed once it ends, even though its message handler (the mock
/// server's) holds the client that holds the connection.
@Suite(.timeLimit(.minutes(3)))
struct ConnectionLifetimeTests {
    final class WeakConnection: @unchecked Sendable {
        private let lock = NSLock()
        private weak var connection: WebSocketConnection?
        private var seen = false
        func set(_ value: WebSocketConnection) { lock.withLock { connection = value; seen = true } }
        var state: (seen: Bool, alive: Bool) { lock.withLock { (seen, connection != nil) } }
    }

    @Test func anEndedServerConnectionIsFreed() async throws {
        let watched = WeakConnection()
        let server = try WebSocketServer(options: .init(deliversMessagesDirectly: true)) { connection in
            // The handler keeps the connection, as ChatServer's keeps its client.
            connection.deliverReceivedMessages { _ in _ = connection.isOpen }
            watched.set(connection)
            for await _ in connection.messages {}
        }
        defer { server.stop() }
        let client = try await WebSocketClient.connect(to: URL(string: "ws://127.0.0.1:\(server.port)/")!)
        try await client.send(text: "hello")
        await client.close()
        for _ in 0..<500 where watched.state != (true, false) { try await Task.sleep(for: .milliseconds(10)) }
        #expect(watched.state.seen)
        #expect(!watched.state.alive, "the ended connection was freed")
    }
}

/// The mock server's limits: a full server says when to retry, a silent client is let go.
@Suite(.timeLimit(.minutes(3)))
struct ChatServerLimitTests {
    @Test func aFullServerSaysRetryLater() async throws {
        let server = try ChatServer(routes: [], limits: .init(maximumConnections: 1))
        defer { server.stop() }
        let first = try await ChatClient.connectUnauthenticated(to: server.url, options: .init(keepalive: nil))
        do {
            _ = try await ChatClient.connectUnauthenticated(to: server.url, options: .init(keepalive: nil))
            Issue.record("the second connection must be refused")
        } catch {
            #expect(error == .retryLater(retryAfter: .seconds(1)))
        }
        await first.close()
    }

    @Test func aClientWithoutKeepalivesIsClosedAfterTheIdleTimeout() async throws {
        let server = try ChatServer(routes: [], limits: .init(idleTimeout: .milliseconds(300)))
        defer { server.stop() }
        let connection = try await ChatClient.connectUnauthenticated(to: server.url, options: .init(keepalive: nil))
        let info = await connection.waitUntilClosed()
        #expect(info.code == .goingAway)
    }
}
