import Foundation
@testable import SwitchboardIO
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The event loop without sockets: jobs, timers, executor preference, readiness, shutdown.
@Suite(.timeLimit(.minutes(3)))
struct EventLoopCoreTests {
    /// A value several threads add to.
    final class Box<T: Sendable>: @unchecked Sendable {
        private let lock = NSLock()
        private var stored: T
        init(_ value: T) { stored = value }
        func update<R>(_ body: (inout T) -> R) -> R { lock.withLock { body(&stored) } }
        var value: T { lock.withLock { stored } }
    }

    /// Waits at most `seconds` for `condition`; never hangs.
    static func eventually(_ seconds: Double = 10, _ condition: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .milliseconds(Int64(seconds * 1000))
        while ContinuousClock.now < deadline {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return condition()
    }

    @Test func jobsRunOnTheLoopInTheOrderGiven() async throws {
        let loop = try EventLoop(name: "test-order")
        let seen = Box<[Int]>([])
        let onLoop = Box(true)
        for index in 0..<1000 {
            loop.execute {
                onLoop.update { $0 = $0 && loop.inEventLoop }
                seen.update { $0.append(index) }
            }
        }
        #expect(await Self.eventually { seen.value.count == 1000 })
        #expect(seen.value == Array(0..<1000))
        #expect(onLoop.value)
        #expect(!loop.inEventLoop)
        await loop.shutdown()
    }

    @Test func jobsFromManyThreadsAllRun() async throws {
        let loop = try EventLoop(name: "test-threads")
        let count = Box(0)
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            for _ in 0..<500 { loop.execute { count.update { $0 += 1 } } }
        }
        #expect(await Self.eventually { count.value == 4000 })
        await loop.shutdown()
    }

    @Test func timersFireInDeadlineOrderAndCancelledOnesNever() async throws {
        let loop = try EventLoop(name: "test-timers")
        let fired = Box<[Int]>([])
        let start = ContinuousClock.now
        // Scheduled out of order, some from the loop itself, one cancelled. The gaps are wide
        // enough that a loaded machine's scheduling delays cannot reorder the scheduling
        // itself (the loop's own timer must exist before the later one fires, the cancel
        // must come before its deadline).
        loop.schedule(at: start + .milliseconds(700)) { fired.update { $0.append(3) } }
        loop.schedule(at: start + .milliseconds(100)) { fired.update { $0.append(1) } }
        let cancelled = loop.schedule(at: start + .milliseconds(1000)) { fired.update { $0.append(99) } }
        loop.execute { loop.schedule(at: start + .milliseconds(400)) { fired.update { $0.append(2) } } }
        cancelled.cancel()
        #expect(await Self.eventually { fired.value.count == 3 })
        #expect(fired.value == [1, 2, 3])
        // Never early.
        #expect(ContinuousClock.now - start >= .milliseconds(700))
        try await Task.sleep(until: start + .milliseconds(1200))
        #expect(fired.value == [1, 2, 3])
        await loop.shutdown()
    }

    @Test func manyCancelledTimersDoNotPile() async throws {
        let loop = try EventLoop(name: "test-cancel")
        for _ in 0..<10_000 { loop.schedule(after: .seconds(3600)) {}.cancel() }
        let live = Box(0)
        loop.schedule(after: .milliseconds(10)) { live.update { $0 += 1 } }
        #expect(await Self.eventually { live.value == 1 })
        await loop.shutdown()
    }

    /// Owns the timer whose closure holds it, and cancels that timer from its `deinit`.
    final class CancelsItsTimerOnDeinit: @unchecked Sendable {
        var timer: LoopTimer?
        let deinits: Box<Int>
        init(deinits: Box<Int>) { self.deinits = deinits }
        deinit {
            timer?.cancel()
            deinits.update { $0 += 1 }
        }
    }

    /// Cancelling releases the timer's closure after the timer's lock: a closure whose captures
    /// cancel the same timer from their `deinit` (a cycle broken by cancelling) used to take the
    /// lock again on the thread that held it, which the standard library's `Mutex` stops.
    @Test func aClosureReleasedByCancelMayCancelItsTimerAgain() {
        let deinits = Box(0)
        var owner: CancelsItsTimerOnDeinit? = CancelsItsTimerOnDeinit(deinits: deinits)
        let timer = LoopTimer(deadline: ContinuousClock.now + .seconds(3600)) { [owner] in _ = owner }
        owner?.timer = timer
        owner = nil
        #expect(deinits.value == 0)
        timer.cancel()
        #expect(deinits.value == 1)
        #expect(timer.isCancelled)
    }

