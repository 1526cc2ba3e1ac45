import Foundation

/// The thread that reads one connection's socket, which is also a task executor.
///
/// A task that prefers this executor (`withTaskExecutorPreference(connection.eventLoop)`, or
/// `Task(executorPreference:)`) continues on the reader thread when a message it awaits
/// arrives: right there, after the read, instead of waking a thread of the global pool.
/// That halves the thread wake-ups of a request and its answer, as running on a swift-nio
/// event loop does. Such a task must not block: while it runs, the socket is not read.
///
/// The thread waits in a plain blocking read, as a thread-per-connection echo does, so a
/// message costs no more system calls than it does there. A job that arrives from another
/// thread while the loop waits for the socket therefore runs on the global concurrent
/// executor rather than waking it (a preference is not a promise); so does every job after
/// the connection has ended, so a task that still prefers this executor keeps working, and
/// so do queued jobs when jobs have kept the thread from reading for 16 batches in a row.
///
/// Reading can pause (the application has not taken what was read): the thread then runs
/// jobs only, waiting for them or for reading to resume.
public final class ConnectionEventLoop: @unchecked Sendable {
    private let lock = NSCondition()
    private var jobs: [UnownedJob] = []
    /// The other half of a double buffer: batches swap with `jobs`, so queuing a job
    /// allocates nothing once both have grown.
    private var spare: [UnownedJob] = []
    /// The thread is blocked reading the socket and cannot take jobs.
    private var isWaitingForSocket = false
    private var isReadingPaused = false
    private var hasEnded = false
    /// The reader thread, while the loop runs.
    private var thread: Thread?

    init() {}

    /// Runs jobs and reads on the calling thread until `handle` returns `false`: `read`
    /// blocks for the socket's next bytes, `handle` feeds them to the engine, whose resumed
    /// tasks then run here.
    func run<Chunk>(read: () -> Chunk, handle: (Chunk) -> Bool) {
        lock.withLock { thread = Thread.current }
        defer { end() }
        var batchesWithoutReading = 0
        while true {
            // Jobs that keep making jobs (a task that only yields) must not starve the socket:
            // after 16 batches in a row, they move to the global pool and the thread reads.
            var batch = batchesWithoutReading < 16 ? takeJobsOrWaitForSocket() : handJobsElsewhereAndWaitForSocket()
            if batch.isEmpty {
                let chunk = read()
                // Awake before handling, so the tasks the bytes resume queue here.
                lock.withLock { isWaitingForSocket = false }
                guard handle(chunk) else { return }
                batchesWithoutReading = 0
                continue
            }
            for job in batch { run(job) }
            recycle(&batch)
            batchesWithoutReading += 1
        }
    }

    /// Marks the thread as about to block on the socket and sends the queued jobs to the
    /// global pool; returns no jobs.
    private func handJobsElsewhereAndWaitForSocket() -> [UnownedJob] {
        let queued: [UnownedJob]? = lock.withLock {
            // Paused, the socket is not read anyway: nothing to be fair to.
            if isReadingPaused { return nil }
            isWaitingForSocket = true
            defer { jobs = [] }
            return jobs
        }
        guard let queued else { return takeJobsOrWaitForSocket() }
        for job in queued { runElsewhere(job) }
        return []
    }

    /// The queued jobs; when there are none, marks the thread as about to block on the
    /// socket, under the same lock, so a job cannot slip in unseen.
    private func takeJobsOrWaitForSocket() -> [UnownedJob] {
        lock.withLock {
            while jobs.isEmpty && isReadingPaused { lock.wait() }
            if jobs.isEmpty {
                isWaitingForSocket = true
                return []
            }
            // The batch leaves with its storage unshared, and `jobs` takes the spare storage.
            swap(&jobs, &spare)
            defer { spare = [] }
            return spare
        }
    }

    /// Hands a batch's storage back for reuse once its jobs have run; the loop drops its
    /// own reference before the next batch, so the storage is unshared when `jobs` takes it.
    private func recycle(_ batch: inout [UnownedJob]) {
        batch.removeAll(keepingCapacity: true)
        lock.withLock { spare = batch }
    }

    /// Queues a job for the loop; while the loop waits for the socket, or after it ended,
    /// the global pool runs it instead.
    func schedule(_ job: UnownedJob) {
        let queued: Bool = lock.withLock {
            if hasEnded || isWaitingForSocket { return false }
            jobs.append(job)
            if isReadingPaused { lock.signal() }
            return true
        }
        if !queued { runElsewhere(job) }
    }

    /// Stops reading the socket after the current read; jobs still run.
    func pauseReading() {
        lock.withLock { isReadingPaused = true }
    }

    /// Reads again.
    func resumeReading() {
        lock.withLock {
            isReadingPaused = false
            lock.signal()
        }
    }

    /// From now on jobs go to the global pool, and so do those still queued.
    private func end() {
        let leftovers: [UnownedJob] = lock.withLock {
            hasEnded = true
            thread = nil
            defer { jobs = [] }
            return jobs
        }
        for job in leftovers { runElsewhere(job) }
    }

    private func run(_ job: UnownedJob) {
        if #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) {
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }

    private func runElsewhere(_ job: UnownedJob) {
        if #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) {
            globalConcurrentExecutor.enqueue(ExecutorJob(job))
        }
    }
}

extension ConnectionEventLoop {
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
    public func startTaskHere(_ operation: sending @escaping @isolated(any) () async -> Void) {
        if #available(macOS 26.0, iOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, *) {
            Task.immediate(executorPreference: self, operation: operation)
        } else {
            startTask(operation)
        }
    }

    /// Whether the calling thread is this loop's reader thread.
    var isCurrent: Bool { lock.withLock { thread } === Thread.current }
}

@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
extension ConnectionEventLoop: TaskExecutor {
    /// Runs `job` on the reader thread, after the read under way.
    public func enqueue(_ job: consuming ExecutorJob) {
        schedule(UnownedJob(job))
    }
}
