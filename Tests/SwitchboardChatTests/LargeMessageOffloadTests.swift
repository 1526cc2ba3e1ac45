import Foundation
@testable import SwitchboardChat
import SwitchboardRuntime
import SwitchboardWebSocket
import Testing

/// Messages offloaded for decoding are bounded in bytes: past the limit, reading from the
/// peer pauses, and it resumes once the queue has drained to half; order never changes.
@Suite struct LargeMessageOffloadTests {
    @Test func aFloodOfCostlyMessagesPausesReadingUntilTheQueueDrains() async throws {
        let pauses = Locked<[Bool]>([])
        let handled = Locked<[UInt8]>([])
        let gate = DispatchSemaphore(value: 0)
        let offload = LargeMessageOffload(maximumQueuedBytes: 300 * 1024, pause: { paused in pauses.withLock { $0.append(paused) } }) { message in
            // The first message holds the queue, as a slow decode would.
            if message.payload.first == 0 { gate.wait() }
            handled.withLock { $0.append(message.payload.first ?? 255) }
        }
        for index in 0..<8 as Range<UInt8> {
            offload.receive(ReceivedWebSocketMessage(isText: false, payload: ArraySlice([UInt8](repeating: index, count: 100 * 1024))))
        }
        // 800 KiB queued behind a stuck decode: reading paused once, not yet resumed.
        #expect(pauses.current == [true])
        gate.signal()
        await offload.waitUntilIdle()
        #expect(handled.current == Array(0..<8), "in order")
        #expect(pauses.current == [true, false], "resumed once drained")
    }

    /// A resume from the decode queue that lands between the pause being decided and being
    /// applied must not leave reading paused for good (found by review). Here the pause
    /// itself lets the stuck decode finish and waits (up to a second) for its resume, which
    /// is the window made wide: applied outside the lock, the pause landed after the resume.
    /// (With the fix the resume waits on the lock the pause holds, so the pause's wait runs
    /// out: this test takes about a second.)
    @Test func aResumeCrossingAPauseLeavesReadingOn() async throws {
        let pauses = Locked<[Bool]>([])
        let release = DispatchSemaphore(value: 0)
        let resumed = DispatchSemaphore(value: 0)
        let offload = LargeMessageOffload(maximumQueuedBytes: 200_000, pause: { paused in
            if paused {
                release.signal()
                _ = resumed.wait(timeout: .now() + 1)
            } else {
                resumed.signal()
            }
            pauses.withLock { $0.append(paused) }
        }) { message in
            if message.payload.first == 1 { _ = release.wait(timeout: .now() + 30) }
        }
        // 150 KB held by a stuck decode: under the limit. Then 60 KB more: over it, so reading
        // pauses; once the first is decoded 60 KB is under half, so reading resumes.
        offload.receive(ReceivedWebSocketMessage(isText: false, payload: ArraySlice([UInt8](repeating: 1, count: 150_000))))
        offload.receive(ReceivedWebSocketMessage(isText: false, payload: ArraySlice([UInt8](repeating: 2, count: 60_000))))
        await offload.waitUntilIdle()
        #expect(pauses.current == [true, false], "reading must end up on")
    }

    /// Empty frames behind a costly message: each counts for its bookkeeping, their number is
    /// capped, and none keeps the read buffer it was sliced from alive.
    @Test func emptyMessagesBehindACostlyOneAreCountedAndCopied() async throws {
        let pauses = Locked<[Bool]>([])
        let handled = Locked<Int>(0)
        let gate = DispatchSemaphore(value: 0)
        let offload = LargeMessageOffload(maximumQueuedBytes: 4 << 20, pause: { paused in pauses.withLock { $0.append(paused) } }) { message in
            if message.payload.count > LargeMessageOffload.inlineLimit { gate.wait() }
            handled.withLock { $0 += 1 }
        }
        offload.receive(ReceivedWebSocketMessage(isText: false, payload: ArraySlice([UInt8](repeating: 1, count: 100 * 1024))))
        // Each empty message sliced from a 64 KiB read buffer, as the parser hands them over.
        var keptBuffers = 0
        for _ in 0..<LargeMessageOffload.maximumQueuedMessages {
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            let before = buffer.withUnsafeBufferPointer { $0.baseAddress }
            offload.receive(ReceivedWebSocketMessage(isText: false, payload: buffer[7..<7]))
            // Written to as the parser reuses it: a copy now means the queue still holds it.
            buffer[0] = 1
            if buffer.withUnsafeBufferPointer({ $0.baseAddress }) != before { keptBuffers += 1 }
        }
        // Counted as 0 bytes each before, these never paused reading.
        #expect(pauses.current == [true])
        #expect(keptBuffers == 0, "a queued message does not keep its read buffer")
        gate.signal()
        await offload.waitUntilIdle()
        #expect(handled.current == LargeMessageOffload.maximumQueuedMessages + 1)
        #expect(pauses.current == [true, false])
    }

}