    @Test func theTimerHeapStaysWithinASmallMultipleOfItsLiveTimers() {
        var heap = TimerHeap()
        let start = ContinuousClock.now
        let live = (0..<100).map { index in LoopTimer(deadline: start + .seconds(index + 1)) {} }
        for timer in live { heap.insert(timer) }
        var largest = 0
        for _ in 0..<10_000 {
            let timer = LoopTimer(deadline: start + .seconds(3600)) {}
            heap.insert(timer)
            timer.cancel()
            heap.compactIfMostlyCancelled()
            largest = max(largest, heap.count)
        }
        // Checked only once the heap doubles: never more than four times what is live (or the floor).
        #expect(largest <= 4 * 128)
        let due = heap.popDue(now: start + .seconds(200))
        #expect(due.count == 100)
        #expect(zip(due, live).allSatisfy { $0 === $1 })
    }

    @Test func theTimeToTheNextDeadlineSkipsCancelledTimersAndTiesFireInOrder() throws {
        var heap = TimerHeap()
        #expect(heap.timeToNextDeadline() == nil)
        let start = ContinuousClock.now
        let early = LoopTimer(deadline: start + .seconds(60)) {}
        let tied = (0..<3).map { _ in LoopTimer(deadline: start + .seconds(120)) {} }
        let past = LoopTimer(deadline: start - .seconds(5)) {}
        for timer in [tied[0], early, tied[1], past, tied[2]] { heap.insert(timer) }
        // Deadlines are kept as offsets: the time left is measured against the clock now.
        let toPastLeft = heap.timeToNextDeadline()
        let toPast = try #require(toPastLeft)
        #expect(toPast <= .seconds(-5))
        past.cancel()
        let toEarlyLeft = heap.timeToNextDeadline()
        let toEarly = try #require(toEarlyLeft)
        #expect(toEarly > .seconds(50) && toEarly <= .seconds(60))
        early.cancel()
        let toTiedLeft = heap.timeToNextDeadline()
        let toTied = try #require(toTiedLeft)
        #expect(toTied > .seconds(110) && toTied <= .seconds(120))
        #expect(heap.popDue(now: start + .seconds(119)).isEmpty)
        let due = heap.popDue(now: start + .seconds(120))
        #expect(due.count == 3 && zip(due, tied).allSatisfy { $0 === $1 }, "one deadline: in the order added")
        #expect(heap.timeToNextDeadline() == nil)
    }

