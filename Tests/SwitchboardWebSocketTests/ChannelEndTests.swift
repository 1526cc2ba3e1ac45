import Foundation
import PeerSupport
import SwitchboardIO
import SwitchboardWebSocket
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A TLS handshake the peer walks out of fails at once with the reason, not at the connect
/// timeout; a close asked for during the handshake still delivers what was written before it;
/// a channel closed before it starts says so to whoever waits for its start.
/// (A paused channel's end: `PausedChannelTests` in SwitchboardIOTests.)
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

    /// Records how something ended: a channel (as its delegate), a start, a write.
    final class Collector: ChannelDelegate, @unchecked Sendable {
        private let lock = NSLock()
        private var ending: String??
        func channelRead(_ chunk: UnsafeRawBufferPointer) {}
        func channelEnded(reason: String?) { lock.withLock { ending = .some(reason) } }
        func channelWriteFailed(_ reason: String) {}
        var ended: String?? { lock.withLock { ending } }
    }

    #if os(Linux)
    /// Two connected local sockets, for channels that need no network.
    func socketPair() throws -> [Int32] {
        var pair: [Int32] = [0, 0]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
        return pair
    }

    @Test func activatingAClosedChannelAnswersWhoeverWaitsForItsStart() async throws {
        let pair = try socketPair()
        defer { _ = close(pair[1]) }
        let channel = SocketChannel(descriptor: pair[0], loop: EventLoopGroup.shared.next())
        channel.close()
        let start = Collector()
        channel.activate(delegate: Collector()) { start.channelEnded(reason: $0) }
        let deadline = ContinuousClock.now + .seconds(30)
        while start.ended == nil && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        #expect(start.ended == .some("the socket is closed"))
    }

    // Server-side TLS comes from the OpenSSL shim, which only Linux builds have.
    @Test func closeAfterFlushingDuringTheTLSHandshakeSendsWhatWasWrittenFirst() async throws {
        let pair = try socketPair()
        let context = try TLSServerContext(certificateChainPath: await TestCertificates.file("good.pem"),
                                           privateKeyPath: await TestCertificates.file("good.key"))
        let serverSession = try #require(context.makeSession())
        let trust = try String(contentsOfFile: await TestCertificates.file("ca.pem"), encoding: .utf8)
        let clientSession = TLSSession(try TLSEngine(clientTrusting: trust, serverName: "localhost"))
        let loops = EventLoopGroup.shared
        let server = SocketChannel(descriptor: pair[0], loop: loops.next(), tls: serverSession)
        let client = SocketChannel(descriptor: pair[1], loop: loops.next(), tls: clientSession)
        defer { server.close() }
        server.activate(delegate: Collector())
        let handshake = Collector()
        client.activate(delegate: Collector()) { handshake.channelEnded(reason: $0) }
        // Written and closed before the handshake can have finished: both wait for it.
        let written = Collector()
        let result = client.write(Array("written before the handshake".utf8)) { written.channelEnded(reason: $0) }
        guard case .queued = result else {
            Issue.record("a write before the handshake waits for it, got \(result)")
            return
        }
        client.closeAfterFlushing(timeout: .seconds(60))
        guard case .failed = client.write([1], completion: nil) else {
            Issue.record("a write after closeAfterFlushing must fail")
            return
        }
        let deadline = ContinuousClock.now + .seconds(30)
        while (written.ended == nil || !client.isClosed) && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        // Before, the close came at once: the handshake was cut off and the write failed.
        #expect(handshake.ended == .some(nil), "the handshake completes")
        #expect(written.ended == .some(nil), "the write is sent, and its completion says so")
        #expect(client.isClosed)
    }
    #endif
}
