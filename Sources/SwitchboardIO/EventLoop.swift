import Foundation
internal import SwitchboardThreads
#if os(Linux)
internal import CSwitchboardIO
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Something an event loop tells when its descriptor is ready. Called on the loop's thread.
package protocol IOHandler: AnyObject {
    /// Ready to read, or at the end of the stream, or failed: a read says which.
    func readable()
    /// Ready to write (or failed: a write says so).
    func writable()
    /// The loop shut down while this was still registered: nothing more will be reported,
    /// so whoever waits on it must be told now (on the loop's thread, after its last turn).
    func loopStopped()
}

/// One thread that waits on many sockets at once (epoll on Linux, kqueue on Apple
/// platforms) and runs what they are ready for, its timers, and the jobs given to it.
///
/// It is a Swift task executor: a task that prefers it
/// (`withTaskExecutorPreference(loop) { ... }`) runs on the loop's thread and resumes there
/// when an answer that thread read arrives, with no hop to another thread, as on a swift-nio
/// event loop. Such a task must not block: while it runs, no socket of the loop is served.
///
/// Loops come in an ``EventLoopGroup``: a fixed number of threads however many connections.
/// Jobs, timers and registrations for a loop that has shut down run on the global
/// concurrent executor instead, or fail, so nothing waits for a thread that is gone.
public final class EventLoop: @unchecked Sendable, CustomStringConvertible {
    /// The loop's name, and its thread's.
    public let name: String
    let selector: Selector

    private enum Work {
        case job(UnownedJob)
        case closure(@Sendable () -> Void)
        case timer(LoopTimer)
    }

    private enum State { case running, stopping, stopped }

    // Shared with other threads, under `lock`.
    private let lock = AdaptiveLock()
    // Stored state below is reached only under its lock or on the loop's thread, which
    // already makes each access exclusive: `@exclusivity(unchecked)` drops the runtime's own
    // check, about 80 instructions an access and 5% of a call (docs/performance.md).
    /// One half of a double buffer (the loop's `batch` is the other), so queuing allocates
    /// nothing once both have grown.
    @exclusivity(unchecked) private var queued: [Work] = []
    /// The thread is in (or about to enter) the selector's wait and must be woken for new work.
    @exclusivity(unchecked) private var isWaiting = false
    @exclusivity(unchecked) private var wakeupPending = false
    @exclusivity(unchecked) private var state = State.running
    @exclusivity(unchecked) private var stopWaiters: [CheckedContinuation<Void, Never>] = []
    private let finished = DispatchSemaphore(value: 0)

    // The loop's thread only.
    @exclusivity(unchecked) private var handlers = HandlerSlots()
    @exclusivity(unchecked) private var timers = TimerHeap()
    /// Channels that collected writes this turn: sent once the ready sockets are served, and
    /// again before the loop waits.
    @exclusivity(unchecked) private var corkedChannels: [SocketChannel] = []

    /// Turns of the loop so far (each a wait for readiness); loop-confined.
    @exclusivity(unchecked) private var turns = 0

    /// How many turns the loop has made; for tests that check an idle loop sleeps.
    package var turnCount: Int {
        get async {
            await withCheckedContinuation { continuation in
                execute { continuation.resume(returning: self.turns) }
            }
        }
    }

    /// How many timers, not cancelled, wait on the loop now; for tests that check nothing is
    /// left behind.
    package var liveTimerCount: Int {
        get async {
            await withCheckedContinuation { continuation in
                execute { continuation.resume(returning: self.timers.liveCount) }
            }
        }
    }
    /// Set once the loop has stopped for good: later timers fire elsewhere.
    @exclusivity(unchecked) private var hasFinished = false
    /// Read space every connection of this loop shares: one read at a time runs here.
    package let readBuffer: UnsafeMutableRawBufferPointer

    /// The loop a thread runs, in that thread's own storage: unlike a saved thread id,
    /// which the system gives the next thread once this one ends (a dedicated loop per
    /// connection ends often), it cannot make another thread look like this loop's.
    private static let currentLoop: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    /// The size of the read buffer the loop's connections share.
    public static let readBufferSize = 64 * 1024

    /// Starts a loop on a thread of its own; it runs until ``shutdown()``. Throws when the
    /// system refuses the thread (its thread limit reached, or no memory for the stack).
    public convenience init(name: String) throws(IOError) {
        try self.init(name: name, stackSize: 1 << 20)
    }

