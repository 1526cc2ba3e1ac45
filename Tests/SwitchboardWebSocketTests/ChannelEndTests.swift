import Foundation
import SwitchboardIO
import SwitchboardWebSocket
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A TLS handshake the peer walks out of fails at once with the reason, not at the connect
/// timeout. (A paused channel's end: `PausedChannelTests` in SwitchboardIOTests.)
@Suite(.timeLimit(.minutes(2)))
struct ChannelEndTests {
    @Test func aPeerThatClosesDuringTheTLSHandshakeFailsItAtOnce() async throws {
        let listener = try TCPListener()
        defer { listener.close() }
        // Accepts, reads the ClientHello, and closes.
        Thread.detachNewThread {
            guard let socket = listener.accept() else { return }
            _ = try? socket.read(maximum: 65_536)
            socket.close()
        }
        let started = ContinuousClock.now
        do {
            let connection = try await WebSocketClient.connect(to: URL(string: "wss://127.0.0.1:\(listener.port)/")!,
                                                              options: .init(connectTimeout: .seconds(20), tls: TLSOptions()))
            connection.abort()
            Issue.record("a handshake the peer walked out of must fail")
        } catch {
            #expect(!error.description.contains("timed out"), "\(error)")
        }
        #expect(ContinuousClock.now - started < .seconds(10))
    }
}
