/// One HTTP/2 frame (RFC 9113 §4 and §6), parsed: which stream it belongs to and what it says.
/// Padding is stripped on reading but its size is kept, since it counts against flow control.
public struct HTTP2Frame: Sendable, Hashable {
    /// The stream the frame belongs to; 0 for the connection.
    public var streamID: UInt32
    /// What the frame carries.
    public var payload: Payload

    /// A frame for `streamID` (0 for the connection) carrying `payload`.
    public init(streamID: UInt32, payload: Payload) {
        self.streamID = streamID
        self.payload = payload
    }

    /// The body of a frame, one case per frame type.
    public enum Payload: Sendable, Hashable {
        /// DATA: message bytes. `flowControlledLength` is the whole payload with padding.
        case data(Data, endStream: Bool, flowControlledLength: Int)
        /// HEADERS: the start of a header block. Priority fields, if sent, are parsed and dropped
        /// (RFC 9113 deprecates the priority scheme).
        case headers(fragment: ArraySlice<UInt8>, endStream: Bool, endHeaders: Bool)
        /// PRIORITY: deprecated; parsed only to check its size.
        case priority
        /// RST_STREAM: the stream ends at once with an error code.
        case rstStream(HTTP2ErrorCode)
        /// SETTINGS, or its acknowledgement (which carries none).
        case settings([HTTP2Setting], ack: Bool)
        /// PUSH_PROMISE: always refused here, since ENABLE_PUSH is sent as 0.
        case pushPromise(promisedStreamID: UInt32, fragment: ArraySlice<UInt8>, endHeaders: Bool)
        /// PING, or its answer, with 8 opaque bytes.
        case ping(UInt64, ack: Bool)
        /// GOAWAY: no stream above `lastStreamID` will be processed.
        case goAway(lastStreamID: UInt32, code: HTTP2ErrorCode, debugData: [UInt8])
        /// WINDOW_UPDATE: the window of the stream (or the connection, on stream 0) grows.
        case windowUpdate(increment: UInt32)
        /// CONTINUATION: the rest of a header block.
        case continuation(fragment: ArraySlice<UInt8>, endHeaders: Bool)
        /// A frame type this version does not know; ignored as RFC 9113 §4.1 requires.
        case unknown(type: UInt8, length: Int)
    }

    /// DATA bytes (the name avoids Foundation's `Data`). A decoded frame's payload is a slice
    /// of the decoder's buffer, not a copy: whoever keeps it past the next read should copy
    /// it, or the decoder's next `append` copies its buffer instead.
    public typealias Data = ArraySlice<UInt8>

    /// The frame's type byte.
    public var type: HTTP2FrameType {
        switch payload {
        case .data: .data
        case .headers: .headers
        case .priority: .priority
        case .rstStream: .rstStream
        case .settings: .settings
        case .pushPromise: .pushPromise
        case .ping: .ping
        case .goAway: .goAway
        case .windowUpdate: .windowUpdate
        case .continuation: .continuation
        case let .unknown(type, _): HTTP2FrameType(rawValue: type)
        }
    }
}

/// A frame's type byte.
public struct HTTP2FrameType: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// DATA.
    public static let data = HTTP2FrameType(rawValue: 0x0)
    /// HEADERS.
    public static let headers = HTTP2FrameType(rawValue: 0x1)
    /// PRIORITY.
    public static let priority = HTTP2FrameType(rawValue: 0x2)
    /// RST_STREAM.
    public static let rstStream = HTTP2FrameType(rawValue: 0x3)
    /// SETTINGS.
    public static let settings = HTTP2FrameType(rawValue: 0x4)
    /// PUSH_PROMISE.
    public static let pushPromise = HTTP2FrameType(rawValue: 0x5)
    /// PING.
    public static let ping = HTTP2FrameType(rawValue: 0x6)
    /// GOAWAY.
    public static let goAway = HTTP2FrameType(rawValue: 0x7)
    /// WINDOW_UPDATE.
    public static let windowUpdate = HTTP2FrameType(rawValue: 0x8)
    /// CONTINUATION.
    public static let continuation = HTTP2FrameType(rawValue: 0x9)

    private static let names = ["DATA", "HEADERS", "PRIORITY", "RST_STREAM", "SETTINGS", "PUSH_PROMISE", "PING", "GOAWAY", "WINDOW_UPDATE", "CONTINUATION"]

    public var description: String {
        rawValue < Self.names.count ? Self.names[Int(rawValue)] : "0x" + String(rawValue, radix: 16)
    }
}

/// Frame flag bits (RFC 9113 §6); each means something only for some frame types.
enum HTTP2FrameFlags {
    static let endStream: UInt8 = 0x1
    static let ack: UInt8 = 0x1
    static let endHeaders: UInt8 = 0x4
    static let padded: UInt8 = 0x8
    static let priority: UInt8 = 0x20
}

/// The 24 octets a client sends before anything else (RFC 9113 §3.4).
public enum HTTP2ConnectionPreface {
    /// `PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n`.
    public static let bytes: [UInt8] = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)
}