    /// A loop whose thread has `stackSize` bytes of stack.
    package init(name: String, stackSize: Int) throws(IOError) {
        self.name = name
        selector = try Selector()
        readBuffer = .allocate(byteCount: Self.readBufferSize, alignment: 16)
        let started = DispatchSemaphore(value: 0)
        // The thread holds the loop until it stops: a group shuts its loops down. Not a
        // Foundation `Thread`: on Linux its start ignores a refused thread, and the wait below
        // never ended (found by review).
        do throws(SystemThread.StartError) {
            try SystemThread.start(stackSize: stackSize) { [self] in
                pthread_setspecific(Self.currentLoop, Unmanaged.passUnretained(self).toOpaque())
                Self.nameThread(name)
                started.signal()
                self.run()
            }
        } catch {
            throw .system("pthread_create (the loop's thread)", error.code)
        }
        started.wait()
    }

    deinit {
        // A loop whose thread was refused never ran `finish()`, which frees these.
        if !hasFinished {
            readBuffer.deallocate()
            selector.close()
        }
    }

    /// The selector's descriptors (tests check a stopped loop releases them).
    package var selectorDescriptors: [Int32] { selector.descriptors }

    /// Names the calling thread for the system (`top -H`, debuggers, `/proc/<pid>/task`), which
    /// `Thread.name` does not do on Linux: at most 15 bytes, the most Linux keeps, so a long
    /// `switchboard.` prefix is shortened to `sb.` to keep the loop's number
    /// (`sb.shared-0`).
    private static func nameThread(_ name: String) {
        let short = name.utf8.count > 15 && name.hasPrefix("switchboard.") ? "sb." + name.dropFirst("switchboard.".count) : name
        var bytes = Array(short.utf8.prefix(15))
        while !bytes.isEmpty, String(validating: bytes, as: UTF8.self) == nil { bytes.removeLast() }
        #if os(Linux)
        _ = sb_name_thread(String(decoding: bytes, as: UTF8.self))
        #elseif canImport(Darwin)
        _ = pthread_setname_np(String(decoding: bytes, as: UTF8.self))
        #endif
    }

    public var description: String { "EventLoop(\(name))" }

    /// Whether the calling thread is this loop's.
    public var inEventLoop: Bool {
        pthread_getspecific(Self.currentLoop) == Unmanaged.passUnretained(self).toOpaque()
    }

    // MARK: Work

    /// Runs `body` on the loop's thread, after the work already queued; on the global pool
    /// once the loop has shut down.
    public func execute(_ body: @escaping @Sendable () -> Void) {
        enqueue(.closure(body))
    }

    /// Runs `body` at once if called on the loop's thread, else as ``execute(_:)``.
    public func executeHere(_ body: @escaping @Sendable () -> Void) {
        if inEventLoop { body() } else { execute(body) }
    }

    private func enqueue(_ work: Work) {
        // The loop's own thread (handling a readiness, say) is not waiting: it runs the queue
        // before it waits again, so it needs no wakeup.
        let here = inEventLoop
        let (accepted, wake): (Bool, Bool) = lock.withLock {
            guard state != .stopped else { return (false, false) }
            queued.append(work)
            guard isWaiting && !wakeupPending && !here else { return (true, false) }
            wakeupPending = true
            return (true, true)
        }
        if wake { selector.wakeUp() }
        if !accepted { runElsewhere(work) }
    }

    /// Where work runs once the loop has stopped (closures, timers and task jobs): one after
    /// another, as it would have on the loop, since it reaches state only the loop's thread
    /// touched (and that state skips the runtime's exclusivity checks). As on the loop, work
    /// here must not block waiting for other work of the same loop.
    private let afterStop = DispatchQueue(label: "switchboard.event-loop.after-stop")

