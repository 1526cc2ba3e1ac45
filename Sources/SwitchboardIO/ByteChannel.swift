/// A byte stream an event loop serves: what a WebSocket or HTTP/2 connection sits on.
/// ``SocketChannel`` is the one for sockets (TCP, TLS); a stream whose I/O another library
/// owns (Network.framework on Apple platforms) can be adapted to it.
///
/// Reads reach the delegate on ``loop``, one call at a time; writes may come from any thread.
package protocol ByteChannel: AnyObject, Sendable {
    /// The loop that runs the delegate.
    var loop: EventLoop { get }
    /// Bytes written but still waiting for room.
    var queuedByteCount: Int { get }
    /// Starts (or, on the loop, hands over) reading: from now on `delegate` gets the bytes.
    /// Call on the loop to replace an earlier delegate without losing a byte.
    func activate(delegate: any ChannelDelegate, handshakeDone: (@Sendable (String?) -> Void)?)
    /// Sends `bytes` in order; see ``SocketChannel/write(_:completion:)``.
    func write(_ bytes: [UInt8], completion: (@Sendable (String?) -> Void)?) -> SocketChannel.WriteResult
    /// Stops or resumes reading (backpressure).
    func setReading(_ on: Bool)
    /// Closes once what is queued is written, or after `timeout`.
    func closeAfterFlushing(timeout: Duration)
    /// Closes at once.
    func close(reason: String?)
    /// From now on a graceful close waits (boundedly) for the peer to close the stream
    /// first, where the stream can tell; a no-op where it cannot.
    func letPeerCloseFirst()
    /// The protocol TLS's ALPN settled on, or nil (no TLS, no ALPN, or not known).
    var negotiatedProtocol: String? { get }
    /// Whether a graceful close reads (and drops) what the peer still sends until it closes
    /// too, so that its late bytes meet no reset; a protocol above that lingers itself need
    /// not then.
    var lingersOnClose: Bool { get }
}

extension ByteChannel {
    package var negotiatedProtocol: String? { nil }
    package func letPeerCloseFirst() {}
    package var lingersOnClose: Bool { false }
}

extension SocketChannel: ByteChannel {
    /// A graceful close shuts the sending side and reads until the peer closes, at most
    /// ``lingerTimeout`` and ``lingerByteLimit``.
    package var lingersOnClose: Bool { true }
}
