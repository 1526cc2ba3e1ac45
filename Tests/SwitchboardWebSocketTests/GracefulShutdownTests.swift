import Foundation
import PeerSupport
import SwitchboardIO
@testable import SwitchboardWebSocket
import Testing

/// A graceful shutdown and the connections still upgrading when it starts: one that
/// finishes its upgrade is told 1001 (going away), never dropped; one that never finishes
/// is ended at the shutdown's timeout, not left to its handshake timeout.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct GracefulShutdownTests {
    static let upgradeRequest = Array("GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n".utf8)

    @Test func anUpgradeThatCompletesDuringShutdownIsClosedGoingAway() async throws {
        let served = ServedCount()
        // Outside the range other tests' sockets draw from: once the listener closes, no one
        // else listens on the port the probe below expects refused.
        let server = try WebSocketServer(port: FixedPorts.free(), eventLoops: .dedicated(loopCount: 1)) { connection in
            served.add()
            for await _ in connection.messages {}
        }
        let late = try TCPSocket.connect(host: "127.0.0.1", port: server.port, timeout: .seconds(5))
        defer { late.close() }
        try late.setReadDeadline(.now + .seconds(20))
        // Half a request: admitted, still upgrading.
        try late.write(Array(Self.upgradeRequest.prefix(20)))
        for _ in 0..<500 where server.connectionCount < 1 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(server.connectionCount == 1)

        let shutdown = Task { () -> Duration in
            let started = ContinuousClock.now
            await server.shutdown(timeout: .seconds(20))
            return ContinuousClock.now - started
        }
        try await waitUntilNotListening(port: server.port)
        try late.write(Array(Self.upgradeRequest.dropFirst(20)))

        let (head, frame) = try await offThread { try readHeadAndFrame(from: late) }
        #expect(head.hasPrefix("HTTP/1.1 101"), "got \(head)")
        // An unmasked close frame carrying 1001.
        #expect(frame.count >= 4)
        #expect(frame[0] == 0x88)
        #expect(frame.count >= 4 && UInt16(frame[2]) << 8 | UInt16(frame[3]) == WebSocketCloseCode.goingAway.rawValue)
        // Answer the close (masked, as a client must): the shutdown then has nothing left
        // to wait for, long before its timeout.
        let key: [UInt8] = [1, 2, 3, 4]
        let code: [UInt8] = [0x03, 0xE9]
        try late.write([0x88, 0x82] + key + code.enumerated().map { $0.element ^ key[$0.offset % 4] })
        let took = await shutdown.value
        #expect(took < .seconds(15), "shutdown waited \(took)")
        #expect(served.value == 0, "the handler never sees a connection upgraded after shutdown began")
    }

    @Test func anUpgradeThatNeverCompletesEndsAtTheShutdownTimeout() async throws {
        let server = try WebSocketServer(limits: .init(handshakeTimeout: .seconds(120)), eventLoops: .dedicated(loopCount: 1)) { connection in
            for await _ in connection.messages {}
        }
        let silent = try TCPSocket.connect(host: "127.0.0.1", port: server.port, timeout: .seconds(5))
        defer { silent.close() }
        try silent.setReadDeadline(.now + .seconds(60))
        try silent.write(Array(Self.upgradeRequest.prefix(10)))
        for _ in 0..<500 where server.connectionCount < 1 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(server.connectionCount == 1)

        let started = ContinuousClock.now
        await server.shutdown(timeout: .seconds(1))
        let took = ContinuousClock.now - started
        // It waited for the upgrade (the timeout), and no longer than the timeout allows.
        #expect(took >= .seconds(1))
        #expect(took < .seconds(30), "shutdown waited \(took)")
        // The half-upgraded socket is closed: the client reads the end, not a 101.
        let bytes = try await offThread { try silent.read(maximum: 4096) }
        #expect(bytes.isEmpty, "expected the end of the stream, got \(bytes.count) bytes")
        #expect(server.connectionCount == 0)
    }

    /// Returns once a new connection to `port` is refused: the server is shutting down.
    private func waitUntilNotListening(port: Int) async throws {
        for _ in 0..<500 {
            guard let probe = try? TCPSocket.connect(host: "127.0.0.1", port: port, timeout: .seconds(1)) else { return }
            probe.close()
            try await Task.sleep(for: .milliseconds(10))
        }
        Issue.record("the listener never closed")
    }
}

/// Reads an HTTP response head, then the first frame's first bytes (at least its 2-byte
/// header and a 2-byte close code).
private func readHeadAndFrame(from socket: TCPSocket) throws -> (head: String, frame: [UInt8]) {
    var received: [UInt8] = []
    let terminator = Array("\r\n\r\n".utf8)
    while received.count < 16_384 {
        if let end = received.firstRange(of: terminator), received.count >= end.upperBound + 4 {
            return (String(decoding: received[..<end.lowerBound], as: UTF8.self), Array(received[end.upperBound...]))
        }
        let bytes = try socket.read(maximum: 4096)
        if bytes.isEmpty { break }
        received += bytes
    }
    return (String(decoding: received, as: UTF8.self), [])
}

