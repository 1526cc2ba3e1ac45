import Foundation
import SignalChat
import SwitchboardChat
import SwitchboardRuntime
import SwitchboardWebSocket
import Testing

/// Reads `socket` until a WebSocket upgrade request has come, and accepts it.
func answerWebSocketUpgrade(on socket: TCPSocket) {
    var received: [UInt8] = []
    while let chunk = try? socket.read(maximum: 4096), !chunk.isEmpty {
        received += chunk
        if let (head, _) = try? HTTPHead.parse(received), let request = try? WebSocketHandshake.parseUpgrade(head) {
            try? socket.write(WebSocketHandshake.acceptResponse(for: request))
            return
        }
    }
}

/// A server that completes the upgrade and then goes silent: it never reads again, so it
/// answers neither pings nor requests, like a peer behind a dead NAT mapping.
final class SilentServer: @unchecked Sendable {
    let listener: TCPListener
    private let held = Locked<[TCPSocket]>([])

    init(answerUpgrade: Bool) throws {
        listener = try TCPListener()
        Thread.detachNewThread { [listener, held] in
            while let socket = listener.accept() {
                held.withLock { $0.append(socket) }
                if answerUpgrade { answerWebSocketUpgrade(on: socket) }
            }
        }
    }

    var url: URL { URL(string: "ws://127.0.0.1:\(listener.port)/v1/websocket/")! }

    func stop() {
        listener.close()
        for socket in held.withLock({ $0 }) { socket.close() }
    }
}

/// A server that completes the upgrade, starts a 64 KiB binary message and sends its payload
/// a little at a time, never reading: alive, but no message or pong comes for seconds.
final class DribblingServer: @unchecked Sendable {
    let listener: TCPListener
    private let held = Locked<[TCPSocket]>([])
    private let stopped = Locked(false)

    init(chunk: Int, every interval: Duration, chunks: Int) throws {
        listener = try TCPListener()
        Thread.detachNewThread { [listener, held, stopped] in
            guard let socket = listener.accept() else { return }
            held.withLock { $0.append(socket) }
            answerWebSocketUpgrade(on: socket)
            // FIN, binary; 126: a 16-bit length follows (65,535 bytes, never all sent).
            try? socket.write([0x82, 126, 0xFF, 0xFF])
            for _ in 0..<chunks where !stopped.current {
                Thread.sleep(forTimeInterval: Double(interval.components.attoseconds) / 1e18 + Double(interval.components.seconds))
                try? socket.write([UInt8](repeating: 0x08, count: chunk))
            }
        }
    }

    var url: URL { URL(string: "ws://127.0.0.1:\(listener.port)/v1/websocket/")! }

    func stop() {
        stopped.withLock { $0 = true }
        listener.close()
        for socket in held.withLock({ $0 }) { socket.close() }
    }
}

