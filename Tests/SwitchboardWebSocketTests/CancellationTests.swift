import Foundation
import PeerSupport
import SwitchboardIO
import SwitchboardWebSocket
import Testing

/// Cancelling a task that waits on the network ends its wait at once, not when the peer or a
/// deadline lets it go (from the cancellation review).
@Suite(.timeLimit(.minutes(1)))
struct AwaitedSendCancellationTests {
    /// An awaited send (and a ping behind it) to a peer that never reads waited until the
    /// connection ended, however its task was cancelled.
    @Test func cancellingAnAwaitedSendOrPingEndsItsWait() async throws {
        let server = try NonReadingServer()
        defer { server.stop() }
        let client = try await WebSocketClient.connect(to: server.url)
        defer { client.abort() }
        // Ends the waits anyway if cancelling does not, so a failure cannot hang the run.
        let watchdog = Task {
            try? await Task.sleep(for: .seconds(20))
            client.abort()
        }
        defer { watchdog.cancel() }

        // Far more than loopback buffers take: the rest waits for a peer that never reads.
        let sending = Task { () -> WebSocketError? in
            do throws(WebSocketError) {
                try await client.send(binary: Data(count: 32 << 20))
                return nil
            } catch {
                return error
            }
        }
        try await Task.sleep(for: .milliseconds(200))

        // A ping waits behind the frame whose caller still waits for it.
        let pinging = Task { () -> WebSocketError? in
            do throws(WebSocketError) {
                try await client.ping([1])
                return nil
            } catch {
                return error
            }
        }
        try await Task.sleep(for: .milliseconds(200))
        var cancelled = ContinuousClock.now
        pinging.cancel()
        let pingFailure = await pinging.value
        var took = ContinuousClock.now - cancelled
        #expect(took < .seconds(5), "the ping waited \(took) after its task was cancelled")
        #expect(pingFailure?.description.contains("cancelled") == true, "\(String(describing: pingFailure))")

        cancelled = ContinuousClock.now
        sending.cancel()
        let sendFailure = await sending.value
        took = ContinuousClock.now - cancelled
        #expect(took < .seconds(5), "the send waited \(took) after its task was cancelled")
        #expect(sendFailure?.description.contains("cancelled") == true, "\(String(describing: sendFailure))")

        // Both frames stay queued with nobody waiting for them: past the queue limit, an
        // awaited send is now refused at once rather than queued behind them.
        do throws(WebSocketError) {
            try await client.ping([2])
            Issue.record("a ping queued behind frames nobody waits for, past the limit")
        } catch {
            #expect(error.description.contains("not reading"), "\(error)")
        }
    }
}

/// Cancelling a connect during the TLS handshake or the upgrade ended it only at the connect
/// deadline.
@Suite(.timeLimit(.minutes(2)))
struct HandshakeCancellationTests {
    @Test func cancellingAConnectDuringTheUpgradeEndsItAtOnce() async throws {
        let server = try UnansweringServer()
        defer { server.stop() }
        try await expectCancelledConnect(to: URL(string: "ws://127.0.0.1:\(server.port)/")!, server: server)
    }

    #if canImport(CSwitchboardOpenSSL)
    // Network.framework's TLS (Apple platforms without OpenSSL) cannot be interrupted.
    @Test func cancellingAConnectDuringTheTLSHandshakeEndsItAtOnce() async throws {
        let server = try UnansweringServer()
        defer { server.stop() }
        try await expectCancelledConnect(to: URL(string: "wss://127.0.0.1:\(server.port)/")!, server: server)
    }
    #endif

    /// Connects to `url` (served by `server`, which never answers) with a 30 s deadline and
    /// cancels the connect once the server has held the socket for 200 ms: it must fail as
    /// cancelled within 5 s, and its socket must be closed.
    private func expectCancelledConnect(to url: URL, server: UnansweringServer) async throws {
        let attempt = Task { () -> Result<WebSocketConnection, WebSocketError> in
            do throws(WebSocketError) {
                return .success(try await WebSocketClient.connect(to: url, options: .init(connectTimeout: .seconds(30))))
            } catch {
                return .failure(error)
            }
        }
        // Whatever goes wrong below, the attempt does not run on to its deadline.
        defer { attempt.cancel() }
        // Past TCP: the handshake is under way.
        for _ in 0..<500 where server.accepted.isEmpty { try await Task.sleep(for: .milliseconds(10)) }
        let socket = try #require(server.accepted.first, "the server never accepted the connection")
        try await Task.sleep(for: .milliseconds(200))
        let cancelled = ContinuousClock.now
        attempt.cancel()
        let outcome = await attempt.value
        let took = ContinuousClock.now - cancelled
        #expect(took < .seconds(5), "the connect ran on for \(took) after its task was cancelled")  // its deadline is 30 s
        switch outcome {
        case let .success(connection):
            connection.abort()
            Issue.record("a cancelled connect must fail")
        case let .failure(error):
            #expect(error.description.contains("cancelled"), "\(error)")
        }
        let closed = try await offThread { Self.readsToTheEnd(socket) }
        #expect(closed, "the cancelled connect left its socket open")
    }

    /// Whether the peer closes `socket` within 5 s (what it sent before is skipped).
    private static func readsToTheEnd(_ socket: TCPSocket) -> Bool {
        let deadline = ContinuousClock.now + .seconds(5)
        guard (try? socket.setReadDeadline(deadline)) != nil else { return false }
        while true {
            do throws(NetworkError) {
                if try socket.read(maximum: 4096).isEmpty { return true }
            } catch {
                // A reset is an end too; the deadline is not.
                return ContinuousClock.now < deadline
            }
        }
    }
}

