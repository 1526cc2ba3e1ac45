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

    @Test func aStoppedLoopReleasesItsDescriptorsWhileStillReferenced() async throws {
        let loop = try EventLoop(name: "test-stop-descriptors")
        let descriptors = loop.selectorDescriptors
        // Duplicates keep each file open, so a number the loop released is told apart from
        // one still naming the same file, even once another test's descriptor takes it.
        let duplicates = descriptors.map { dup($0) }
        defer { for duplicate in duplicates { _ = close(duplicate) } }
        try #require(duplicates.allSatisfy { $0 >= 0 })
        #expect(zip(descriptors, duplicates).allSatisfy { Self.shareOneFile($0, $1) }, "the check itself does not see a live selector")
        await loop.shutdown()
        for (original, duplicate) in zip(descriptors, duplicates) {
            #expect(!Self.shareOneFile(original, duplicate), "descriptor \(original) was still the loop's after shutdown")
        }
        // A late call from another thread reaches no descriptor: the watch is refused, not
        // made on whatever file the number names now.
        let (watched, peer) = try #require(nonBlockingSocketPair())
        defer { _ = close(watched); _ = close(peer) }
        #expect(!loop.reregister(watched, token: 1, from: [], to: .read))
        loop.deregister(watched, token: 1, interest: .read)
        let ran = Box(false)
        loop.execute { ran.update { $0 = true } }
        #expect(await eventually { ran.value }, "work given to a stopped loop still runs elsewhere")
        withExtendedLifetime(loop) {}
    }

    /// Whether two descriptors name one open file: its status flags are shared, so each
    /// change made through `second` shows through `first`.
    static func shareOneFile(_ first: Int32, _ second: Int32) -> Bool {
        let original = fcntl(second, F_GETFL)
        guard original >= 0 else { return false }
        defer { _ = fcntl(second, F_SETFL, original) }
        for flags in [original | O_NONBLOCK, original & ~O_NONBLOCK, original | O_NONBLOCK] {
            guard fcntl(second, F_SETFL, flags) == 0 else { return false }
            let seen = fcntl(first, F_GETFL)
            guard seen >= 0, seen & O_NONBLOCK == flags & O_NONBLOCK else { return false }
        }
        return true
    }
}
