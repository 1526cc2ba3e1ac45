import Foundation
import SwitchboardIO
import Testing

/// The lock every connection's state sits behind: mutual exclusion under real contention
/// from several threads, and release on every way out of `withLock`.
@Suite(.timeLimit(.minutes(1))) struct AdaptiveLockTests {
    /// Not atomic on purpose: only the lock keeps the read-modify-write steps apart.
    final class Counter: @unchecked Sendable {
        let lock = AdaptiveLock()
        var value = 0
        var inside = 0
        var overlaps = 0
    }

    @Test func threadsTakingTurnsLoseNoIncrement() {
        let counter = Counter()
        let threads = 8, rounds = 20_000
        DispatchQueue.concurrentPerform(iterations: threads) { _ in
            for round in 0..<rounds {
                if round % 2 == 0 {
                    counter.lock.withLock {
                        counter.inside += 1
                        if counter.inside != 1 { counter.overlaps += 1 }
                        counter.value += 1
                        counter.inside -= 1
                    }
                } else {
                    counter.lock.lock()
                    counter.inside += 1
                    if counter.inside != 1 { counter.overlaps += 1 }
                    counter.value += 1
                    counter.inside -= 1
                    counter.lock.unlock()
                }
            }
        }
        #expect(counter.value == threads * rounds)
        #expect(counter.overlaps == 0)
    }

    struct Refused: Error {}

    @Test func aThrowingBodyReleasesTheLock() throws {
        let lock = AdaptiveLock()
        #expect(throws: Refused.self) { try lock.withLock { throw Refused() } }
        // Taken again from another thread: a lock left held makes the wait time out. Required,
        // since taking it again on this thread would then trap (a recursive lock) or hang.
        let taken = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            lock.withLock {}
            taken.signal()
        }
        try #require(taken.wait(timeout: .now() + 10) == .success)
        #expect(lock.withLock { 42 } == 42)
    }
}
