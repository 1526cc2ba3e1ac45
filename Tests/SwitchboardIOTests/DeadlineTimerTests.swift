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
}
