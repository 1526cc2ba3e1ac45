import Foundation
import PeerSupport
@testable import SwitchboardIO
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes nobody awaits, made on the loop's thread, go out together when the loop's turn
/// ends: in order with every other write, and never lost to a close.
@Suite(.timeLimit(.minutes(2)))
struct CollectedWritesTests {
    typealias Box = EventLoopCoreTests.Box

    final class Recorder: ChannelDelegate, @unchecked Sendable {
        let writeFailures = Box<[String]>([])
        func channelRead(_ bytes: UnsafeRawBufferPointer) {}
        func channelEnded(reason: String?) {}
        func channelWriteFailed(_ reason: String) { writeFailures.update { $0.append(reason) } }
    }

    /// An open channel on a loop of its own, and the blocking descriptor at the other end.
    private func openChannel() async throws -> (loop: EventLoop, channel: SocketChannel, peer: Int32, recorder: Recorder) {
        let loop = try EventLoop(name: "collected-writes-test")
        let (watched, peer) = try #require(nonBlockingSocketPair())
        let channel = SocketChannel(descriptor: watched, loop: loop)
        let recorder = Recorder()
        let opened = Box(false)
        channel.activate(delegate: recorder) { _ in opened.update { $0 = true } }
        #expect(await eventually { opened.value })
        return (loop, channel, peer, recorder)
    }

