@testable import SwitchboardChat
import SwitchboardRuntime
import Testing

@Suite struct PushBudgetTests {
    /// Admits each size in turn, releasing one push where the size is `nil`.
    private func run(_ budget: inout PushBudget, _ steps: [Int?]) -> [Bool] {
        steps.compactMap { step -> Bool? in
            guard let size = step else {
                budget.release(size: 0)
                return nil
            }
            return budget.admit(size: size)
        }
    }

    @Test func admitsUpToTheCountThenCutsOff() {
        var budget = PushBudget(maximumCount: 3, maximumBytes: 1000)
        #expect(run(&budget, [10, 10, 10, 10]) == [true, true, true, false])
        #expect(budget.isCutOff)
        #expect(budget.count == 3 && budget.bytes == 30)
    }

    @Test func admitsUpToTheBytesThenCutsOff() {
        var budget = PushBudget(maximumCount: 100, maximumBytes: 100)
        #expect(run(&budget, [60, 40, 1]) == [true, true, false])
        #expect(budget.isCutOff)
    }

    @Test func anEmptyQueueTakesOnePushOfAnySize() {
        var budget = PushBudget(maximumCount: 1, maximumBytes: 10)
        #expect(run(&budget, [1_000_000, 0]) == [true, false])
    }

    @Test func releasedPushesMakeRoomBeforeTheLimitIsReached() {
        var budget = PushBudget(maximumCount: 2, maximumBytes: 1000)
        for _ in 0..<100 {
            #expect(budget.admit(size: 5) == true)
            #expect(budget.admit(size: 5) == true)
            budget.release(size: 5)
            budget.release(size: 5)
        }
        #expect(budget.count == 0 && budget.bytes == 0 && !budget.isCutOff)
    }

    /// A later push handled before an earlier, refused one would reorder the connection.
    @Test func onceCutOffNothingMoreIsAdmittedEvenWhenTheQueueDrains() {
        var budget = PushBudget(maximumCount: 1, maximumBytes: 1000)
        #expect(run(&budget, [1, 1, nil, 1]) == [true, false, false])
        #expect(budget.count == 0)
    }
}

/// A push counts what it holds once decoded, not only its envelope's bytes.
@Suite struct PushStoredSizeTests {
    @Test func aHeaderLineCountsItsDecodedEntry() {
        // "a:b" is 5 bytes on the wire and a (String, String) entry once decoded.
        let oneHeader = DecodedRequestSize.bytes(envelopeBytes: 5, headerCount: 1)
        #expect(oneHeader >= 5 + MemoryLayout<(String, String)>.stride)
        #expect(DecodedRequestSize.bytes(envelopeBytes: 500_000, headerCount: 100_000) > 10 * 500_000)
    }

    @Test func theDefaultBudgetHoldsSignalsUnacknowledgedPushes() {
        let options = ChatConnectionOptions()
        let largest = DecodedRequestSize.bytes(envelopeBytes: options.webSocket.configuration.maximumMessageSize, headerCount: 16)
        #expect(options.maximumQueuedPushBytes >= 256 * largest)
        #expect(options.maximumQueuedPushBytes == 160 * 1024 * 1024)
    }
}
