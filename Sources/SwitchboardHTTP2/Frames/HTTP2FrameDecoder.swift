/// Cuts a byte stream into HTTP/2 frames, with no socket: bytes go in through `append(_:)`,
/// frames come out of ``nextFrame()``. Every length is checked against the advertised
/// MAX_FRAME_SIZE before a byte of the payload is held, so a peer cannot make it buffer more
/// than one frame. Every error is a connection error (RFC 9113 §5.4.1 lets an endpoint treat
/// any stream error as one), with the code the RFC gives. DATA and header-block payloads are
/// slices of the decoder's buffer rather than copies (an allocation each otherwise); a
/// holder that keeps one past the next `append` makes that append copy the buffer instead.
public struct HTTP2FrameDecoder: Sendable {
    /// The largest payload accepted: the MAX_FRAME_SIZE this side advertised.
    public var maxFrameSize: UInt32
    /// Whether the client preface must come first (a server's view of the stream).
    public private(set) var awaitsPreface: Bool

    private var buffer: [UInt8] = []
    private var start = 0

    /// A decoder for one connection's incoming bytes.
    /// - Parameters:
    ///   - maxFrameSize: the MAX_FRAME_SIZE this side advertised.
    ///   - expectsPreface: true for a server, which must see the client preface first.
    public init(maxFrameSize: UInt32 = HTTP2FrameLimits.minimumMaxFrameSize, expectsPreface: Bool) {
        self.maxFrameSize = maxFrameSize
        awaitsPreface = expectsPreface
    }

    /// Bytes received and not yet returned as frames.
    public var bufferedByteCount: Int { buffer.count - start }

