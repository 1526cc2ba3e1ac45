import Foundation
import SignalChat
import SwitchboardBridge
import SwitchboardRuntime
import Testing

/// Pushes through the bridge's queue: order, acknowledgement timing, bounds, and closing.
@Suite(.timeLimit(.minutes(3))) struct StringBridgeEventTests {
    static let incoming = ServerRequest(verb: "PUT", path: "/api/v1/message", headers: ["X-Signal-Timestamp": "1700000000000"],
                                        body: Envelope(sourceServiceId: "alice").serializedData())
    static let queueEmpty = ServerRequest(verb: "PUT", path: "/api/v1/queue/empty")

    static func incoming(_ number: UInt64) -> ServerRequest {
        ServerRequest(verb: "PUT", path: "/api/v1/message", body: Envelope(sourceServiceId: "s\(number)", sourceDevice: UInt32(number)).serializedData())
    }

    @Test func anEventAcknowledgedAfterHandlingWaitsUntilTheHostTakesIt() async throws {
        let bridge = StringBridge.inProcess()
        let answered = Locked(false)
        let outcome = Task {
            let outcome = await bridge.deliver(Self.incoming)
            answered.withLock { $0 = true }
            return outcome
        }
        // Not acknowledged while nobody has taken it.
        try await Task.sleep(for: .milliseconds(200))
        #expect(!answered.current)
        let event = object(await bridge.receive(timeout: .seconds(30)))
        #expect(await outcome.value == .ok)
        #expect(event["type"] as? String == "event")
        #expect(event["service"] as? String == "Messages")
        #expect(event["event"] as? String == "incomingMessage")
        #expect((event["payload"] as? [String: Any])?["sourceServiceId"] as? String == "alice")
        #expect((event["headers"] as? [String: Any])?["X-Signal-Timestamp"] as? String == "1700000000000")
    }

    @Test func aCancelledReceiveReturnsAtOnceAndTakesNothing() async throws {
        let bridge = StringBridge.inProcess()
        let waiting = Task { await bridge.receive(timeout: nil) }
        try await Task.sleep(for: .milliseconds(100))
        let started = ContinuousClock.now
        waiting.cancel()
        #expect(await waiting.value == nil)
        #expect(ContinuousClock.now - started < .seconds(10))
        // An event that arrives now goes to the next receive, not to the one that left.
        #expect(await bridge.deliver(Self.queueEmpty) == .ok)
        let event = object(await bridge.receive(timeout: .seconds(30)))
        #expect(event["event"] as? String == "queueEmpty")
    }

    @Test func anEventAcknowledgedOnReceiptIsAcknowledgedOnceQueued() async {
        let bridge = StringBridge.inProcess()
        #expect(await bridge.deliver(Self.queueEmpty) == .ok)
        let event = object(await bridge.receive(timeout: .seconds(30)))
        #expect(event["event"] as? String == "queueEmpty")
        #expect(event["payload"] == nil)
    }

    @Test func eventsArriveInOrderAndTheAcknowledgementWaitsForEachTake() async throws {
        let bridge = StringBridge.inProcess()
        let acknowledged = Locked<[UInt64]>([])
        // The connection hands pushes over one at a time, in order; so does this producer.
        let producer = Task {
            for number in 1...20 as ClosedRange<UInt64> {
                if await bridge.deliver(Self.incoming(number)) == .ok { acknowledged.withLock { $0.append(number) } }
            }
        }
        var received: [UInt64] = []
        for _ in 1...20 {
            let event = object(await bridge.receive(timeout: .seconds(30)))
            let payload = event["payload"] as? [String: Any]
            received.append(UInt64(payload?["sourceDevice"] as? Int ?? 0))
            // Every event before this one was acknowledged; this one is being acknowledged now.
            #expect(acknowledged.current.count >= received.count - 1)
        }
        await producer.value
        #expect(received == Array(1...20))
        #expect(acknowledged.current == Array(1...20))
    }

    @Test func aFullQueueHoldsTheProducerBack() async throws {
        var options = StringBridge.Options()
        options.maxQueuedEvents = 2
        let bridge = StringBridge.inProcess(options: options)
        let delivered = Locked(0)
        let producer = Task {
            for _ in 0..<5 {
                _ = await bridge.deliver(Self.queueEmpty)
                delivered.withLock { $0 += 1 }
            }
        }
        for _ in 0..<3000 where delivered.current < 2 { try await Task.sleep(for: .milliseconds(5)) }
        #expect(delivered.current == 2)
        // And it stays held there while nothing is taken.
        try await Task.sleep(for: .milliseconds(100))
        #expect(delivered.current == 2)
        for _ in 0..<5 { #expect(await bridge.receive(timeout: .seconds(30)) != nil) }
        await producer.value
        #expect(delivered.current == 5)
    }

    @Test func unknownAndUndecodablePushesAreAnsweredWithoutQueueing() async {
        let bridge = StringBridge.inProcess()
        #expect(await bridge.deliver(ServerRequest(verb: "PUT", path: "/api/v1/nothing")) == .unknown)
        let garbage = ServerRequest(verb: "PUT", path: "/api/v1/message", body: Data([0x0A, 0x7F]))
        guard case let .reject(response, _) = await bridge.deliver(garbage) else {
            Issue.record("an undecodable payload must be rejected")
            return
        }
        #expect(response.status == 400)
        #expect(await bridge.receive(timeout: .milliseconds(50)) == nil)
    }

    @Test func closingWithholdsUntakenEventsAndWakesTheReceiver() async throws {
        let bridge = StringBridge.inProcess()
        let waiting = Task { await bridge.deliver(Self.incoming) }
        let receiver = Task { await bridge.receive(timeout: nil) }
        // The receiver may take the event first; both orders must end cleanly.
        try await Task.sleep(for: .milliseconds(100))
        await bridge.close()
        let outcome = await waiting.value
        let received = await receiver.value
        if received == #"{"type":"closed"}"# {
            guard case .withhold = outcome else {
                Issue.record("an event nobody took must be withheld so the server redelivers it, got \(outcome)")
                return
            }
        } else {
            #expect(object(received)["event"] as? String == "incomingMessage")
            #expect(outcome == .ok)
        }
        #expect(await bridge.receive(timeout: nil) == #"{"type":"closed"}"#)
        #expect(await bridge.deliver(Self.queueEmpty) != .ok)
    }

    /// The outcome `delivering` stored in `finished`, waiting at most `limit` for it.
    static func outcome(_ finished: Locked<EventOutcome?>, within limit: Duration) async throws -> EventOutcome? {
        let started = ContinuousClock.now
        while finished.current == nil, ContinuousClock.now - started < limit { try await Task.sleep(for: .milliseconds(5)) }
        return finished.current
    }

    /// Found by review: a push handler cancelled by its connection (ended, or cut off once its
    /// grace ran out) kept waiting in the queue, and its event still reached the host later,
    /// though its acknowledgement could never be sent (a duplicate once redelivered).
    @Test func aCancelledHandlerWithdrawsAnEventNotYetTaken() async throws {
        let bridge = StringBridge.inProcess()
        let finished = Locked<EventOutcome?>(nil)
        let delivering = Task {
            let outcome = await bridge.deliver(Self.incoming)
            finished.withLock { $0 = outcome }
        }
        try await Task.sleep(for: .milliseconds(100))
        #expect(finished.current == nil, "an afterHandling event waits for the host")
        delivering.cancel()
        guard let outcome = try await Self.outcome(finished, within: .seconds(10)) else {
            Issue.record("a cancelled handler must stop waiting")
            await bridge.close()
            return
        }
        guard case .withhold = outcome else {
            Issue.record("an event the host never took must be withheld, got \(outcome)")
            return
        }
        // Withdrawn: the host never sees it, and the queue is empty again.
        #expect(await bridge.receive(timeout: .milliseconds(100)) == nil)
        #expect(await bridge.deliver(Self.queueEmpty) == .ok)
        #expect(object(await bridge.receive(timeout: .seconds(30)))["event"] as? String == "queueEmpty")
    }

    @Test func aCancelledHandlerWaitingForRoomQueuesNothing() async throws {
        var options = StringBridge.Options()
        options.maxQueuedEvents = 1
        let bridge = StringBridge.inProcess(options: options)
        #expect(await bridge.deliver(Self.queueEmpty) == .ok)
        let finished = Locked<EventOutcome?>(nil)
        let delivering = Task {
            let outcome = await bridge.deliver(Self.incoming)
            finished.withLock { $0 = outcome }
        }
        try await Task.sleep(for: .milliseconds(100))
        #expect(finished.current == nil, "the push waits for room")
        delivering.cancel()
        guard let outcome = try await Self.outcome(finished, within: .seconds(10)) else {
            Issue.record("a cancelled handler must stop waiting for room")
            await bridge.close()
            return
        }
        guard case .withhold = outcome else {
            Issue.record("a push never queued must be withheld, got \(outcome)")
            return
        }
        #expect(object(await bridge.receive(timeout: .seconds(30)))["event"] as? String == "queueEmpty")
        #expect(await bridge.receive(timeout: .milliseconds(100)) == nil)
        // The one place is free again.
        #expect(await bridge.deliver(Self.queueEmpty) == .ok)
        #expect(object(await bridge.receive(timeout: .seconds(30)))["event"] as? String == "queueEmpty")
    }

    @Test func aCancelledHandlerWhoseEventWasTakenIsAcknowledged() async throws {
        let bridge = StringBridge.inProcess()
        let delivering = Task { await bridge.deliver(Self.incoming) }
        let event = object(await bridge.receive(timeout: .seconds(30)))
        #expect(event["event"] as? String == "incomingMessage")
        // Cancelled once the host has taken the event: the take decides, it is acknowledged.
        delivering.cancel()
        #expect(await delivering.value == .ok)
    }

    @Test func receiveTimesOutWithNil() {
        let bridge = StringBridge.inProcess()
        let start = ContinuousClock.now
        #expect(bridge.receiveBlocking(timeout: .milliseconds(100)) == nil)
        #expect(ContinuousClock.now - start >= .milliseconds(90))
    }
}
