import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The thread that reads one connection's socket, which is also a task executor.
///
/// A task that prefers this executor (`withTaskExecutorPreference(connection.eventLoop)`, or
/// `Task(executorPreference:)`) runs on the reader thread: when a message it awaits arrives,
/// it continues right there, after the read, instead of waking a thread of the global pool.
/// That halves the thread wake-ups of a request and its answer, as running on a swift-nio
/// event loop does. Such a task must not block: while it runs, the socket is not read.
///
/// Jobs that arrive after the connection has ended run on the global concurrent executor,
/// so a task that still prefers this executor keeps working.
public final class ConnectionEventLoop: @unchecked Sendable {
    private let lock = NSLock()
    private var jobs: [UnownedJob] = []
    /// The loop sleeps in `poll` and needs the wake pipe to see new jobs.
    private var isSleeping = false
    /// A wake byte is on its way; one is enough.
    private var wakeSent = false
    private var hasEnded = false
    /// The reader thread, while the loop runs.
    private var thread: Thread?
    /// The pipe that wakes `poll` when a job arrives from another thread; `-1` if none.
    private let wakeReader: Int32
    private let wakeWriter: Int32

    init() {
        var descriptors: [Int32] = [-1, -1]
        if pipe(&descriptors) == 0 {
            for descriptor in descriptors {
                _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
                _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
            }
        }
        wakeReader = descriptors[0]
        wakeWriter = descriptors[1]
    }

    /// Closed only here: an enqueuer may still be writing its wake byte when the loop ends.
    deinit {
        if wakeReader >= 0 { _ = close(wakeReader) }
        if wakeWriter >= 0 { _ = close(wakeWriter) }
    }

    /// Runs jobs and reads until `readOnce` returns `false`, on the calling thread.
    /// `readOnce` is called when `descriptor` is readable or `hasBufferedInput` says bytes
    /// wait above it; without a descriptor the loop just reads, and jobs go to the global pool.
    func run(descriptor: Int32?, hasBufferedInput: () -> Bool, readOnce: () -> Bool) {
        lock.withLock { thread = Thread.current }
        defer { end() }
        guard let descriptor, wakeReader >= 0 else {
            end()
            while readOnce() {}
            return
        }
        while true {
            let batch = takeJobsOrSleep()
            if !batch.isEmpty {
                for job in batch { run(job) }
                // Nothing new: go round and sleep in poll. More jobs: check the socket
                // without blocking before running them, so jobs cannot starve reading.
                if lock.withLock({ jobs.isEmpty }) { continue }
            }
            if hasBufferedInput() {
                markAwake()
                guard readOnce() else { return }
                continue
            }
            var watched = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0),
                           pollfd(fd: wakeReader, events: Int16(POLLIN), revents: 0)]
            let ready = poll(&watched, 2, batch.isEmpty ? -1 : 0)
            markAwake()
            if ready < 0 {
                if errno == EINTR { continue }
                // poll itself failed: fall back to plain reads rather than spin.
                end()
                while readOnce() {}
                return
            }
            if watched[1].revents != 0 { drainWakePipe() }
            if watched[0].revents != 0 {
                guard readOnce() else { return }
            }
        }
    }

    /// The queued jobs; when there are none, marks the loop as about to sleep, under the same
    /// lock, so an enqueuer cannot slip a job in unseen.
    private func takeJobsOrSleep() -> [UnownedJob] {
        lock.withLock {
            if jobs.isEmpty {
                isSleeping = true
                return []
            }
            defer { jobs = [] }
            return jobs
        }
    }

    private func markAwake() {
        lock.withLock { isSleeping = false }
    }

    private func drainWakePipe() {
        lock.withLock { wakeSent = false }
        var scratch = [UInt8](repeating: 0, count: 64)
        while scratch.withUnsafeMutableBytes({ read(wakeReader, $0.baseAddress, $0.count) }) > 0 {}
    }

    /// Queues a job for the loop, waking it if it sleeps; after the end, the global pool runs it.
    func schedule(_ job: UnownedJob) {
        enum Route { case queued, wake, global }
        let route: Route = lock.withLock {
            if hasEnded { return .global }
            jobs.append(job)
            guard isSleeping, !wakeSent else { return .queued }
            wakeSent = true
            return .wake
        }
        switch route {
        case .queued: return
        case .wake:
            var byte: UInt8 = 1
            _ = write(wakeWriter, &byte, 1)
        case .global: runElsewhere(job)
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
