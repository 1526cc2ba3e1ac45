/// An HTTP/2 error code (RFC 9113 §7), as carried by RST_STREAM and GOAWAY. A struct rather
/// than an enum: peers may send codes this version does not know, and those must survive.
public struct HTTP2ErrorCode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt32

    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Graceful shutdown, or a stream ended because nothing more was needed.
    public static let noError = HTTP2ErrorCode(rawValue: 0x0)
    /// A generic protocol violation.
    public static let protocolError = HTTP2ErrorCode(rawValue: 0x1)
    /// The endpoint failed on its own account.
    public static let internalError = HTTP2ErrorCode(rawValue: 0x2)
    /// A flow-control window was exceeded or overflowed.
    public static let flowControlError = HTTP2ErrorCode(rawValue: 0x3)
    /// SETTINGS were not acknowledged in time.
    public static let settingsTimeout = HTTP2ErrorCode(rawValue: 0x4)
    /// A frame arrived on a stream that was already half-closed or closed.
    public static let streamClosed = HTTP2ErrorCode(rawValue: 0x5)
    /// A frame had an invalid size.
    public static let frameSizeError = HTTP2ErrorCode(rawValue: 0x6)
    /// The stream was refused before any processing: safe to retry.
    public static let refusedStream = HTTP2ErrorCode(rawValue: 0x7)
    /// The stream is no longer needed.
    public static let cancel = HTTP2ErrorCode(rawValue: 0x8)
    /// The header compression context could not be kept.
    public static let compressionError = HTTP2ErrorCode(rawValue: 0x9)
    /// A CONNECT tunnel failed.
    public static let connectError = HTTP2ErrorCode(rawValue: 0xa)
    /// The peer is generating excessive load.
    public static let enhanceYourCalm = HTTP2ErrorCode(rawValue: 0xb)
    /// The transport's security is not good enough.
    public static let inadequateSecurity = HTTP2ErrorCode(rawValue: 0xc)
    /// The peer must use HTTP/1.1 instead.
    public static let http11Required = HTTP2ErrorCode(rawValue: 0xd)

    private static let names = [
        "NO_ERROR", "PROTOCOL_ERROR", "INTERNAL_ERROR", "FLOW_CONTROL_ERROR", "SETTINGS_TIMEOUT",
        "STREAM_CLOSED", "FRAME_SIZE_ERROR", "REFUSED_STREAM", "CANCEL", "COMPRESSION_ERROR",
        "CONNECT_ERROR", "ENHANCE_YOUR_CALM", "INADEQUATE_SECURITY", "HTTP_1_1_REQUIRED",
    ]

    /// The RFC's name, or the number in hex for codes it does not define.
    public var description: String {
        rawValue < Self.names.count ? Self.names[Int(rawValue)] : "0x" + String(rawValue, radix: 16)
    }
}

/// Something the peer did that HTTP/2 forbids, with the code to answer it with.
public struct HTTP2ProtocolViolation: Error, Sendable, Hashable, CustomStringConvertible {
    /// The code sent to the peer in GOAWAY (for the connection) or RST_STREAM (for a stream).
    public var code: HTTP2ErrorCode
    /// What went wrong, for logs; never holds header values.
    public var reason: String

    /// A violation answered with `code`, described by `reason`.
    public init(_ code: HTTP2ErrorCode, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    public var description: String { "\(code): \(reason)" }
}
