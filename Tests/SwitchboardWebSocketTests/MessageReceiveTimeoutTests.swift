import Foundation
import PeerSupport
import SwitchboardIO
@testable import SwitchboardWebSocket
import Testing

/// `messageReceiveTimeout`: a peer that trickles a message is closed with 1008 although every
/// byte resets the idle clock; peers whose messages each arrive in time stay, however long
/// the stream of them; time the server spends not reading does not count.
@Suite(.timeLimit(.minutes(3)))
struct MessageReceiveTimeoutTests {
    private static let upgradeRequest = Array("GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n".utf8)

    /// A raw client upgraded on `server`.
    private func upgradedSocket(_ server: WebSocketServer) throws -> TCPSocket {
        let socket = try TCPSocket.connect(host: "127.0.0.1", port: server.port, timeout: .seconds(5))
        try socket.setReadDeadline(.now + .seconds(30))
        try socket.write(Self.upgradeRequest)
        var head: [UInt8] = []
        while head.count < 4096, head.firstRange(of: Array("\r\n\r\n".utf8)) == nil {
            let bytes = try socket.read(maximum: 1)
            if bytes.isEmpty { break }
            head += bytes
        }
        #expect(String(decoding: head, as: UTF8.self).hasPrefix("HTTP/1.1 101"))
        return socket
    }

    private func message(_ count: Int, fill: UInt8) -> [UInt8] {
        FrameWriter.frame(opcode: .binary, payload: [UInt8](repeating: fill, count: count), mask: true)
    }

    @Test func aTricklingClientIsClosedWithPolicyViolation() async throws {
        let server = try WebSocketServer(limits: .init(idleTimeout: .seconds(20), messageReceiveTimeout: .milliseconds(800))) { connection in
            for await _ in connection.messages {}
        }
        defer { server.stop() }
        let socket = try upgradedSocket(server)
        defer { socket.close() }
        let frame = message(300, fill: 7)
        let started = ContinuousClock.now
        let stop = Flag()
        let trickler = Thread { [socket] in
            // One byte every 50 ms: the idle clock never runs out, the whole frame would take 15 s.
            for byte in frame where !stop.isSet {
                guard (try? socket.write([byte])) != nil else { break }
                Thread.sleep(forTimeInterval: 0.05)
            }
        }
        trickler.start()
        defer { stop.set() }
        let close = try await offThread { try readFrameStart(from: socket) }
        let waited = ContinuousClock.now - started
        #expect(close.first == 0x88, "a close frame, got \(close)")
        #expect(close.count >= 4 && UInt16(close[2]) << 8 | UInt16(close[3]) == 1008, "1008, got \(close)")
        #expect(waited >= .milliseconds(800))
        #expect(waited < .seconds(10), "closed long before the frame would have finished")
    }

    /// A message begun in the same packet as the upgrade request, and never finished, is held
    /// to the timeout too (found by review: no later read came to start its clock).
    @Test func aMessageBegunWithTheUpgradeIsTimedToo() async throws {
        let server = try WebSocketServer(limits: .init(idleTimeout: .seconds(60), messageReceiveTimeout: .milliseconds(800))) { connection in
            for await _ in connection.messages {}
        }
        defer { server.stop() }
        let socket = try TCPSocket.connect(host: "127.0.0.1", port: server.port, timeout: .seconds(5))
        defer { socket.close() }
        try socket.setReadDeadline(.now + .seconds(30))
        // The request and the first 10 bytes of a 300-byte frame, in one write; then nothing.
        let started = ContinuousClock.now
        try socket.write(Self.upgradeRequest + Array(message(300, fill: 7).prefix(10)))
        var head: [UInt8] = []
        while head.count < 4096, head.firstRange(of: Array("\r\n\r\n".utf8)) == nil {
            let bytes = try socket.read(maximum: 1)
            if bytes.isEmpty { break }
            head += bytes
        }
        #expect(String(decoding: head, as: UTF8.self).hasPrefix("HTTP/1.1 101"))
        let close = try await offThread { try readFrameStart(from: socket) }
        let waited = ContinuousClock.now - started
        #expect(close.first == 0x88, "a close frame, got \(close)")
        #expect(close.count >= 4 && UInt16(close[2]) << 8 | UInt16(close[3]) == 1008, "1008, got \(close)")
        #expect(waited < .seconds(20), "closed by the message timeout, not the idle one")
    }