    /// Runs `body` on the loop's thread and waits for it.
    private func onLoop<T: Sendable>(_ loop: EventLoop, _ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            loop.execute { continuation.resume(returning: body()) }
        }
    }

    /// Reads from the blocking `peer` until `count` bytes or its end, waiting at most ten
    /// seconds for each read.
    private func read(_ count: Int, from peer: Int32) -> [UInt8] {
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(peer, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while received.count < count {
            let got = buffer.withUnsafeMutableBytes { recv(peer, $0.baseAddress, $0.count, 0) }
            guard got > 0 else { break }
            received += buffer[0..<got]
        }
        return received
    }

    private static func chunk(_ value: UInt8, _ count: Int = 100) -> [UInt8] { [UInt8](repeating: value, count: count) }

    /// The bytes as runs of one value, "value×count" each: a failure reads as the order the
    /// chunks arrived in, not as thousands of bytes.
    private static func runs(_ bytes: [UInt8]) -> [String] {
        var runs: [(value: UInt8, count: Int)] = []
        for byte in bytes {
            if runs.last?.value == byte { runs[runs.count - 1].count += 1 } else { runs.append((byte, 1)) }
        }
        return runs.map { "\($0.value)×\($0.count)" }
    }

    @Test func writesMadeInOneTurnShareOneSystemCall() async throws {
        let (loop, channel, peer, _) = try await openChannel()
        let before = channel.sendCallCount
        let results = await onLoop(loop) {
            (0..<10).map { index -> Bool in
                if case .written = channel.write(Self.chunk(UInt8(index)), completion: nil) { return true }
                return false
            }
        }
        #expect(results == Array(repeating: true, count: 10))
        let received = read(1000, from: peer)
        #expect(Self.runs(received) == Self.runs((0..<10).flatMap { Self.chunk(UInt8($0)) }))
        #expect(channel.sendCallCount - before == 1, "ten writes in one turn took \(channel.sendCallCount - before) sends")
        channel.close()
        _ = close(peer)
        await loop.shutdown()
    }

    @Test func writesFromOtherThreadsAndAwaitedWritesFollowWhatTheTurnCollected() async throws {
        let (loop, channel, peer, _) = try await openChannel()
        let completed = Box(false)
        await onLoop(loop) {
            _ = channel.write(Self.chunk(1), completion: nil)
            // Another thread's write, while the loop holds the first: the first goes before it.
            let done = DispatchSemaphore(value: 0)
            DispatchQueue.global().async {
                _ = channel.write(Self.chunk(2), completion: nil)
                done.signal()
            }
            done.wait()
            _ = channel.write(Self.chunk(3), completion: nil)
            // An awaited write goes straight out, after what was collected.
            if case .written = channel.write(Self.chunk(4), completion: { _ in completed.update { $0 = true } }) {
                completed.update { $0 = true }
            }
            _ = channel.write(Self.chunk(5), completion: nil)
        }
        let received = read(500, from: peer)
        #expect(Self.runs(received) == ["1×100", "2×100", "3×100", "4×100", "5×100"])
        #expect(await eventually { completed.value })
        channel.close()
        _ = close(peer)
        await loop.shutdown()
    }

    @Test func closingSendsWhatTheTurnCollected() async throws {
        for graceful in [true, false] {
            let (loop, channel, peer, _) = try await openChannel()
            await onLoop(loop) {
                _ = channel.write(Self.chunk(7), completion: nil)
                if graceful {
                    channel.closeAfterFlushing(timeout: .seconds(5))
                } else {
                    channel.close()
                }
            }
            // All of it, then the end of the stream.
            #expect(Self.runs(read(200, from: peer)) == ["7×100"], "graceful: \(graceful)")
            _ = close(peer)
            await loop.shutdown()
        }
    }

    @Test func aTurnCollectsNoMoreThanTheLimit() async throws {
        let (loop, channel, peer, _) = try await openChannel()
        let size = SocketChannel.corkLimit / 2 + 1
        let before = channel.sendCallCount
        await onLoop(loop) {
            for value: UInt8 in 1...3 { _ = channel.write(Self.chunk(value, size), completion: nil) }
        }
        let received = read(3 * size, from: peer)
        #expect(Self.runs(received) == [1, 2, 3].map { "\($0)×\(size)" })
        // Each write past the limit sends what came before it.
        #expect(channel.sendCallCount - before >= 2)
        channel.close()
        _ = close(peer)
        await loop.shutdown()
    }

    @Test func aCollectedWriteThatFailsIsReportedAsAQueuedOneIs() async throws {
        let (loop, channel, peer, recorder) = try await openChannel()
        _ = close(peer)
        let result = await onLoop(loop) { () -> Bool in
            if case .written = channel.write(Self.chunk(9), completion: nil) { return true }
            return false
        }
        #expect(result, "the write was collected")
        #expect(await eventually { !recorder.writeFailures.value.isEmpty })
        #expect(await eventually { channel.isClosed })
        await loop.shutdown()
    }

    /// Records each end of reading it hears.
    final class EndRecorder: ChannelDelegate, @unchecked Sendable {
        let ends = Box<[String?]>([])
        func channelRead(_ bytes: UnsafeRawBufferPointer) {}
        func channelEnded(reason: String?) { ends.update { $0.append(reason) } }
        func channelWriteFailed(_ reason: String) {}
    }

    /// An open channel on a loop of its own, heard by an ``EndRecorder``, and its peer.
    private func channelHeardBy(name: String) async throws -> (loop: EventLoop, channel: SocketChannel, peer: Int32, first: EndRecorder) {
        let loop = try EventLoop(name: name)
        let (watched, peer) = try #require(nonBlockingSocketPair())
        let channel = SocketChannel(descriptor: watched, loop: loop)
        let first = EndRecorder()
        let opened = Box(false)
        channel.activate(delegate: first) { _ in opened.update { $0 = true } }
        #expect(await eventually { opened.value })
        return (loop, channel, peer, first)
    }

    /// A delegate that takes over a channel already closed (a TLS failure in the read that
    /// brought an upgrade's answer, told to the delegate before it) hears that it ended, once,
    /// instead of taking the connection for open for ever (found by review).
    @Test func aDelegateTakingOverAnEndedChannelHearsItEnded() async throws {
        let (loop, channel, peer, _) = try await channelHeardBy(name: "ended-channel-test")
        defer { _ = close(peer) }
        // Closed for a failure of its own (as a dead TLS session closes it).
        channel.close(reason: "the TLS session failed")
        #expect(await eventually { channel.isClosed })
        let second = EndRecorder()
        channel.activate(delegate: second, handshakeDone: nil)
        #expect(await eventually { second.ends.value.count == 1 })
        await onLoop(loop) {}
        #expect(second.ends.value.count == 1)
        await loop.shutdown()
    }

    /// A delegate that takes over an open channel whose reading already ended (the peer's FIN
    /// in the read that brought an upgrade, heard by the delegate before it) hears that end
    /// too, once, instead of waiting for bytes for ever (found by review).
    @Test func aDelegateTakingOverAChannelWhoseReadEndedHearsItEnded() async throws {
        let (loop, channel, peer, first) = try await channelHeardBy(name: "read-ended-channel-test")
        _ = shutdown(peer, Int32(SHUT_WR))
        #expect(await eventually { first.ends.value.count == 1 })
        #expect(!channel.isClosed, "the peer's FIN ends reading, not the channel")
        let second = EndRecorder()
        channel.activate(delegate: second, handshakeDone: nil)
        #expect(await eventually { second.ends.value.count == 1 })
        #expect(second.ends.value == [nil], "a clean end, as the first heard it")
        await onLoop(loop) {}
        #expect(second.ends.value.count == 1 && first.ends.value.count == 1)
        channel.close()
        _ = close(peer)
        await loop.shutdown()
    }

    /// A collected write that fails when a graceful close sends it, in the same turn, is
    /// reported once, as it is when the turn's end sends it (found by review: the report was
    /// left to the loop, by when the close had let the delegate go, and nobody heard of it).
    @Test func aCollectedWriteThatFailsAsTheChannelClosesIsReported() async throws {
        let (loop, channel, peer, recorder) = try await openChannel()
        _ = close(peer)
        let result = await onLoop(loop) { () -> Bool in
            guard case .written = channel.write(Self.chunk(9), completion: nil) else { return false }
            channel.closeAfterFlushing(timeout: .seconds(5))
            return true
        }
        #expect(result, "the write was collected")
        #expect(await eventually { recorder.writeFailures.value.count == 1 })
        #expect(await eventually { channel.isClosed })
        // Nothing reports it a second time.
        await onLoop(loop) {}
        #expect(recorder.writeFailures.value.count == 1)
        await loop.shutdown()
    }
}