    private func runElsewhere(_ work: Work) {
        switch work {
        case let .closure(body):
            afterStop.async(execute: body)
        case let .job(job):
            if #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) {
                // Still this loop's job: what it enqueues next comes back here.
                afterStop.async { [self] in job.runSynchronously(on: asUnownedTaskExecutor()) }
            }
        case let .timer(timer):
            fireElsewhere(timer)
        }
    }

    /// A timer the loop can no longer run still fires, after the loop's other leftovers, at its deadline.
    private func fireElsewhere(_ timer: LoopTimer) {
        guard !timer.isCancelled else { return }
        let delay = max(.zero, timer.deadline - .now).components
        // Saturating: a timer centuries away must not trap on the way to `Int`.
        let (whole, overflow) = delay.seconds.multipliedReportingOverflow(by: 1_000_000_000)
        let nanoseconds = overflow ? Int.max : Int(clamping: whole.addingReportingOverflow(delay.attoseconds / 1_000_000_000).partialValue)
        afterStop.asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) { timer.take()?() }
    }

    // MARK: Timers

    /// Runs `body` on the loop at `deadline` unless the returned timer is cancelled first.
    @discardableResult
    public func schedule(at deadline: ContinuousClock.Instant, _ body: @escaping @Sendable () -> Void) -> LoopTimer {
        let timer = LoopTimer(deadline: deadline, body: body)
        if inEventLoop && !hasFinished { timers.insert(timer) } else { enqueue(.timer(timer)) }
        return timer
    }

    /// Runs `body` on the loop after `delay` unless the returned timer is cancelled first.
    @discardableResult
    public func schedule(after delay: Duration, _ body: @escaping @Sendable () -> Void) -> LoopTimer {
        schedule(at: ContinuousClock.now.advanced(by: delay), body)
    }

    // MARK: Descriptors

    /// Watches `descriptor` for `handler`; on the loop's thread only (elsewhere, after the
    /// loop has shut down, it fails). The token names the registration in later calls, and
    /// its stale events are dropped once it is removed.
    package func register(_ descriptor: Int32, interest: IOInterest, handler: any IOHandler) throws(IOError) -> UInt64 {
        // Off the loop only once it has shut down (its work then runs elsewhere).
        guard inEventLoop else { throw .shutDown }
        // Out of tokens: as many registrations as descriptors a process could hold.
        guard let token = handlers.insert(handler) else { throw .system("register", EMFILE) }
        do throws(IOError) {
            try selector.register(descriptor, token: token, interest: interest)
        } catch {
            handlers.remove(token)
            throw error
        }
        return token
    }

    /// Changes what a registration is watched for; safe from any thread while the
    /// descriptor is open. False when the kernel refused (ENOMEM, say): the caller must not
    /// wait for events that will never come.
    @discardableResult
    package func reregister(_ descriptor: Int32, token: UInt64, from previous: IOInterest, to interest: IOInterest) -> Bool {
        do throws(IOError) {
            try selector.reregister(descriptor, token: token, from: previous, to: interest)
            return true
        } catch {
            return false
        }
    }

    /// Stops watching; on the loop's thread only, before the descriptor closes.
    package func deregister(_ descriptor: Int32, token: UInt64, interest: IOInterest) {
        guard inEventLoop else {
            // The loop has shut down and no longer reads its handlers.
            selector.deregister(descriptor, interest: interest)
            return
        }
        handlers.remove(token)
        selector.deregister(descriptor, interest: interest)
    }

    /// Stops watching at once, from any thread, while the caller still holds the descriptor
    /// open; the handler is dropped on the loop, and events already read for it are dropped
    /// by their token. For a descriptor that must close now (a listener whose port is reused).
    package func deregisterNow(_ descriptor: Int32, token: UInt64, interest: IOInterest) {
        selector.deregister(descriptor, interest: interest)
        // Once the loop has stopped this runs elsewhere, where the table is not to be
        // touched (two such calls would race); it was emptied when the loop finished.
        executeHere { [self] in if inEventLoop { handlers.remove(token) } }
    }

    // MARK: Writes collected in a turn

    /// Sends what `channel` collects this turn (after the ready sockets, and before the loop
    /// waits); on the loop's thread only.
    func scheduleFlush(_ channel: SocketChannel) {
        corkedChannels.append(channel)
    }

    /// What this turn's readiness, timers and jobs wrote goes out, one system call a channel.
    private func flushCorkedChannels(into spare: inout [SocketChannel]) {
        // A flush that fails closes its channel, and nothing may collect into the list being
        // walked: the other half of a double buffer takes new entries. Until none are left: a
        // delegate told of a failure may write to another channel of this loop, and what it
        // wrote must not wait for some later wakeup.
        while !corkedChannels.isEmpty {
            swap(&corkedChannels, &spare)
            for channel in spare { channel.flushCorked() }
            spare.removeAll(keepingCapacity: spare.capacity <= 1024)
        }
    }

    // MARK: The loop

    private func run() {
        var batch: [Work] = []
        var flushing: [SocketChannel] = []
        while true {
            flushCorkedChannels(into: &flushing)
            turns &+= 1
            let (hasWork, stopping): (Bool, Bool) = lock.withLock {
                let hasWork = !queued.isEmpty
                if !hasWork && state == .running { isWaiting = true }
                return (hasWork, state != .running)
            }
            if stopping && !hasWork { break }
            let timeout: Duration? = hasWork ? .zero : timers.timeToNextDeadline()
            do throws(IOError) {
                try selector.wait(timeout: timeout) { token, ready in
                    guard let handler = handlers[token] else { return }
                    if ready.contains(.read) { handler.readable() }
                    // The read may have closed it: ask again.
                    if ready.contains(.write), let handler = handlers[token] { handler.writable() }
                }
            } catch {
                // Only an invalid selector fails here; nothing the loop could do would fix it.
                fatalError("\(name): \(error)")
            }
            // What the sockets' handlers wrote (a server's answers) goes now, so the peer
            // wakes while this thread runs its jobs; what the jobs write goes before it waits.
            flushCorkedChannels(into: &flushing)
            // One lock a turn after waking (each costs about 80 instructions): the loop is
            // awake, and the work queued so far is this turn's batch. Work queued from here on,
            // by due timers and by the batch itself, waits for the next turn, after the sockets.
            lock.withLock {
                isWaiting = false
                wakeupPending = false
                swap(&queued, &batch)
            }
            runDueTimers()
            for work in batch { run(work) }
            // Emptied in place: the next swap hands its capacity back to `queued`.
            batch.removeAll(keepingCapacity: true)
        }
        finish()
    }

    private func runDueTimers() {
        guard !timers.isEmpty else { return }
        for timer in timers.popDue(now: .now) { timer.take()?() }
        timers.compactIfMostlyCancelled()
    }

    private func run(_ work: Work) {
        switch work {
        case let .closure(body): body()
        case let .timer(timer): timers.insert(timer)
        case let .job(job):
            if #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) {
                job.runSynchronously(on: asUnownedTaskExecutor())
            }
        }
    }

    /// After the last turn: what is still queued runs elsewhere, and waiters learn it stopped.
    private func finish() {
        hasFinished = true
        for timer in timers.removeAll() { fireElsewhere(timer) }
        let (leftovers, waiters): ([Work], [CheckedContinuation<Void, Never>]) = lock.withLock {
            state = .stopped
            defer {
                queued = []
                stopWaiters = []
            }
            return (queued, stopWaiters)
        }
        for work in leftovers { runElsewhere(work) }
        // Registrations still held end now: a channel's queued write, or its peer's end,
        // would otherwise be waited for with nothing left to report it (found by review).
        let stranded = handlers.live
        handlers = HandlerSlots()
        for handler in stranded { handler.loopStopped() }
        // The loop's descriptors and read space go now, not when the last reference to the
        // loop does: a per-connection loop, or a group kept for its name, would hold them.
        selector.close()
        readBuffer.deallocate()
        finished.signal()
        for waiter in waiters { waiter.resume() }
    }

    /// Stops the loop after the work already queued and waits until its thread has ended.
    /// Descriptors still registered are no longer watched: their channels end (queued writes
    /// fail, delegates hear the end), listeners stop, connects fail. The loop's own
    /// descriptors and read space are released before this returns.
    public func shutdown() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done: Bool = lock.withLock {
                if state == .stopped { return true }
                state = .stopping
                stopWaiters.append(continuation)
                return false
            }
            if done { continuation.resume() } else { selector.wakeUp() }
        }
    }

    /// Stops the loop and blocks the calling thread until its thread has ended; never call
    /// it on the loop itself.
    public func shutdownBlocking() {
        precondition(!inEventLoop, "a loop cannot wait for itself")
        let running: Bool = lock.withLock {
            guard state != .stopped else { return false }
            state = .stopping
            return true
        }
        guard running else { return }
        selector.wakeUp()
        finished.wait()
        finished.signal()
    }
}

@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
extension EventLoop: TaskExecutor {
    /// Runs `job` on the loop's thread.
    public func enqueue(_ job: consuming ExecutorJob) {
        enqueue(.job(UnownedJob(job)))
    }
}

extension EventLoop {
    /// Starts a task that runs on this loop; where the platform has no task executors
    /// (before macOS 15 and iOS 18), on the global pool.
    @discardableResult
    public func startTask<Success: Sendable>(_ operation: sending @escaping @isolated(any) () async -> Success) -> Task<Success, Never> {
        if #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) {
            return Task(executorPreference: self, operation: operation)
        }
        return Task(operation: operation)
    }

    /// Starts a task that runs synchronously on the calling thread until it first suspends,
    /// and on this loop after that; a task that never suspends costs no scheduling at all.
    /// Where the platform lacks immediate tasks (before macOS 26 and iOS 26), as `startTask`.
    @discardableResult
    public func startTaskHere<Success: Sendable>(_ operation: sending @escaping @isolated(any) () async -> Success) -> Task<Success, Never> {
        if #available(macOS 26.0, iOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, *) {
            return Task.immediate(executorPreference: self, operation: operation)
        }
        return startTask(operation)
    }
}
