@testable import SwitchboardChat
import Testing

/// Matching answers to waiting requests by id, whichever comes first, and closing.
@Suite struct PendingRequestsTests {
    @Test func idsCountUpAndWrapAtTheTop() {
        let pending = PendingRequests<Int>(firstID: .max)
        #expect(pending.register(deadline: nil) == .max)
        #expect(pending.makeID() == 0)
        #expect(pending.register(deadline: nil) == 1)
    }

    @Test func anAnswerReachesItsWaiterWhicheverArrivesFirst() async {
        let pending = PendingRequests<String>(firstID: 7)
        let early = pending.register(deadline: nil)
        let late = pending.register(deadline: nil)
        // Answered before anyone waits.
        #expect(pending.resume(early, with: "early"))
        #expect(await pending.answer(to: early, fallback: "lost") == "early")
        // Most likely waited on first (the yields let the waiter park), then answered.
        async let waited = pending.answer(to: late, fallback: "lost")
        for _ in 0..<100 { await Task.yield() }
        #expect(pending.resume(late, with: "late"))
        #expect(await waited == "late")
    }

    @Test func unknownAndRepeatedAnswersAreRefused() async {
        let pending = PendingRequests<Int>(firstID: 0)
        #expect(!pending.resume(99, with: 1))
        let id = pending.register(deadline: nil)
        #expect(pending.resume(id, with: 1))
        #expect(!pending.resume(id, with: 2))
        #expect(await pending.answer(to: id, fallback: -1) == 1)
        #expect(!pending.resume(id, with: 3))
        #expect(await pending.answer(to: 12345, fallback: -1) == -1)
    }

    @Test func closingAnswersWaitersAndEveryLaterRequest() async {
        let pending = PendingRequests<String>(firstID: 0)
        let waiting = pending.register(deadline: nil)
        let notYetWaiting = pending.register(deadline: nil)
        async let first = pending.answer(to: waiting, fallback: "lost")
        // Parked or not yet when the close comes, the waiter gets the close value.
        for _ in 0..<100 { await Task.yield() }
        pending.close(with: "closed")
        pending.close(with: "closed again")
        #expect(await first == "closed")
        #expect(await pending.answer(to: notYetWaiting, fallback: "lost") == "closed")
        let later = pending.register(deadline: nil)
        #expect(await pending.answer(to: later, fallback: "lost") == "closed")
        #expect(!pending.resume(later, with: "too late"))
    }

    @Test func deadlinesExpireOnlyWhatIsDue() async {
        let pending = PendingRequests<String>(firstID: 0)
        let start = ContinuousClock.now
        let soon = pending.register(deadline: start.advanced(by: .seconds(1)))
        let later = pending.register(deadline: start.advanced(by: .seconds(5)))
        _ = pending.register(deadline: nil)
        #expect(pending.nextDeadline == start.advanced(by: .seconds(1)))
        pending.expire(now: start.advanced(by: .seconds(2)), with: "timeout")
        #expect(await pending.answer(to: soon, fallback: "lost") == "timeout")
        #expect(pending.nextDeadline == start.advanced(by: .seconds(5)))
        #expect(pending.resume(later, with: "answer"))
        #expect(pending.nextDeadline == nil)
        #expect(await pending.answer(to: later, fallback: "lost") == "answer")
    }
}