@Suite(.serialized, .timeLimit(.minutes(3))) struct ChatLivenessTests {
    static let fastKeepalive = KeepalivePolicy(interval: .milliseconds(100), timeout: .milliseconds(300))

    @Test func aServerThatStopsAnsweringIsDroppedAsKeepaliveTimedOut() async throws {
        let server = try SilentServer(answerUpgrade: true)
        defer { server.stop() }
        let connection = try await ChatClient.connectUnauthenticated(to: server.url, options: .init(keepalive: Self.fastKeepalive))
        let usernames = UsernamesClient(transport: connection)
        // A request in flight when the keepalive gives up fails as disconnected, not hung.
        let result = await usernames.lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([1])))
        guard case .failure(.disconnected) = result else {
            Issue.record("expected disconnected, got \(result)")
            return
        }
        var last: ChatConnectionEvent?
        for await event in connection.events { last = event }
        #expect(last == .disconnected(.keepaliveTimedOut))
        #expect(connection.disconnectReason == .keepaliveTimedOut)
    }

    /// A large message arriving slowly counts as the server speaking: the keepalive's pong
    /// queues behind it, and counting only whole messages dropped the link mid-message (from
    /// the session review). Here nothing whole arrives for 1.5 s against a 0.4 s keepalive.
    @Test func aMessageStillArrivingKeepsTheConnectionAlive() async throws {
        let server = try DribblingServer(chunk: 256, every: .milliseconds(50), chunks: 60)
        defer { server.stop() }
        let connection = try await ChatClient.connectUnauthenticated(to: server.url, options: .init(keepalive: Self.fastKeepalive))
        try await Task.sleep(for: .milliseconds(1500))
        #expect(connection.disconnectReason == nil, "dropped while the server was still sending: \(String(describing: connection.disconnectReason))")
        // Once the bytes stop, silence is silence again.
        server.stop()
        var last: ChatConnectionEvent?
        for await event in connection.events { last = event }
        #expect(last != nil)
    }

    @Test func aLiveServerAnswersKeepalivesAndTheConnectionStaysUp() async throws {
        let server = try ChatServer(routes: [])
        defer { server.stop() }
        // Frequent rounds, but a timeout no loaded machine's scheduling delay reaches: the
        // server shares the test process's loops with every other test.
        let patient = KeepalivePolicy(interval: .milliseconds(100), timeout: .seconds(5))
        let connection = try await ChatClient.connectUnauthenticated(to: server.url, options: .init(keepalive: patient))
        let client = try #require(await server.client(at: 0))
        // Wait (bounded) for several keepalive rounds; each must be answered in time.
        for _ in 0..<600 where client.keepalivesReceived < 3 { try await Task.sleep(for: .milliseconds(50)) }
        #expect(client.keepalivesReceived >= 3)
        #expect(connection.disconnectReason == nil)
        await connection.close()
    }

    /// With pings alone (no keepalive request), only pongs can show the server is alive: a
    /// connection that outlives many timeouts proves pings go out and pongs count.
    @Test func pingsAloneKeepALiveServerConnected() async throws {
        let server = try ChatServer(routes: [])
        defer { server.stop() }
        // The timeout is generous so a loaded test machine cannot delay a pong past it; the
        // connection still outlives it more than twice over.
        let pingsOnly = KeepalivePolicy(interval: .milliseconds(100), timeout: .seconds(2), requestPath: nil)
        let connection = try await ChatClient.connectUnauthenticated(to: server.url, options: .init(keepalive: pingsOnly))
        let client = try #require(await server.client(at: 0))
        try await Task.sleep(for: .seconds(5))
        #expect(client.keepalivesReceived == 0, "no keepalive requests with requestPath nil")
        #expect(connection.disconnectReason == nil)
        await connection.close()
    }

    /// The same pings against a server that never answers them: dropped at the timeout.
    @Test func pingsAloneDropASilentServer() async throws {
        let server = try SilentServer(answerUpgrade: true)
        defer { server.stop() }
        let pingsOnly = KeepalivePolicy(interval: .milliseconds(100), timeout: .milliseconds(300), requestPath: nil)
        let connection = try await ChatClient.connectUnauthenticated(to: server.url, options: .init(keepalive: pingsOnly))
        #expect(await connection.waitUntilFinished() == .keepaliveTimedOut)
    }

    /// The defaults follow Signal's clients and the session lifecycle.
    @Test func defaultsFollowSignal() {
        let options = ChatConnectionOptions()
        #expect(options.connectTimeout == .seconds(10))
        #expect(options.keepalive == KeepalivePolicy(interval: .seconds(30), timeout: .seconds(10), requestPath: "/v1/keepalive"))
        #expect(options.maximumQueuedPushes >= 256, "Signal keeps up to 256 pushes unacknowledged")
        #expect(options.maximumQueuedPushBytes >= 256 * options.webSocket.configuration.maximumMessageSize,
                "256 pushes at the message cap must fit")
    }

    @Test func keepaliveCanBeTurnedOff() async throws {
        let server = try ChatServer(routes: [])
        defer { server.stop() }
        let connection = try await ChatClient.connectUnauthenticated(to: server.url, options: .init(keepalive: nil))
        let client = try #require(await server.client(at: 0))
        try await Task.sleep(for: .milliseconds(300))
        #expect(client.keepalivesReceived == 0)
        #expect(connection.disconnectReason == nil)
        await connection.close()
    }

    @Test func anUpgradeThatNeverAnswersFailsWithinTheConnectTimeout() async throws {
        let server = try SilentServer(answerUpgrade: false)
        defer { server.stop() }
        let started = ContinuousClock.now
        do {
            _ = try await ChatClient.connectUnauthenticated(to: server.url, options: .init(connectTimeout: .milliseconds(300)))
            Issue.record("the connect must time out")
        } catch {
            guard case .transport(.timeout(_)) = error else {
                Issue.record("expected a transport timeout, got \(error)")
                return
            }
        }
        // Generous bound: only proves the timeout applies, not how precisely.
        #expect(started.duration(to: .now) < .seconds(9), "the configured 300 ms applied, not the 10 s default")
    }
}
