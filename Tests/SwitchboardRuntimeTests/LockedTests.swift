import Foundation
import SwitchboardRuntime
import Testing

/// `Locked` guards shared state for mocks, routing tables and pending calls: no update may be
/// lost under contention, and a body that throws must leave it unlocked.
@Suite(.timeLimit(.minutes(1))) struct LockedTests {
    @Test func concurrentUpdatesAreAllKept() {
        let state = Locked((count: 0, log: [Int]()))
        let threads = 8, rounds = 10_000
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            for round in 0..<rounds {
                state.withLock { value in
                    value.count += 1
                    if round % 1_000 == 0 { value.log.append(thread) }
                }
            }
        }
        let final = state.current
        #expect(final.count == threads * rounds)
        #expect(final.log.count == threads * (rounds / 1_000))
        #expect(Set(final.log) == Set(0..<threads))
    }

    struct Refused: Error {}

    @Test func aThrowingBodyChangesWhatItChangedAndReleases() throws {
        let state = Locked(1)
        #expect(throws: Refused.self) {
            try state.withLock { value in
                value = 2
                throw Refused()
            }
        }
        // A lock left held makes the wait time out; required, since reading the value on this
        // thread would then trap (a recursive lock) or hang.
        let taken = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            state.withLock { $0 += 1 }
            taken.signal()
        }
        try #require(taken.wait(timeout: .now() + 10) == .success)
        #expect(state.current == 3)
    }
}
