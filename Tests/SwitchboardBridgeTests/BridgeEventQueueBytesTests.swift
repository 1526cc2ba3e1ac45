import Foundation
import SwitchboardRuntime
@testable import SwitchboardBridge
import Testing

/// The queue of events for the host is bounded in bytes as well as in events: a host that
/// stops taking events holds at most the byte limit, whatever the events' count. Found by
/// review (with the count alone, 1,000 large pushes re-encoded as JSON held gigabytes).
@Suite(.timeLimit(.minutes(1)))
struct BridgeEventQueueBytesTests {
    @Test func producersWaitOnceTheBytesAreTaken() async throws {
        let queue = BridgeEventQueue(capacity: 1_000, byteCapacity: 1_000)
        let document = String(repeating: "x", count: 400)
        #expect(await queue.put(document, waitUntilTaken: false))
        #expect(await queue.put(document, waitUntilTaken: false))
        let returned = Locked(false)
        let third = Task {
            defer { returned.withLock { $0 = true } }
            return await queue.put(document, waitUntilTaken: false)
        }
        // 800 bytes queued: a third 400 would pass 1,000, so it waits for the host.
        try await Task.sleep(for: .milliseconds(200))
        #expect(!returned.current, "the third waits while 800 of 1,000 bytes are queued")
        #expect(queue.take(until: .now) == .event(document))
        #expect(await third.value)
        #expect(queue.take(until: .now) == .event(document))
        #expect(queue.take(until: .now) == .event(document))
        #expect(queue.take(until: .now) == .timedOut)
    }

    @Test func aDocumentLargerThanTheLimitPassesAlone() async throws {
        let queue = BridgeEventQueue(capacity: 10, byteCapacity: 100)
        let large = String(repeating: "y", count: 500)
        #expect(await queue.put(large, waitUntilTaken: false))
        let returned = Locked(false)
        let small = Task {
            defer { returned.withLock { $0 = true } }
            return await queue.put("z", waitUntilTaken: false)
        }
        try await Task.sleep(for: .milliseconds(200))
        #expect(!returned.current, "nothing joins a document past the limit")
        #expect(queue.take(until: .now) == .event(large))
        #expect(await small.value)
        #expect(queue.take(until: .now) == .event("z"))
    }

    /// A cancelled producer's event is withdrawn with its bytes, so the producer waiting for
    /// room gets it (found by review: cancellation was ignored, and the bytes stayed counted).
    @Test func aWithdrawnEventFreesItsBytes() async throws {
        let queue = BridgeEventQueue(capacity: 1_000, byteCapacity: 1_000)
        let document = String(repeating: "x", count: 400)
        #expect(await queue.put(document, waitUntilTaken: false))
        let waitingForTake = Task { await queue.put(String(repeating: "y", count: 400), waitUntilTaken: true) }
        try await Task.sleep(for: .milliseconds(100))
        // 800 bytes queued: a third 400 waits for room.
        let third = Task { await queue.put(document, waitUntilTaken: false) }
        try await Task.sleep(for: .milliseconds(100))
        waitingForTake.cancel()
        #expect(await waitingForTake.value == false)
        #expect(await third.value)
        #expect(queue.take(until: .now) == .event(document))
        #expect(queue.take(until: .now) == .event(document))
        #expect(queue.take(until: .now) == .timedOut)
    }

    @Test func aCancelledProducerQueuesNothing() async throws {
        let queue = BridgeEventQueue(capacity: 1, byteCapacity: 1_000)
        #expect(await queue.put("first", waitUntilTaken: false))
        let waitingForRoom = Task { await queue.put("second", waitUntilTaken: false) }
        try await Task.sleep(for: .milliseconds(100))
        waitingForRoom.cancel()
        #expect(await waitingForRoom.value == false)
        // Already cancelled when it starts: nothing is queued even with room.
        let cancelledFirst = Task {
            try? await Task.sleep(for: .seconds(60))
            return await queue.put("third", waitUntilTaken: false)
        }
        cancelledFirst.cancel()
        #expect(queue.take(until: .now) == .event("first"))
        #expect(await cancelledFirst.value == false)
        #expect(queue.take(until: .now) == .timedOut)
        #expect(await queue.put("fourth", waitUntilTaken: false))
        #expect(queue.take(until: .now) == .event("fourth"))
    }

    @Test func theLimitIsAConfigurationOption() throws {
        let configuration = try BridgeConfiguration(json: Data(#"{"schema": "s", "url": "ws://127.0.0.1:1", "maxQueuedEventBytes": 131072}"#.utf8))
        #expect(configuration.options.maxQueuedEventBytes == 131_072)
        #expect(throws: BridgeError.self) {
            try BridgeConfiguration(json: Data(#"{"schema": "s", "url": "ws://127.0.0.1:1", "maxQueuedEventBytes": 10}"#.utf8))
        }
        #expect(StringBridge.Options().maxQueuedEventBytes == 64 << 20)
    }
}
