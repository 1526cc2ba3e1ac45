import Foundation
import SwitchboardChat
import SwitchboardRuntime
import SwitchboardWebSocket
import Testing

/// The mock server refuses envelopes Signal's server refuses, with the same close (1007
/// "Badly formatted"), so a client that sends one finds out against the mock.
@Suite(.timeLimit(.minutes(2))) struct BadlyFormattedEnvelopeTests {
    static func closeCode(after payload: [UInt8], isText: Bool = false) async throws -> WebSocketCloseCode? {
        let server = try ChatServer(routes: [])
        defer { server.stop() }
        let socket = try await WebSocketClient.connect(to: server.url)
        if isText { try await socket.send(text: String(decoding: payload, as: UTF8.self)) } else { try await socket.send(binary: Data(payload)) }
        let closed = FirstAnswer<WebSocketCloseInfo?>()
        Task { _ = closed.offer(await socket.waitUntilClosed()) }
        Task {
            try? await Task.sleep(for: .seconds(2))
            _ = closed.offer(nil)
        }
        let info = await closed.value
        socket.abort()
        return info?.code
    }

    @Test func envelopesSignalsServerRefusesCloseWith1007() async throws {
        #expect(try await Self.closeCode(after: [0xFF, 0xFF, 0xFF]) == .invalidPayload, "not protobuf")
        #expect(try await Self.closeCode(after: [0x08, 0x01]) == .invalidPayload, "a request with no verb or path")
        #expect(try await Self.closeCode(after: [0x08, 0x02, 0x1A, 0x02, 0x08, 0x05]) == .invalidPayload, "a response with an id only")
        #expect(try await Self.closeCode(after: [0x08, 0x07]) == .invalidPayload, "an unknown type")
        #expect(try await Self.closeCode(after: Array("hello".utf8), isText: true) == nil, "text frames are ignored")
    }

    /// After a badly formatted envelope nothing more the client sends is served, and the
    /// close begins once (found by review: every bad frame of a read began a close of its own,
    /// a task, a timer and a waiter each, and a request behind the bad one was still served).
    @Test func nothingAfterABadlyFormattedEnvelopeIsServed() async throws {
        let server = try ChatServer(routes: [])
        defer { server.stop() }
        let socket = try await WebSocketClient.connect(to: server.url)
        // GET /v1/keepalive, id 7: the server answers it itself, whatever the routes.
        let request: [UInt8] = [0x0A, 0x03] + Array("GET".utf8) + [0x12, 0x0D] + Array("/v1/keepalive".utf8) + [0x20, 0x07]
        let keepalive = Data([0x08, 0x01, 0x12, UInt8(request.count)] + request)
        try await socket.send(binary: keepalive)
        try await socket.send(binary: Data([0xFF, 0xFF, 0xFF]))
        for _ in 0..<50 { try await socket.send(binary: Data()) }
        try await socket.send(binary: keepalive)
        var answers = 0
        for await message in socket.messages {
            if case .binary = message { answers += 1 }
        }
        #expect(answers == 1, "only the keepalive before the bad envelope is answered")
        #expect(await socket.waitUntilClosed().code == .invalidPayload)
    }
}
