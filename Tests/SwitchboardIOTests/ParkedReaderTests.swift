import Foundation
import PeerSupport
@testable import SwitchboardIO
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A parked channel whose peer says more than the reader holds stops reading: the stream is
/// lost already, and a peer streaming at a preconnected socket (which may stay parked a
/// long time) was read and dropped at line rate (from the event-loop review).
@Suite(.timeLimit(.minutes(1)))
struct ParkedReaderTests {
    @Test func pastItsLimitTheChannelStopsReading() async throws {
        let loop = try EventLoop(name: "test-parked")
        let (watched, peer) = try #require(nonBlockingSocketPair())
        defer { _ = close(peer) }
        // The peer's writes must not block once the socket is full.
        _ = fcntl(peer, F_SETFL, fcntl(peer, F_GETFL) | O_NONBLOCK)
        let channel = SocketChannel(descriptor: watched, loop: loop)
        defer { channel.close() }
        let parked = ParkedReader(limit: 1024)
        parked.hold(channel)
        // Writes until the socket stays full for half a second, at most 3 s and 64 MB.
        let chunk = [UInt8](repeating: 1, count: 64 * 1024)
        var written = 0
        var fullSince: ContinuousClock.Instant?
        let deadline = ContinuousClock.now + .seconds(3)
        while written < 64 << 20, ContinuousClock.now < deadline {
            let sent = chunk.withUnsafeBytes { send(peer, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent > 0 {
                written += sent
                fullSince = nil
            } else {
                if let since = fullSince, ContinuousClock.now - since > .milliseconds(500) { break }
                if fullSince == nil { fullSince = .now }
                try await Task.sleep(for: .milliseconds(10))
            }
        }
        #expect(parked.endReason?.contains("more than 1024 bytes") == true)
        // What the socket buffers hold, not everything sent.
        #expect(written < 16 << 20, "\(written) bytes taken from a peer past the limit")
        await loop.shutdown()
    }
}