/// Stopping a server cancelled none of its handlers: one awaiting something else ran on.
@Suite(.timeLimit(.minutes(1)))
struct HandlerCancellationTests {
    static let upgradeRequest = Array(
        "GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n".utf8)

    /// A handler that waits for nothing the connection does, and notes its cancellation.
    static func server(started: ManagedFlag, cancelled: ManagedFlag) throws -> WebSocketServer {
        try WebSocketServer { _ in
            started.set()
            await withTaskCancellationHandler {
                _ = try? await Task.sleep(for: .seconds(3600))
            } onCancel: {
                cancelled.set()
            }
        }
    }

    /// A server whose handler runs until cancelled, one client connected to it, and the
    /// handler started.
    static func servedClient() async throws -> (server: WebSocketServer, client: WebSocketConnection, cancelled: ManagedFlag) {
        let started = ManagedFlag(), cancelled = ManagedFlag()
        let server = try Self.server(started: started, cancelled: cancelled)
        let client = try await WebSocketClient.connect(to: URL(string: "ws://127.0.0.1:\(server.port)/")!)
        #expect(try await Self.wait(for: started, within: .seconds(5)), "the handler never started")
        return (server, client, cancelled)
    }

    @Test func stoppingTheServerCancelsItsHandlers() async throws {
        let (server, client, cancelled) = try await Self.servedClient()
        defer { server.stop(); client.abort() }
        server.stop()
        #expect(try await Self.wait(for: cancelled, within: .seconds(10)), "stop() left the handler running")
    }

    /// A handler outlives its connection; stopping the server still cancels it.
    @Test func stoppingTheServerCancelsAHandlerWhoseConnectionEnded() async throws {
        let (server, client, cancelled) = try await Self.servedClient()
        defer { server.stop(); client.abort() }
        _ = await client.close()
        try await Task.sleep(for: .milliseconds(100))
        #expect(!cancelled.isSet, "a connection ending does not cancel its handler")
        server.stop()
        #expect(try await Self.wait(for: cancelled, within: .seconds(10)), "stop() left the handler running")
    }

    /// A client that never answers the server's close holds a graceful shutdown to its
    /// timeout, which then cancels the handler.
    @Test func aShutdownForcedByItsTimeoutCancelsTheHandlers() async throws {
        let started = ManagedFlag(), cancelled = ManagedFlag()
        let server = try Self.server(started: started, cancelled: cancelled)
        defer { server.stop() }
        let socket = try TCPSocket.connect(host: "127.0.0.1", port: server.port, timeout: .seconds(5))
        defer { socket.close() }
        try socket.write(Self.upgradeRequest)
        #expect(try await Self.wait(for: started, within: .seconds(5)), "the handler never started")
        await server.shutdown(timeout: .milliseconds(500))
        #expect(try await Self.wait(for: cancelled, within: .seconds(10)), "the forced shutdown left the handler running")
    }

    static func wait(for flag: ManagedFlag, within limit: Duration) async throws -> Bool {
        let deadline = ContinuousClock.now + limit
        while !flag.isSet && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        return flag.isSet
    }
}

/// Accepts connections and holds them without reading or writing a byte: a server that
/// hangs in the middle of the TLS handshake or the upgrade.
final class UnansweringServer: @unchecked Sendable {
    private let listener: TCPListener
    private let lock = NSLock()
    private var held: [TCPSocket] = []

    init() throws {
        listener = try TCPListener()
        Thread.detachNewThread { [listener, self] in
            while let socket = listener.accept() { lock.withLock { held.append(socket) } }
        }
    }

    var port: Int { listener.port }

    /// The sockets accepted so far.
    var accepted: [TCPSocket] { lock.withLock { held } }

    func stop() {
        listener.close()
        for socket in accepted { socket.close() }
    }
}

/// A reader of ``WebSocketConnection/messages`` cancelled while it waits ends the stream; what
/// arrives after is dropped, and reading goes on (found by review: each dropped message still
/// counted against the buffered-bytes bound, so after 4 MiB reading paused for good and the
/// peer's close was never read).
@Suite(.timeLimit(.minutes(1)))
struct CancelledReaderTests {
    @Test func readingGoesOnAfterTheReaderIsCancelled() async throws {
        let go = ManagedFlag()
        let server = try WebSocketServer { connection in
            try? await connection.send(binary: Data(count: 16))
            for _ in 0..<2000 where !go.isSet { try? await Task.sleep(for: .milliseconds(10)) }
            // 8 MiB, twice the default bound on what waits unread, then a close.
            for _ in 0..<128 { try? await connection.send(binary: Data(count: 64 << 10)) }
            _ = await connection.close()
        }
        defer { server.stop() }
        let client = try await WebSocketClient.connect(to: URL(string: "ws://127.0.0.1:\(server.port)/")!)
        defer { client.abort() }
        let first = ManagedFlag()
        let reader = Task {
            for await _ in client.messages { first.set() }
        }
        // The reader has the first message and waits for the next: cancelled there, it ends
        // the stream; then the bulk comes.
        #expect(await eventually(within: .seconds(10)) { first.isSet })
        try await Task.sleep(for: .milliseconds(100))
        reader.cancel()
        await reader.value
        go.set()
        // The bulk is read and dropped, up to the server's close, which ends the connection.
        #expect(await eventually(within: .seconds(20)) { !client.isOpen }, "reading stayed paused")
    }
}
