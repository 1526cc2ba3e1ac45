import Foundation
@testable import SwitchboardIO
import SwitchboardWebSocket
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The end of a stream is noticed once and costs nothing after: a loop does not spin on a
/// peer's FIN that nobody reads, a paused channel reads nothing, and a TLS handshake the peer
/// walks out of fails at once with the reason.
@Suite(.timeLimit(.minutes(2)))
struct ChannelEndTests {
    final class Recorder: ChannelDelegate, @unchecked Sendable {
        let reads = ManagedCounter()
        let ends = ManagedCounter()
        func channelRead(_ bytes: UnsafeRawBufferPointer) { for _ in 0..<bytes.count { reads.increment() } }
        func channelEnded(reason: String?) { ends.increment() }
        func channelWriteFailed(_ reason: String) {}
    }

    @Test func aPausedChannelWhosePeerLeftNeitherReadsNorSpins() async throws {
        let loop = try EventLoop(name: "channel-end-test")
        var pair: [Int32] = [0, 0]
        #if canImport(Glibc)
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
        #else
        #expect(socketpair(AF_UNIX, SOCK_STREAM, 0, &pair) == 0)
        #endif
        _ = fcntl(pair[0], F_SETFL, fcntl(pair[0], F_GETFL, 0) | O_NONBLOCK)
        let channel = SocketChannel(descriptor: pair[0], loop: loop)
        let recorder = Recorder()
        channel.activate(delegate: recorder)
        channel.setReading(false)
        try await Task.sleep(for: .milliseconds(50))
        // The peer sends, then closes: nothing may be read while paused, and the FIN must not
        // wake the loop on every turn.
        _ = [UInt8](repeating: 7, count: 10).withUnsafeBytes { send(pair[1], $0.baseAddress, $0.count, 0) }
        _ = close(pair[1])
        let before = await loop.turnCount
        try await Task.sleep(for: .milliseconds(300))
        let turns = await loop.turnCount - before
        #expect(turns < 50, "the loop turned \(turns) times in 300 ms with nothing to do")
        #expect(recorder.reads.value == 0, "read while paused")
        // Resumed: the bytes, then the end, once.
        channel.setReading(true)
        for _ in 0..<200 where recorder.ends.value == 0 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(recorder.reads.value == 10)
        #expect(recorder.ends.value == 1)
        channel.close()
        await loop.shutdown()
    }

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
