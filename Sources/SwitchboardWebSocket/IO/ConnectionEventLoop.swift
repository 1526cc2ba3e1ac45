// The event loops connections run on are part of this module's API (a connection's
// `eventLoop`, a server's `EventLoopGroupProvider`): importing the WebSocket module brings them.
@_exported import SwitchboardIO

/// The event loop a connection runs on; once a thread of its own, now one of a group's.
public typealias ConnectionEventLoop = EventLoop

extension EventLoop {
    /// Whether the calling thread is this loop's (`inEventLoop`).
    var isCurrent: Bool { inEventLoop }
}
