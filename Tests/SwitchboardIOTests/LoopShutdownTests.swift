import Foundation
import PeerSupport
@testable import SwitchboardIO
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// What is still registered when its loop shuts down ends then, instead of waiting for
/// reports that can no longer come (from the event-loop review: registrations were dropped
/// silently, so a queued write's completion and the peer's end were never heard).
@Suite(.timeLimit(.minutes(1)))
struct LoopShutdownTests {
    typealias Box = EventLoopCoreTests.Box
    final class Recorder: ChannelDelegate, @unchecked Sendable {
        let ends = Box<[String?]>([])
        func channelRead(_ bytes: UnsafeRawBufferPointer) {}
        func channelEnded(reason: String?) { ends.update { $0.append(reason) } }
        func channelWriteFailed(_ reason: String) {}
    }

    @Test func anOpenChannelEndsAndItsQueuedWriteFails() async throws {
        let loop = try EventLoop(name: "test-stop-channel")
        let (watched, peer) = try #require(nonBlockingSocketPair())
        defer { _ = close(peer) }
        let channel = SocketChannel(descriptor: watched, loop: loop)
        let recorder = Recorder()
        let opened = Box(false)
        channel.activate(delegate: recorder) { _ in opened.update { $0 = true } }
        #expect(await eventually { opened.value })
        // More than the socket buffers take from a peer that never reads: most of it queues.
        let completed = Box<String??>(nil)
        _ = channel.write([UInt8](repeating: 7, count: 8 << 20)) { failure in completed.update { $0 = .some(failure) } }
        await loop.shutdown()
        #expect(await eventually { completed.value != nil }, "the queued write's completion never came")
        let failure: String? = completed.value ?? nil
        #expect(failure != nil, "a write that never went out reported success")
        #expect(await eventually { recorder.ends.value.count == 1 })
        #expect(recorder.ends.value.first??.contains("shut down") == true, "\(recorder.ends.value)")
        #expect(channel.isClosed)
    }

    @Test func aRegisteredHandlerIsTold() async throws {
        final class Handler: IOHandler, @unchecked Sendable {
            let stopped = Box(0)
            func readable() {}
            func writable() {}
            func loopStopped() { stopped.update { $0 += 1 } }
        }
        let loop = try EventLoop(name: "test-stop-handler")
        let (watched, peer) = try #require(nonBlockingSocketPair())
        defer { _ = close(watched); _ = close(peer) }
        let handler = Handler()
        let registered = Box(false)
        loop.execute { registered.update { $0 = (try? loop.register(watched, interest: .read, handler: handler)) != nil } }
        #expect(await eventually { registered.value })
        await loop.shutdown()
        #expect(handler.stopped.value == 1)
    }
}
