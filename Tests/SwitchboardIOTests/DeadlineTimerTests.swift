import Foundation
@testable import SwitchboardIO
import Testing

/// Many deadlines that all pass (a server that stopped answering) expire in batches: each
/// firing looks over every pending deadline, so one firing per deadline was quadratic.
@Suite(.timeLimit(.minutes(1))) struct DeadlineTimerTests {
    final class Deadlines: @unchecked Sendable {
        let lock = NSLock()
        var pending: [ContinuousClock.Instant] = []
        var firings = 0
        var late: [Duration] = []

        func fire(_ now: ContinuousClock.Instant) {
            lock.withLock {
                firings += 1
                late += pending.filter { $0 <= now }.map { now - $0 }
                pending.removeAll { $0 <= now }
            }
        }

        var next: ContinuousClock.Instant? { lock.withLock { pending.min() } }
    }

    @Test func deadlinesThatAllPassExpireInBatches() async throws {
        let loop = try EventLoop(name: "deadline-test")
        defer { loop.shutdownBlocking() }
        let deadlines = Deadlines()
        let timer = DeadlineTimer(loop: loop, fire: { deadlines.fire($0) }, next: { deadlines.next })
        // 300 deadlines, one every millisecond from 20 ms on.
        let start = ContinuousClock.now
        let all = (0..<300).map { start + .milliseconds(20 + $0) }
        deadlines.lock.withLock { deadlines.pending = all }
        timer.watch(all[0])
        let limit = ContinuousClock.now + .seconds(20)
        while deadlines.lock.withLock({ !deadlines.pending.isEmpty }) && ContinuousClock.now < limit {
            try await Task.sleep(for: .milliseconds(10))
        }
        let (firings, late) = deadlines.lock.withLock { (deadlines.firings, deadlines.late) }
        #expect(late.count == 300, "every deadline expired")
        // 300 ms of deadlines, a firing at most every 50 ms: a handful, not 300. (On a loaded
        // machine a late firing covers more, so fewer.)
        #expect(firings <= 300 / 50 + 3, "\(firings) firings")
        #expect(late.allSatisfy { $0 >= .zero }, "none early")
    }

    /// A request registered while the timer fires (its later deadline armed a new timer)
    /// must not push back an earlier deadline still pending: it fired at the later one
    /// (from the I/O review: a 1 s request timeout could fire at 30 s).
    @Test func aWatchDuringAFiringKeepsEarlierDeadlines() async throws {
        let loop = try EventLoop(name: "deadline-test")
        defer { loop.shutdownBlocking() }
        let deadlines = Deadlines()
        final class Holder: @unchecked Sendable {
            let lock = NSLock()
            var timer: DeadlineTimer?
            var current: DeadlineTimer? { lock.withLock { timer } }
        }
        let holder = Holder()
        let start = ContinuousClock.now
        let soon = start + .milliseconds(10), pending = start + .milliseconds(80), far = start + .seconds(10)
        let timer = DeadlineTimer(loop: loop, fire: { now in
            deadlines.fire(now)
            // A request arriving now, with a far deadline, while `pending` waits.
            if deadlines.lock.withLock({ deadlines.firings == 1 }) {
                deadlines.lock.withLock { deadlines.pending.append(far) }
                holder.current?.watch(far)
            }
        }, next: { deadlines.next })
        holder.lock.withLock { holder.timer = timer }
        deadlines.lock.withLock { deadlines.pending = [soon, pending] }
        timer.watch(soon)
        let limit = ContinuousClock.now + .seconds(9)
        while deadlines.lock.withLock({ deadlines.pending.contains(pending) }) && ContinuousClock.now < limit {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(!deadlines.lock.withLock { deadlines.pending.contains(pending) }, "the 80 ms deadline fired before the 10 s one")
        #expect(ContinuousClock.now - start < .seconds(9.5), "well before the 10 s deadline")
    }
}
