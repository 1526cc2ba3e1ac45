import Foundation
import PeerSupport
@testable import SwitchboardWebSocket
import Testing

/// A server holds a bounded number of connections, and lets go of silent ones.
@Suite(.timeLimit(.minutes(3)))
struct ServerLimitTests {
    private func url(_ server: WebSocketServer) -> URL { URL(string: "ws://127.0.0.1:\(server.port)/")! }


    /// Past the limit a new client is told 503 with Retry-After; once a connection ends,
    /// a newcomer is served again.
    @Test func pastTheLimitANewClientGets503() async throws {
        let server = try WebSocketServer(limits: .init(maximumConnections: 3)) { connection in
            for await message in connection.messages { try? await connection.send(message) }
        }
        defer { server.stop() }
        var held: [WebSocketConnection] = []
        for _ in 0..<3 { held.append(try await WebSocketClient.connect(to: url(server))) }
        #expect(server.connectionCount == 3)
        for _ in 0..<5 {
            do {
                _ = try await WebSocketClient.connect(to: url(server))
                Issue.record("a fourth connection must be refused")
            } catch let .upgradeRejected(status, headers, _) {
                #expect(status == 503)
                #expect(headers.value(named: "Retry-After") == "1")
            }
        }
        #expect(server.connectionCount == 3, "refused connections are not counted")
        await held.removeFirst().close()
        #expect(await eventually { server.connectionCount == 2 })
        let newcomer = try await WebSocketClient.connect(to: url(server))
        try await newcomer.send(text: "still serving")
        var messages = newcomer.messages.makeAsyncIterator()
        #expect(await messages.next() == .text("still serving"))
        await newcomer.close()
        for connection in held { await connection.close() }
    }

    /// One address holds at most its share: past it, its newcomers are told 503 too, however
    /// many slots the server has; a freed slot admits it again.
    @Test func oneAddressHoldsAtMostItsShare() async throws {
        let server = try WebSocketServer(limits: .init(maximumConnections: 100, maximumConnectionsPerAddress: 2)) { connection in
            for await message in connection.messages { try? await connection.send(message) }
        }
        defer { server.stop() }
        var held: [WebSocketConnection] = []
        for _ in 0..<2 { held.append(try await WebSocketClient.connect(to: url(server))) }
        do {
            _ = try await WebSocketClient.connect(to: url(server))
            Issue.record("a third connection from one address must be refused")
        } catch let .upgradeRejected(status, _, _) {
            #expect(status == 503)
        }
        #expect(server.connectionCount == 2)
        await held.removeFirst().close()
        #expect(await eventually { server.connectionCount == 1 })
        let newcomer = try await WebSocketClient.connect(to: url(server))
        await newcomer.close()
        for connection in held { await connection.close() }
        #expect(await eventually { server.connectionCount == 0 })
    }

    /// Everything `socket` receives until the peer's end (blocking, briefly: servers answer
    /// from their event loops, not from the pool this runs on).
    static func readToEnd(_ socket: TCPSocket) throws -> [UInt8] {
        try socket.setReadDeadline(.now + .seconds(10))
        var answer: [UInt8] = []
        while true {
            let chunk = try socket.read(maximum: 4096)
            if chunk.isEmpty { return answer }
            answer += chunk
        }
    }

    /// A connection's slots are its descriptor's: a socket the server closed but that still
    /// lingers (its peer neither reads nor closes) keeps counting, so a client that makes the
    /// server close connections by the hundred cannot hold descriptors nobody counts (from the
    /// I/O review). Once the linger ends, the slot is free again.
    @Test func aLingeringSocketKeepsItsSlotUntilReleased() async throws {
        let server = try WebSocketServer(limits: .init(maximumConnections: 100, maximumConnectionsPerAddress: 2)) { _ in }
        defer { server.stop() }
        // Lingers no scheduling delay outlasts; the test ends them itself, by closing its side.
        server.setLingerTimeout(.seconds(60))
        var garbage: [TCPSocket] = []
        for _ in 0..<2 {
            let socket = try TCPSocket.connect(host: "127.0.0.1", port: server.port, timeout: .seconds(5))
            // Not HTTP: answered 400 and closed gracefully, so the socket lingers reading.
            try socket.write(Array("\u{16}\u{3}\u{1}".utf8))
            garbage.append(socket)
        }
        // Each is answered 400 and its sending side shut: from the end of the stream on, the
        // server's socket lingers, still counted.
        for socket in garbage {
            let answer = try Self.readToEnd(socket)
            #expect(String(decoding: answer, as: UTF8.self).hasPrefix("HTTP/1.1 400"))
        }
        #expect(server.connectionCount == 2, "the lingering sockets still count")
        do throws(WebSocketError) {
            _ = try await WebSocketClient.connect(to: url(server))
            Issue.record("the address's share is held by the lingering sockets")
        } catch {
            guard case let .upgradeRejected(status, _, _) = error else {
                Issue.record("expected a 503, got \(error)")
                return
            }
            #expect(status == 503)
        }
        // The peer closes: the lingers end, and with them the slots.
        for socket in garbage { socket.close() }
        #expect(await eventually(within: .seconds(30)) { server.connectionCount == 0 }, "\(server.connectionCount) still counted")
        let newcomer = try await WebSocketClient.connect(to: url(server))
        await newcomer.close()
    }

