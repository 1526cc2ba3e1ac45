import Foundation
import SwitchboardWebSocket
import Testing

/// A URL that is not a WebSocket URL is refused without repeating its secrets: user info and
/// query (where old APIs put credentials) stay out of the error, and so out of logs.
@Suite struct HandshakeSecretsTests {
    @Test func aBadURLsErrorNamesSchemeAndHostOnly() {
        for text in ["https://chat.example.org/v1/websocket/?login=alice&password=hunter2",
                     "wss://alice:hunter2@/v1/websocket/"] {
            do {
                _ = try WebSocketEndpoint(URL(string: text)!)
                Issue.record("\(text) must be refused")
            } catch {
                #expect(!error.description.contains("hunter2"), "\(error)")
                #expect(!error.description.contains("alice"), "\(error)")
            }
        }
    }
}
