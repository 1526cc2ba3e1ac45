/// What a received batch of bytes meant, in order, for the layer above the connection.
public enum HTTP2Event: Sendable, Hashable {
    /// A complete header block: a request (server), a response or trailers (client).
    /// Validated: pseudo-headers are the right ones, names lowercase, no connection headers.
    case headers(streamID: UInt32, [HPACKHeader], endStream: Bool)
    /// Message bytes on a stream, already counted as consumed for flow control: a slice of
    /// the frame decoder's buffer, to be copied by whoever keeps it past the next read.
    case data(streamID: UInt32, ArraySlice<UInt8>, endStream: Bool)
    /// A stream is gone: it finished both ways, or was reset by either side, or will never
    /// be processed. Sent once per stream this side knew of.
    case streamClosed(streamID: UInt32, HTTP2StreamClosure)
    /// The peer's settings changed (for instance MAX_CONCURRENT_STREAMS, so waiting calls
    /// may now fit).
    case remoteSettingsChanged(HTTP2Settings)
    /// The answer to a PING this side sent.
    case pingAcknowledged(UInt64)
    /// The peer is going away: streams up to `lastStreamID` may finish, no new ones open.
    case goAway(lastStreamID: UInt32, HTTP2ErrorCode, debugData: [UInt8])
    /// The peer broke the protocol: GOAWAY with the violation's code is in the output, every
    /// stream is closed, and the connection should be closed once the output is written.
    case connectionFailed(HTTP2ProtocolViolation)
}

/// Why a stream ended.
public enum HTTP2StreamClosure: Sendable, Hashable {
    /// Both sides sent END_STREAM.
    case completed
    /// The peer sent RST_STREAM with this code (REFUSED_STREAM means it was not processed).
    case resetByPeer(HTTP2ErrorCode)
    /// This side reset it because the peer broke the protocol on it.
    case resetHere(HTTP2ProtocolViolation)
    /// The peer's GOAWAY excluded it: never processed, safe to retry on a new connection.
    case notProcessed
    /// The whole connection ended first.
    case connectionEnded(String)

    /// Whether a request on this stream certainly was not processed, so a retry elsewhere
    /// is safe whatever the method.
    public var isSafeToRetry: Bool {
        switch self {
        case .notProcessed, .resetByPeer(.refusedStream): true
        default: false
        }
    }
}

/// Why a stream could not be opened or written.
public enum HTTP2StreamError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The peer's MAX_CONCURRENT_STREAMS is reached: wait for a stream to close.
    case concurrencyLimitReached
    /// A GOAWAY was sent or received, or stream ids ran out: open a new connection.
    case goingAway
    /// The connection has ended.
    case connectionClosed
    /// No open stream has this id (it ended, or was never opened here).
    case unknownStream(UInt32)
    /// The stream's sending side is already closed.
    case sendSideClosed(UInt32)
    /// The header list is larger than the peer's MAX_HEADER_LIST_SIZE.
    case headerListTooLarge(size: Int, limit: UInt32)
    /// Headers were sent after data without ending the stream (only trailers may follow data).
    case headersAfterData(UInt32)
    /// The stream already holds `queued` bytes the peer's window has not let out, and this
    /// write would take it past `limit` (``HTTP2ConnectionConfiguration/maxPendingStreamBytes``).
    case sendBacklogFull(UInt32, queued: Int, limit: Int)
    /// The connection's streams already hold `queued` bytes the peer's windows have not let
    /// out, and what this write on the stream would leave waiting takes them past `limit`
    /// (``HTTP2ConnectionConfiguration/maxPendingConnectionBytes``).
    case connectionSendBacklogFull(UInt32, queued: Int, limit: Int)
    /// The peer's MAX_CONCURRENT_STREAMS is reached and `limit` streams already wait for it
    /// (``HTTP2ConnectionOptions/maximumWaitingStreams``).
    case tooManyWaiting(limit: Int)

    public var description: String {
        switch self {
        case .concurrencyLimitReached: "the peer's MAX_CONCURRENT_STREAMS is reached"
        case .goingAway: "the connection is going away"
        case .connectionClosed: "the connection is closed"
        case let .unknownStream(id): "stream \(id) is not open"
        case let .sendSideClosed(id): "stream \(id) has already ended its sending side"
        case let .headerListTooLarge(size, limit): "a header list of \(size) bytes exceeds the peer's limit of \(limit)"
        case let .headersAfterData(id): "headers after data on stream \(id) must end the stream"
        case let .sendBacklogFull(id, queued, limit): "stream \(id) already holds \(queued) bytes the peer has not taken, and the limit is \(limit)"
        case let .connectionSendBacklogFull(id, queued, limit):
            "the connection's streams already hold \(queued) bytes the peer has not taken, and a write on stream \(id) would pass the limit of \(limit)"
        case let .tooManyWaiting(limit): "the peer's MAX_CONCURRENT_STREAMS is reached and \(limit) streams already wait for it"
        }
    }
}
