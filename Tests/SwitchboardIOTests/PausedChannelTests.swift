import Foundation
import PeerSupport
@testable import SwitchboardIO
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The end of a stream costs nothing after it is seen: a loop does not spin on a peer's FIN
/// that nobody reads, and a paused channel reads nothing until it resumes.
@Suite(.timeLimit(.minutes(2)))
struct PausedChannelTests {
    final class Recorder: ChannelDelegate, @unchecked Sendable {
        let reads = EventLoopCoreTests.Box(0)
        let ends = EventLoopCoreTests.Box(0)
        func channelRead(_ bytes: UnsafeRawBufferPointer) { reads.update { $0 += bytes.count } }
        func channelEnded(reason: String?) { ends.update { $0 += 1 } }
        func channelWriteFailed(_ reason: String) {}
    }

    @Test func aPausedChannelWhosePeerLeftNeitherReadsNorSpins() async throws {
        let loop = try EventLoop(name: "paused-channel-test")
        let (watched, peer) = try #require(nonBlockingSocketPair())
        let channel = SocketChannel(descriptor: watched, loop: loop)
        let recorder = Recorder()
        channel.activate(delegate: recorder)
        channel.setReading(false)
        try await Task.sleep(for: .milliseconds(50))
        // The peer sends, then closes: nothing may be read while paused, and the FIN must not
        // wake the loop on every turn.
        _ = [UInt8](repeating: 7, count: 10).withUnsafeBytes { send(peer, $0.baseAddress, $0.count, 0) }
        _ = close(peer)
        let before = await loop.turnCount
        try await Task.sleep(for: .milliseconds(300))
        let turns = await loop.turnCount - before
        #expect(turns < 50, "the loop turned \(turns) times in 300 ms with nothing to do")
        #expect(recorder.reads.value == 0, "read while paused")
        // Resumed: the bytes, then the end, once.
        channel.setReading(true)
        _ = await eventually(within: .seconds(60)) { recorder.ends.value != 0 }
        #expect(recorder.reads.value == 10)
        #expect(recorder.ends.value == 1)
        channel.close()
        await loop.shutdown()
    }
}
