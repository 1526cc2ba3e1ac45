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

    /// The process's default group: one loop per active processor, started on first use.
    public static let shared: EventLoopGroup = {
        do {
            return try EventLoopGroup(loopCount: ProcessInfo.processInfo.activeProcessorCount, name: "switchboard.shared")
        } catch {
            fatalError("cannot start the shared event loops: \(error)")
        }
    }()

    /// Starts `loopCount` loops (at least one), named `name-0`, `name-1`...
    public init(loopCount: Int = ProcessInfo.processInfo.activeProcessorCount, name: String = "switchboard") throws(IOError) {
        var loops: [EventLoop] = []
        for index in 0..<max(1, loopCount) {
            loops.append(try EventLoop(name: "\(name)-\(index)"))
        }
        self.loops = loops
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
    /// does that for a server); descriptors still registered are no longer served.
    public func shutdown() async {
        for loop in loops { await loop.shutdown() }
    }
}
