import Foundation
import SwitchboardRuntime
@testable import SwitchboardWebSocket
import Testing

/// A client connection the app lets go of without closing it takes its socket with it: the
/// server sees the connection end instead of holding it open for ever.
@Suite(.timeLimit(.minutes(2))) struct ReleasedConnectionTests {
    @Test func aConnectionLetGoOfClosesItsSocket() async throws {
        let ended = Locked(false)
        let server = try WebSocketServer { connection in
            for await _ in connection.messages {}
            ended.withLock { $0 = true }
        }
        defer { server.stop() }
        var client: WebSocketConnection? = try await WebSocketClient.connect(to: URL(string: "ws://127.0.0.1:\(server.port)/")!)
        try await client?.send(text: "hello")
        weak let released = client
        client = nil
        for _ in 0..<1000 where released != nil { try await Task.sleep(for: .milliseconds(5)) }
        #expect(released == nil, "nothing else holds the connection")
        for _ in 0..<2000 where !ended.current { try await Task.sleep(for: .milliseconds(5)) }
        #expect(ended.current, "the server saw the client's socket close")
    }
}
