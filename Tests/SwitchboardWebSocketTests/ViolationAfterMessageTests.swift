import Foundation
@testable import SwitchboardWebSocket
import Testing

/// A violation that arrives behind valid messages, in the same read, does not cut them off:
/// they are delivered, the application may answer them, and only then does the close with
/// the violation's code go out (Autobahn's strict verdict for cases 3.2, 4.1.3, 5.9 and kin).
@Suite struct ViolationAfterMessageTests {
    let helper = ConnectionCoreTests()

    func frame(_ opcode: WebSocketOpcode, _ payload: [UInt8], rsv: UInt8 = 0) -> [UInt8] {
        var bytes = FrameWriter.frame(opcode: opcode, payload: payload, fin: true, mask: false)
        bytes[0] |= rsv << 4
        return bytes
    }

    @Test(arguments: [
        [0x86, 0x00],       // reserved data opcode 6
        [0x8B, 0x01, 0x78], // reserved control opcode 11
        [0xB1, 0x01, 0x78], // RSV3 on a text frame
        [0x00, 0x01, 0x78], // a continuation with nothing to continue
    ] as [[UInt8]])
    func theMessageIsDeliveredAndMayBeAnsweredBeforeTheClose(violation: [UInt8]) throws {
        var core = WebSocketConnectionCore(role: .client)
        let actions = core.receive(frame(.text, Array("hello".utf8)) + violation + frame(.ping, []))
        #expect(helper.delivered(actions) == [.text("hello")])
        #expect(try helper.sentCloses(actions).isEmpty, "no close before the application answered")
        #expect(actions.contains { if case .failurePending(let info) = $0 { info.code == .protocolError } else { false } })
        #expect(!actions.contains { if case .send = $0 { true } else { false } }, "the ping behind the violation is not answered")
        // The application answers, then closes: the violation's code goes out.
        #expect(core.frame(for: .text("hello")) != nil)
        #expect(core.receive(frame(.text, Array("more".utf8))).isEmpty, "nothing is read after the violation")
        let closing = core.close(code: .normalClosure)
        #expect(try helper.sentCloses(closing) == [1002])
        #expect(helper.closeCode(closing) == .protocolError)
        #expect(core.frame(for: .text("late")) == nil)
    }

    @Test func aViolationWithNothingBeforeItFailsAtOnce() throws {
        var core = WebSocketConnectionCore(role: .client)
        let actions = core.receive([0x86, 0x00])
        #expect(try helper.sentCloses(actions) == [1002])
        #expect(helper.closeCode(actions) == .protocolError)
    }

    @Test func frameLimitsFollowTheMessageLimitHoweverSet() {
        var configuration = WebSocketConnectionCore.Configuration()
        #expect(configuration.maximumFrameSize == 512 * 1024)
        configuration.maximumMessageSize = 4 * 1024 * 1024
        #expect(configuration.maximumFrameSize == 4 * 1024 * 1024, "raising the message limit alone raises the frame limit")
        configuration.maximumFrameSize = 64 * 1024
        #expect(configuration.maximumFrameSize == 64 * 1024)
        configuration.maximumMessageSize = 1024
        #expect(configuration.maximumFrameSize == 1024, "a frame never exceeds a message")
        configuration.maximumMessageSize = 10
        #expect(configuration.maximumFrameSize == 125, "control frames always fit")
        var options = WebSocketClient.Options()
        options.maximumMessageSize = 2 * 1024 * 1024
        #expect(options.connection.configuration.maximumFrameSize == 2 * 1024 * 1024)
    }

    @Test func aMessageOverTheOldDefaultFrameSizeArrivesWhenOnlyTheMessageLimitWasRaised() {
        var configuration = WebSocketConnectionCore.Configuration()
        configuration.maximumMessageSize = 1 << 20
        var core = WebSocketConnectionCore(role: .client, configuration: configuration)
        let payload = [UInt8](repeating: 7, count: 600 * 1024)
        #expect(helper.delivered(core.receive(frame(.binary, payload))) == [.binary(Data(payload))])
    }

    @Test func theClientRefusesAnUnofferedExtensionOrSubprotocol() throws {
        let request = WebSocketHandshake.ClientRequest(host: "h", port: 80, path: "/", isSecure: false, subprotocols: ["chat.v1"])
        let accept = WebSocketHandshake.acceptValue(for: request.key)
        func head(_ extra: String) throws -> HTTPHead {
            let text = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: \(accept)\r\n\(extra)\r\n"
            return try #require(try HTTPHead.parse(Array(text.utf8))).head
        }
        #expect(try request.validate(head("Sec-WebSocket-Protocol: chat.v1\r\n")) == "chat.v1")
        for extra in ["Sec-WebSocket-Extensions: permessage-deflate\r\n", "Sec-WebSocket-Protocol: chat.v2\r\n",
                      "Sec-WebSocket-Protocol: chat.v1\r\nSec-WebSocket-Protocol: chat.v1\r\n", "Sec-WebSocket-Protocol: chat.v1, chat.v2\r\n"] {
            #expect(throws: WebSocketError.self, "\(extra)") { try request.validate(head(extra)) }
        }
    }
}

/// The peer's close is answered as soon as the application is done with what it was
/// delivered, not after the close timeout.
@Suite(.timeLimit(.minutes(3)))
struct CloseReplyTests {
    final class Received: @unchecked Sendable {
        let lock = NSLock()
        var messages: [WebSocketMessage] = []
    }

    @Test func anEchoingClientAnswersTheCloseOnceItHasReadEverything() async throws {
        let received = Received()
        let closed = AsyncStream.makeStream(of: (WebSocketCloseInfo, Duration).self)
        let server = try WebSocketServer(options: .init(deliversMessagesDirectly: true)) { connection in
            connection.deliverMessages { message in received.lock.withLock { received.messages.append(message) } }
            try? await connection.send(text: "one")
            try? await connection.send(text: "two")
            let started = ContinuousClock.now
            let info = await connection.close(code: .goingAway, reason: "bye")
            closed.continuation.yield((info, ContinuousClock.now - started))
        }
        defer { server.stop() }
        // A grace far longer than the test: only answering when done can pass.
        let client = try await WebSocketClient.connect(to: URL(string: "ws://127.0.0.1:\(server.port)/")!,
                                                       options: .init(connection: .init(closeTimeout: .seconds(30))))
        for await message in client.messages { try? await client.send(message) }
        var outcomes = closed.stream.makeAsyncIterator()
        let (info, elapsed) = try #require(await outcomes.next())
        #expect(info.wasClean && info.code == .goingAway)
        #expect(elapsed < .seconds(10), "answered after \(elapsed)")
        // (The echoes themselves reach a peer that reads after its close: hostile case 7.1.7.)
        #expect(await client.waitUntilClosed().code == .goingAway)
    }
}
