import Foundation
import SignalChat
import SwitchboardChat
import SwitchboardRuntime
import SwitchboardWebSocket
import Testing

/// Each connection keeps the auth its own upgrade decided, even when two clients send the
/// same `Sec-WebSocket-Key` (which the client chooses, so a server must not key on it).
@Suite struct UpgradeAuthTests {
    /// Upgrades a raw socket with `key`, optionally with credentials; returns it once 101 arrives.
    static func upgrade(port: Int, key: String, authorization: String?) throws -> TCPSocket {
        let socket = try TCPSocket.connect(host: "127.0.0.1", port: port, timeout: .seconds(5))
        var request = "GET /v1/websocket/ HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        request += "Sec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\n"
        if let authorization { request += "Authorization: \(authorization)\r\n" }
        try socket.write(Array((request + "\r\n").utf8))
        try socket.setReadDeadline(.now + .seconds(5))
        var received: [UInt8] = []
        while !String(decoding: received, as: UTF8.self).contains("\r\n\r\n") {
            let chunk = try socket.read(maximum: 1024)
            guard !chunk.isEmpty else { break }
            received += chunk
        }
        #expect(String(decoding: received, as: UTF8.self).hasPrefix("HTTP/1.1 101"))
        return socket
    }

    @Test func twoUpgradesWithTheSameKeyKeepTheirOwnAuth() async throws {
        let server = try ChatServer(routes: [])
        defer { server.stop() }
        let key = "dGhlIHNhbXBsZSBub25jZQ=="
        // Both upgrades are answered before either connection's handler looks up its auth.
        let withCredentials = try Self.upgrade(port: server.port, key: key, authorization: "Basic dXNlci4xOnB3")
        let anonymous = try Self.upgrade(port: server.port, key: key, authorization: nil)
        defer {
            withCredentials.close()
            anonymous.close()
        }
        let first = try #require(await server.client(at: 0))
        let second = try #require(await server.client(at: 1))
        #expect(Set([first.auth, second.auth]) == Set([.account, .none]))
    }
}