    /// Raw sockets past the limit (half of them never send a request) cost no served
    /// connection, and the count returns to zero when they go.
    @Test func aFloodPastTheLimitIsBounded() async throws {
        let server = try WebSocketServer(limits: .init(maximumConnections: 4, handshakeTimeout: .milliseconds(500))) { _ in }
        defer { server.stop() }
        var sockets: [TCPSocket] = []
        for index in 0..<40 {
            let socket = try TCPSocket.connect(host: "127.0.0.1", port: server.port, timeout: .seconds(5))
            if index.isMultiple(of: 2) { try socket.write(Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8)) }
            sockets.append(socket)
            #expect(server.connectionCount <= 4)
        }
        for socket in sockets { socket.close() }
        #expect(await eventually { server.connectionCount == 0 }, "\(server.connectionCount) still counted")
    }

    /// A connection that sends nothing is closed with 1001 after the idle timeout; one that
    /// pings stays.
    @Test func aSilentConnectionIsClosedAndAPingingOneStays() async throws {
        // Long enough, and the pinger urgent enough, that a loaded test run cannot hold the
        // pings back past the timeout (the pool runs high-priority jobs first).
        let server = try WebSocketServer(limits: .init(idleTimeout: .milliseconds(5000))) { connection in
            for await _ in connection.messages {}
        }
        defer { server.stop() }
        let started = ContinuousClock.now
        let silent = try await WebSocketClient.connect(to: url(server))
        let chatty = try await WebSocketClient.connect(to: url(server))
        let pinger = Task(priority: .high) {
            while !Task.isCancelled {
                try? await chatty.ping()
                try? await Task.sleep(for: .milliseconds(100))
            }
        }
        let info = await silent.waitUntilClosed()
        #expect(info.code == .goingAway)
        #expect(info.reason == "idle timeout")
        #expect(ContinuousClock.now - started >= .milliseconds(5000))
        #expect(chatty.isOpen, "pings count as activity")
        pinger.cancel()
        await chatty.close()
    }

    /// A refused client's head trickled a byte at a time is searched only where bytes are new,
    /// not from its start on every read: a 16 KiB head cost the loop some 134 M comparisons
    /// (from the review). Counted, not timed: the positions each read's search may look at.
    @Test func aRefusedHeadTrickledByteByByteIsSearchedInLinearTime() {
        let request = Array("GET / HTTP/1.1\r\nHost: x\r\nX-Padding: \(String(repeating: "a", count: 12_000))\r\n\r\n".utf8)
        var head = RefusedRequestHead(limits: .init())
        var scanned = 0
        var endedAt: [Int] = []
        for (index, byte) in request.enumerated() {
            if [byte].withUnsafeBytes({ head.take($0) }) { endedAt.append(index) }
            scanned += head.bytes.count - head.searchedFrom
        }
        #expect(endedAt == [request.count - 1], "whole with its last byte, and not before")
        #expect(scanned <= 4 * request.count, "\(scanned) positions searched for \(request.count) bytes")
        // A head that never ends is answered once the limit has been read.
        var endless = RefusedRequestHead(limits: .init(maximumSize: 64))
        let line = Array("GET /\(String(repeating: "a", count: 100))".utf8)
        let answeredAt = line.indices.first { index in [line[index]].withUnsafeBytes { endless.take($0) } }
        #expect(answeredAt == 63)
    }

    /// The default limits are documented and safe.
    @Test func defaults() {
        let limits = WebSocketServer.Limits()
        #expect(limits.maximumConnections == 1024)
        #expect(limits.handshakeTimeout == .seconds(10))
        #expect(limits.idleTimeout == .seconds(120))
        #expect(WebSocketConnection.Options().idleTimeout == nil, "clients keep their connections unless asked")
    }
}