    @Test func messagesThatEachArriveInTimeKeepTheConnection() async throws {
        let received = Counter()
        let opened = ConnectionBox()
        let server = try WebSocketServer(limits: .init(messageReceiveTimeout: .milliseconds(3000)),
                                         connected: { opened.set($0) }) { connection in
            for await _ in connection.messages { received.add() }
        }
        defer { server.stop() }
        let socket = try upgradedSocket(server)
        defer { socket.close() }
        // Every write ends half-way through a message: the server is never between messages
        // after a read, yet each message takes 300 ms (a tenth of the timeout). Sixteen take
        // 4.8 s, well past the timeout. Written from a thread of its own, which a loaded test
        // run's task pool cannot hold back for seconds between the halves.
        let frames = (0..<17).map { message(100, fill: UInt8($0)) }
        let wrote = try await offThread { () -> Bool in
            try socket.write(Array(frames[0].prefix(50)))
            for index in 0..<16 {
                Thread.sleep(forTimeInterval: 0.3)
                try socket.write(Array(frames[index].dropFirst(50)) + Array(frames[index + 1].prefix(50)))
            }
            return true
        }
        #expect(wrote)
        #expect(await eventually { received.value == 16 }, "\(received.value) messages")
        #expect(opened.connection?.isOpen == true, "closed: \(String(describing: opened.connection?.closeInfo))")
    }

    @Test func timeSpentNotReadingDoesNotCount() async throws {
        let received = Counter()
        let release = Flag()
        let opened = ConnectionBox()
        let server = try WebSocketServer(options: .init(maximumBufferedBytes: 1024),
                                         limits: .init(messageReceiveTimeout: .milliseconds(500)),
                                         connected: { opened.set($0) }) { connection in
            while !release.isSet { try? await Task.sleep(for: .milliseconds(20)) }
            for await _ in connection.messages { received.add() }
        }
        defer { server.stop() }
        let socket = try upgradedSocket(server)
        defer { socket.close() }
        let first = message(2000, fill: 1), second = message(2000, fill: 2)
        // The first message fills the budget (reading stops) with the second half-read.
        try socket.write(first + second.prefix(1000))
        try await Task.sleep(for: .milliseconds(100))
        try socket.write(Array(second.dropFirst(1000)))
        try await Task.sleep(for: .milliseconds(1500))
        #expect(opened.connection?.isOpen == true, "closing while the server was not reading")
        release.set()
        #expect(await eventually { received.value == 2 }, "\(received.value) messages")
        #expect(opened.connection?.isOpen == true)
    }

    /// The engine's view: a ping inside a fragmented message is not the message's end.
    @Test func theEngineKnowsWhenAMessageIsHalfReceived() {
        var core = WebSocketConnectionCore(role: .server)
        #expect(!core.isInsideMessage)
        let start = FrameWriter.frame(opcode: .text, payload: Array("ab".utf8), fin: false, mask: true)
        _ = core.receive(start.prefix(3))
        #expect(core.isInsideMessage, "a frame header cut short")
        _ = core.receive(start.dropFirst(3))
        #expect(core.isInsideMessage && core.completedMessages == 0, "the message has no final frame")
        _ = core.receive(FrameWriter.frame(opcode: .ping, payload: [1], mask: true))
        #expect(core.isInsideMessage && core.completedMessages == 0, "a ping in between ends nothing")
        _ = core.receive(FrameWriter.frame(opcode: .continuation, payload: Array("c".utf8), mask: true))
        #expect(!core.isInsideMessage && core.completedMessages == 1)
        _ = core.receive(FrameWriter.frame(opcode: .ping, payload: [], mask: true))
        #expect(core.completedMessages == 2, "a ping between messages is one")
    }
}

private final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
}

private final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    var value: Int { lock.withLock { count } }
    func add() { lock.withLock { count += 1 } }
}

private final class ConnectionBox: @unchecked Sendable {
    private let lock = NSLock()
    private var held: WebSocketConnection?
    var connection: WebSocketConnection? { lock.withLock { held } }
    func set(_ connection: WebSocketConnection) { lock.withLock { held = connection } }
}

/// The first bytes of the next frame (its header and a close code, when it has one).
private func readFrameStart(from socket: TCPSocket) throws -> [UInt8] {
    var received: [UInt8] = []
    while received.count < 4 {
        let bytes = try socket.read(maximum: 4 - received.count)
        if bytes.isEmpty { break }
        received += bytes
    }
    return received
}

