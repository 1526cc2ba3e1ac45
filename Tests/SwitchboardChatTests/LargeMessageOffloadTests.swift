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
}
