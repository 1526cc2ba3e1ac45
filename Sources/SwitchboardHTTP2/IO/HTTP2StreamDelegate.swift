/// Hears one stream's side of a connection, always on the connection's event loop, in
/// order: headers, data, more headers (trailers), then exactly one `closed`.
package protocol HTTP2StreamDelegate: AnyObject, Sendable {
    /// A header block arrived: a request (server), a response or its trailers (client).
    func streamReceived(headers: [HPACKHeader], endStream: Bool)
    /// Message bytes arrived, as a slice of the connection's read buffer: copy what is kept
    /// beyond this call, or the next read copies the whole buffer.
    func streamReceived(data: ArraySlice<UInt8>, endStream: Bool)
    /// The stream is over; nothing follows.
    func streamClosed(_ closure: HTTP2StreamClosure)
    /// The headers to open with, for a stream that waited for the peer's concurrency limit:
    /// a deadline counted down in them (gRPC's `grpc-timeout`) is out of date by the wait.
    /// Called under the connection's lock, on any thread: compute, call nothing.
    func headersForDelayedOpen(_ headers: [HPACKHeader]) -> [HPACKHeader]
}

extension HTTP2StreamDelegate {
    /// The headers as they were given.
    package func headersForDelayedOpen(_ headers: [HPACKHeader]) -> [HPACKHeader] { headers }
}

/// Takes the streams a client opens on a server connection: returns who hears each one.
package protocol HTTP2StreamAcceptor: AnyObject, Sendable {
    /// A request's headers opened `streamID` on `connection`; called on the connection's loop.
    func accept(streamID: UInt32, headers: [HPACKHeader], endStream: Bool, on connection: HTTP2ChannelDriver) -> any HTTP2StreamDelegate
}
