import SwitchboardIO

/// The event loop a connection runs on; once a thread of its own, now one of a group's.
public typealias ConnectionEventLoop = EventLoop

extension EventLoop {
    /// Whether the calling thread is this loop's (``EventLoop/inEventLoop``).
    var isCurrent: Bool { inEventLoop }
}
