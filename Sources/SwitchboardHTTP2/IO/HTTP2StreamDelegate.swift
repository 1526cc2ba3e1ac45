/// Hears one stream's side of a connection, always on the connection's event loop, in
/// order: headers, data, more headers (trailers), then exactly one `closed`.
package protocol HTTP2StreamDelegate: AnyObject, Sendable {
    /// A header block arrived: a request (server), a response or its trailers (client).
    func streamReceived(headers: [HPACKHeader], endStream: Bool)
    /// Message bytes arrived.
    func streamReceived(data: [UInt8], endStream: Bool)
    /// The stream is over; nothing follows.
    func streamClosed(_ closure: HTTP2StreamClosure)
}

/// Takes the streams a client opens on a server connection: returns who hears each one.
package protocol HTTP2StreamAcceptor: AnyObject, Sendable {
    /// A request's headers opened `streamID` on `connection`.
    func accept(streamID: UInt32, headers: [HPACKHeader], endStream: Bool, on connection: HTTP2ChannelDriver) -> any HTTP2StreamDelegate
}
