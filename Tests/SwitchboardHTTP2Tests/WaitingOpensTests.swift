@testable import SwitchboardHTTP2
import Testing

/// Streams waiting for a slot: served in arrival order, and those given up on (their calls'
/// deadlines) leave nothing behind, even when no stream ever opens.
@Suite struct WaitingOpensTests {
    @Test func waitingStreamsOpenInArrivalOrderSkippingTheOnesGivenUp() {
        var waiting = WaitingOpens<Int>()
        for value in 0..<5_000 { waiting.append(value, token: UInt64(value)) }
        for value in stride(from: 0, to: 5_000, by: 2) {
            let removed = waiting.remove(UInt64(value))
            #expect(removed)
        }
        let again = waiting.remove(0)
        #expect(!again, "already gone")
        #expect(waiting.count == 2_500)
        var opened: [Int] = []
        while let value = waiting.popFirst() { opened.append(value) }
        #expect(opened == Array(stride(from: 1, to: 5_000, by: 2)))
        #expect(waiting.isEmpty)
    }

    /// A peer that allows no streams: calls wait and give up, one after another, for ever.
    @Test func givenUpStreamsDoNotPileUpWhenNoneOpens() {
        var waiting = WaitingOpens<Int>()
        // One that waits all along, so the queue is never empty.
        waiting.append(-1, token: 0)
        var largest = 0
        for token in UInt64(1)...100_000 {
            waiting.append(Int(token), token: token)
            let removed = waiting.remove(token)
            #expect(removed)
            largest = max(largest, waiting.heldTokenCount)
        }
        #expect(largest <= 2 * 2 + 1_025, "held \(largest) tokens for one waiting stream")
        let first = waiting.popFirst()
        #expect(first == -1)
        // And with nothing else waiting, nothing is held.
        for token in UInt64(100_001)...100_100 {
            waiting.append(0, token: token)
            let removed = waiting.remove(token)
            #expect(removed)
        }
        #expect(waiting.heldTokenCount == 0)
    }
}