    /// Adds bytes read from the connection.
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        compactIfWorthIt()
        buffer.append(contentsOf: bytes)
    }

    /// Adds bytes read from the connection, from an array.
    public mutating func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { append($0) }
    }

    /// The next whole frame, or nil until more bytes arrive.
    public mutating func nextFrame() throws(HTTP2ProtocolViolation) -> HTTP2Frame? {
        if awaitsPreface {
            let preface = HTTP2ConnectionPreface.bytes
            let available = min(bufferedByteCount, preface.count)
            guard buffer[start..<start + available].elementsEqual(preface[0..<available]) else {
                throw HTTP2ProtocolViolation(.protocolError, "the connection did not start with the HTTP/2 client preface")
            }
            guard available == preface.count else { return nil }
            start += preface.count
            awaitsPreface = false
        }
        guard bufferedByteCount >= HTTP2FrameLimits.headerLength else { return nil }
        let length = Int(buffer[start]) << 16 | Int(buffer[start + 1]) << 8 | Int(buffer[start + 2])
        let type = HTTP2FrameType(rawValue: buffer[start + 3])
        let flags = buffer[start + 4]
        let streamID = readUInt32(at: start + 5) & 0x7fff_ffff
        guard length <= Int(maxFrameSize) else {
            throw HTTP2ProtocolViolation(.frameSizeError, "a \(type) frame of \(length) bytes exceeds MAX_FRAME_SIZE \(maxFrameSize)")
        }
        guard bufferedByteCount >= HTTP2FrameLimits.headerLength + length else { return nil }
        let payloadStart = start + HTTP2FrameLimits.headerLength
        let payload = try parse(type: type, flags: flags, streamID: streamID, range: payloadStart..<payloadStart + length)
        start = payloadStart + length
        return HTTP2Frame(streamID: streamID, payload: payload)
    }

    private func parse(type: HTTP2FrameType, flags: UInt8, streamID: UInt32, range: Range<Int>) throws(HTTP2ProtocolViolation) -> HTTP2Frame.Payload {
        let length = range.count
        func requireStream() throws(HTTP2ProtocolViolation) {
            guard streamID != 0 else { throw HTTP2ProtocolViolation(.protocolError, "\(type) on stream 0") }
        }
        func requireConnection() throws(HTTP2ProtocolViolation) {
            guard streamID == 0 else { throw HTTP2ProtocolViolation(.protocolError, "\(type) on stream \(streamID)") }
        }
        func requireLength(_ expected: Int) throws(HTTP2ProtocolViolation) {
            guard length == expected else { throw HTTP2ProtocolViolation(.frameSizeError, "\(type) of \(length) bytes, not \(expected)") }
        }
        switch type {
        case .data:
            try requireStream()
            let content = try unpadded(range, flags: flags, type: type)
            return .data(buffer[content], endStream: flags & HTTP2FrameFlags.endStream != 0, flowControlledLength: length)
        case .headers:
            try requireStream()
            var content = try unpadded(range, flags: flags, type: type)
            if flags & HTTP2FrameFlags.priority != 0 {
                guard content.count >= 5 else { throw HTTP2ProtocolViolation(.frameSizeError, "HEADERS too short for its priority fields") }
                guard readUInt32(at: content.lowerBound) & 0x7fff_ffff != streamID else {
                    throw HTTP2ProtocolViolation(.protocolError, "stream \(streamID) depends on itself")
                }
                content = content.lowerBound + 5..<content.upperBound
            }
            return .headers(fragment: buffer[content], endStream: flags & HTTP2FrameFlags.endStream != 0,
                            endHeaders: flags & HTTP2FrameFlags.endHeaders != 0)
        case .priority:
            try requireStream()
            try requireLength(5)
            guard readUInt32(at: range.lowerBound) & 0x7fff_ffff != streamID else {
                throw HTTP2ProtocolViolation(.protocolError, "stream \(streamID) depends on itself")
            }
            return .priority
        case .rstStream:
            try requireStream()
            try requireLength(4)
            return .rstStream(HTTP2ErrorCode(rawValue: readUInt32(at: range.lowerBound)))
        case .settings:
            try requireConnection()
            let ack = flags & HTTP2FrameFlags.ack != 0
            if ack {
                guard length == 0 else { throw HTTP2ProtocolViolation(.frameSizeError, "a SETTINGS acknowledgement with a payload") }
                return .settings([], ack: true)
            }
            guard length % 6 == 0 else { throw HTTP2ProtocolViolation(.frameSizeError, "SETTINGS of \(length) bytes, not a multiple of 6") }
            var settings: [HTTP2Setting] = []
            settings.reserveCapacity(length / 6)
            for offset in stride(from: range.lowerBound, to: range.upperBound, by: 6) {
                let id = HTTP2SettingID(rawValue: UInt16(buffer[offset]) << 8 | UInt16(buffer[offset + 1]))
                settings.append(HTTP2Setting(id, readUInt32(at: offset + 2)))
            }
            return .settings(settings, ack: false)
        case .pushPromise:
            try requireStream()
            let content = try unpadded(range, flags: flags, type: type)
            guard content.count >= 4 else { throw HTTP2ProtocolViolation(.frameSizeError, "PUSH_PROMISE too short") }
            return .pushPromise(promisedStreamID: readUInt32(at: content.lowerBound) & 0x7fff_ffff,
                                fragment: buffer[content.lowerBound + 4..<content.upperBound],
                                endHeaders: flags & HTTP2FrameFlags.endHeaders != 0)
        case .ping:
            try requireConnection()
            try requireLength(8)
            return .ping(UInt64(readUInt32(at: range.lowerBound)) << 32 | UInt64(readUInt32(at: range.lowerBound + 4)),
                         ack: flags & HTTP2FrameFlags.ack != 0)
        case .goAway:
            try requireConnection()
            guard length >= 8 else { throw HTTP2ProtocolViolation(.frameSizeError, "GOAWAY shorter than 8 bytes") }
            return .goAway(lastStreamID: readUInt32(at: range.lowerBound) & 0x7fff_ffff,
                           code: HTTP2ErrorCode(rawValue: readUInt32(at: range.lowerBound + 4)),
                           debugData: Array(buffer[range.lowerBound + 8..<range.upperBound]))
        case .windowUpdate:
            try requireLength(4)
            return .windowUpdate(increment: readUInt32(at: range.lowerBound) & 0x7fff_ffff)
        case .continuation:
            try requireStream()
            return .continuation(fragment: buffer[range], endHeaders: flags & HTTP2FrameFlags.endHeaders != 0)
        default:
            return .unknown(type: type.rawValue, length: length)
        }
    }

    /// The payload without its pad-length octet and padding, if the frame is padded.
    private func unpadded(_ range: Range<Int>, flags: UInt8, type: HTTP2FrameType) throws(HTTP2ProtocolViolation) -> Range<Int> {
        guard flags & HTTP2FrameFlags.padded != 0 else { return range }
        guard !range.isEmpty else { throw HTTP2ProtocolViolation(.frameSizeError, "a padded \(type) without its pad length") }
        let padding = Int(buffer[range.lowerBound])
        guard padding < range.count else {
            throw HTTP2ProtocolViolation(.protocolError, "\(type) padding of \(padding) bytes fills the whole payload")
        }
        return range.lowerBound + 1..<range.upperBound - padding
    }

    private func readUInt32(at offset: Int) -> UInt32 {
        UInt32(buffer[offset]) << 24 | UInt32(buffer[offset + 1]) << 16 | UInt32(buffer[offset + 2]) << 8 | UInt32(buffer[offset + 3])
    }

    /// Forgets everything buffered: after a connection error nothing more is read.
    public mutating func discardBuffered() {
        buffer = []
        start = 0
    }

    /// Drops consumed bytes once they are most of the buffer, so each byte moves O(1) times.
    private mutating func compactIfWorthIt() {
        guard start > 0 else { return }
        if start == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            start = 0
        } else if start >= 4096, start * 2 >= buffer.count {
            buffer.removeSubrange(0..<start)
            start = 0
        }
    }
}
