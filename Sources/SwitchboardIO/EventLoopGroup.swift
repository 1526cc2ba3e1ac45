import Foundation

/// A fixed set of event loops that serve every connection given to them: one thread per
/// loop, however many connections, as swift-nio's `MultiThreadedEventLoopGroup`.
///
/// ``shared`` (one loop per active processor) serves every connection that is not given
/// a group of its own; it lives as long as the process.
public final class EventLoopGroup: @unchecked Sendable {
    /// The loops, in the order ``next()`` hands them out.
    public let loops: [EventLoop]
    private let lock = AdaptiveLock()
    private var cursor = 0
    /// Whether this is ``shared``, which ``shutdown()`` leaves running.
    private let isShared: Bool

    /// The process's default group: one loop per active processor, started on first use.
    /// Each loop needs two descriptors: a process out of them on first use (a server at its
    /// descriptor limit, say) gets a single loop, or waits up to 5 s for descriptors to free,
    /// before it gives up. It cannot be shut down: ``shutdown()`` leaves it running, since
    /// whatever else in the process uses it would find its loops gone (as swift-nio refuses
    /// to shut down its singleton group).
    public static let shared: EventLoopGroup = {
        var lastError: (any Error)?
        for attempt in 0..<50 {
            if attempt > 0 { usleep(100_000) }
            for count in Set([ProcessInfo.processInfo.activeProcessorCount, 1]).sorted(by: >) {
                do {
                    return try EventLoopGroup(loopCount: count, name: "switchboard.shared", isShared: true)
                } catch {
                    lastError = error
                }
            }
        }
        fatalError("cannot start the shared event loops: \(lastError.map { "\($0)" } ?? "")")
    }()

    /// Starts `loopCount` loops (at least one), named `name-0`, `name-1`... If one cannot
    /// start (no descriptors left), those already started are stopped again before the error
    /// is thrown: nothing is left running that no one could stop.
    public convenience init(loopCount: Int = ProcessInfo.processInfo.activeProcessorCount, name: String = "switchboard") throws(IOError) {
        try self.init(loopCount: loopCount, name: name, isShared: false)
    }

    private init(loopCount: Int, name: String, isShared: Bool) throws(IOError) {
        var loops: [EventLoop] = []
        do {
            for index in 0..<max(1, loopCount) {
                loops.append(try EventLoop(name: "\(name)-\(index)"))
            }
        } catch {
            for loop in loops { loop.shutdownBlocking() }
            throw error
        }
        self.loops = loops
        self.isShared = isShared
    }

    /// The next loop, round robin: new connections spread evenly over the threads.
    public func next() -> EventLoop {
        lock.withLock {
            defer { cursor = (cursor + 1) % loops.count }
            return loops[cursor]
        }
    }

    /// The loop whose thread is calling, if any: work started there stays there.
    public var current: EventLoop? { loops.first { $0.inEventLoop } }

    /// Stops every loop once its queued work has run, and waits until their threads end.
    /// Close the servers and connections on it first (`WebSocketServer.shutdown(timeout:)`
    /// does that for a server); descriptors still registered end (their channels fail, listeners stop).
    ///
    /// On ``shared`` it does nothing and returns at once: the shared loops serve the whole
    /// process and live as long as it does.
    public func shutdown() async {
        // Stopping the shared loops would break every other user of them, for good.
        guard !isShared else { return }
        for loop in loops { await loop.shutdown() }
    }
}