    @Test func unfilledByteArraysHaveTheirCountAndHoldWhatIsWritten() {
        #expect(UnfilledByteArray.make(count: 0).isEmpty)
        for count in [1, 15, 16, 4096] {
            var bytes = UnfilledByteArray.make(count: count)
            #expect(bytes.count == count)
            bytes.withUnsafeMutableBytes { buffer in
                for index in buffer.indices { buffer[index] = UInt8(truncatingIfNeeded: index &* 7) }
            }
            #expect(bytes == (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        }
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
    @Test func aTaskThatPrefersTheLoopRunsAndResumesOnIt() async throws {
        let loop = try EventLoop(name: "test-executor")
        let result = await withTaskExecutorPreference(loop) { () -> (Bool, Bool) in
            let before = loop.inEventLoop
            try? await Task.sleep(for: .milliseconds(5))
            return (before, loop.inEventLoop)
        }
        #expect(result == (true, true))
        #expect(await loop.startTask { loop.inEventLoop }.value)
        await loop.shutdown()
    }

    @Test func aRegisteredDescriptorIsReportedReadable() async throws {
        let loop = try EventLoop(name: "test-readiness")
        let (watched, peer) = try #require(nonBlockingSocketPair())
        defer { close(watched); close(peer) }
        final class Reader: IOHandler, @unchecked Sendable {
            let descriptor: Int32
            let received = Box<[UInt8]>([])
            let writableCount = Box(0)
            init(_ descriptor: Int32) { self.descriptor = descriptor }
            func readable() {
                var buffer = [UInt8](repeating: 0, count: 16)
                let count = read(descriptor, &buffer, 16)
                if count > 0 { received.update { $0 += buffer[0..<count] } }
            }
            func writable() { writableCount.update { $0 += 1 } }
            func loopStopped() {}
        }
        let reader = Reader(watched)
        let token = Box<UInt64>(0)
        loop.execute { token.update { $0 = (try? loop.register(watched, interest: .read, handler: reader)) ?? 0 } }
        #expect(await Self.eventually { token.value != 0 })
        _ = write(peer, "hello", 5)
        #expect(await Self.eventually { reader.received.value == Array("hello".utf8) })
        // Asking for writability reports it; taking the interest away stops the reports.
        loop.reregister(watched, token: token.value, from: .read, to: [.read, .write])
        #expect(await Self.eventually { reader.writableCount.value > 0 })
        loop.reregister(watched, token: token.value, from: [.read, .write], to: .read)
        let settled = Box(0)
        loop.execute { settled.update { $0 = reader.writableCount.value } }
        #expect(await Self.eventually { settled.value > 0 })
        try await Task.sleep(for: .milliseconds(50))
        #expect(reader.writableCount.value == settled.value)
        let removed = Box(false)
        loop.execute {
            loop.deregister(watched, token: token.value, interest: .read)
            removed.update { $0 = true }
        }
        #expect(await Self.eventually { removed.value })
        _ = write(peer, "more", 4)
        try await Task.sleep(for: .milliseconds(50))
        #expect(reader.received.value == Array("hello".utf8))
        await loop.shutdown()
    }

    @Test func afterShutdownWorkRunsElsewhereAndTheThreadIsGone() async throws {
        let loop = try EventLoop(name: "test-shutdown")
        let ran = Box(0)
        for _ in 0..<100 { loop.execute { ran.update { $0 += 1 } } }
        await loop.shutdown()
        // Queued work ran before the loop stopped.
        #expect(ran.value == 100)
        let late = Box<Bool?>(nil)
        loop.execute { late.update { $0 = loop.inEventLoop } }
        #expect(await Self.eventually { late.value != nil })
        #expect(late.value == false)
        await loop.shutdown()
    }

    @Test func timersOutliveTheirLoopAndStillFireAtTheirDeadline() async throws {
        let loop = try EventLoop(name: "test-timer-shutdown")
        let start = ContinuousClock.now
        let fired = Box<[Int]>([])
        // Pending when the loop stops, one of them cancelled afterwards. The
        // deadlines leave room for a slow shutdown on a loaded machine: only
        // their order matters, never how long the shutdown took.
        loop.schedule(at: start + .milliseconds(400)) { fired.update { $0.append(1) } }
        let cancelled = loop.schedule(at: start + .milliseconds(3_000)) { fired.update { $0.append(99) } }
        // Blocking: an awaited shutdown resumes on the cooperative pool, which a loaded test
        // run can hold up for seconds; this thread goes on as soon as the loop has stopped.
        loop.shutdownBlocking()
        cancelled.cancel()
        // Scheduled after it stopped.
        loop.schedule(at: start + .milliseconds(1_000)) { fired.update { $0.append(2) } }
        let firedBy = Box<ContinuousClock.Instant?>(nil)
        loop.schedule(at: start + .milliseconds(400)) { firedBy.update { $0 = .now } }
        #expect(await Self.eventually { fired.value.count == 2 })
        #expect(fired.value == [1, 2])
        // Never early, even off the loop.
        let firstFired = try #require(await Self.eventually { firedBy.value != nil } ? firedBy.value : nil)
        #expect(firstFired - start >= .milliseconds(400))
        // The cancelled one never fires, not even after its deadline.
        try await Task.sleep(until: start + .milliseconds(3_100))
        #expect(fired.value == [1, 2])
    }

    @Test func aGroupHandsOutEveryLoopInTurn() async throws {
        let group = try EventLoopGroup(loopCount: 3, name: "test-group")
        let picked = (0..<6).map { _ in ObjectIdentifier(group.next()) }
        #expect(Set(picked).count == 3)
        #expect(Array(picked[0..<3]) == Array(picked[3..<6]))
        #expect(group.current == nil)
        let current = Box<Bool>(false)
        group.loops[1].execute { current.update { $0 = group.current === group.loops[1] } }
        #expect(await Self.eventually { current.value })
        await group.shutdown()
    }
}
