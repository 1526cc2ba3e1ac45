/// The fixed part of a frame (RFC 6455 §5.2).
public struct FrameHeader: Sendable, Hashable {
    /// Whether this is the last frame of its message.
    public var fin: Bool
    /// RSV1...RSV3 as the low three bits.
    public var reserved: UInt8
    /// The frame's type: text, binary, continuation or a control frame.
    public var opcode: WebSocketOpcode
    /// The masking key as its four bytes lie on the wire, present on client-to-server frames.
    public var maskKey: UInt32?
    /// The payload's length in bytes.
    public var payloadLength: UInt64
}

/// An incremental, sans-IO frame parser. Bytes go in as they arrive, in any split;
/// events come out: a header, payload chunks already unmasked, then the frame's end.
/// Payload is streamed so text can be validated before a frame completes, and sizes
/// are checked at the header, before any payload memory is allocated.
public struct FrameParser: Sendable {
    /// What the parser produced.
    public enum Event: Sendable, Hashable {
        /// A frame's header, checked against the limits; its payload follows.
        case header(FrameHeader)
        /// Payload bytes, unmasked. Usually a slice sharing the parser's buffer rather than a
        /// copy; drop it before the next `append`, which would otherwise have to copy the buffer.
        case payload(ArraySlice<UInt8>)
        /// The frame's payload is complete; comes even when it was empty.
        case frameEnd
    }

    /// Whether frames must be masked (a server reading a client) or unmasked (a client).
    public let expectMasked: Bool
    /// The largest frame payload accepted; larger frames fail with 1009.
    public let maximumFrameSize: UInt64

    private var buffer: [UInt8] = []
    private var readIndex = 0
    private var remaining: UInt64 = 0
    private var maskKey: UInt32?
    private var maskOffset = 0
    private var inPayload = false
    /// Whether a payload slice of `buffer` went out since the last append (after which the
    /// consumer has dropped them all).
    private var hasLentSlice = false

    /// Creates a parser.
    public init(expectMasked: Bool, maximumFrameSize: UInt64) {
        self.expectMasked = expectMasked
        self.maximumFrameSize = maximumFrameSize
    }

    /// Adds received bytes.
    public mutating func append(_ bytes: some Sequence<UInt8>) {
        compact()
        buffer.append(contentsOf: bytes)
    }

    /// Adds received bytes with one copy into the parser's buffer, which keeps its storage
    /// between reads, so steady traffic allocates nothing here.
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        compact()
        buffer.append(contentsOf: bytes.assumingMemoryBound(to: UInt8.self))
    }

    /// Drops the bytes already parsed; keeps the storage unless a large message grew it.
    private mutating func compact() {
        // The consumer dropped the slices it had before appending.
        hasLentSlice = false
        if readIndex > 0, readIndex == buffer.count {
            if buffer.capacity > 1 << 20 { buffer = [] } else { buffer.removeAll(keepingCapacity: true) }
            readIndex = 0
        } else if readIndex > 65536 {
            buffer.removeFirst(readIndex)
            readIndex = 0
        }
    }

    /// Adds received bytes; when everything before was consumed, the array is kept as is.
    public mutating func append(_ bytes: [UInt8]) {
        guard readIndex == buffer.count else {
            append(bytes[...])
            return
        }
        buffer = bytes
        readIndex = 0
        hasLentSlice = false
    }

    /// Bytes received but not yet parsed.
    public var bufferedCount: Int { buffer.count - readIndex }

    /// Whether part of a frame has arrived and the rest has not.
    public var isInsideFrame: Bool { inPayload || readIndex < buffer.count }

    /// The next event, or `nil` when more bytes are needed.
    public mutating func next() throws(WebSocketError) -> Event? {
        if inPayload {
            if remaining == 0 {
                inPayload = false
                return .frameEnd
            }
            let available = buffer.count - readIndex
            guard available > 0 else { return nil }
            let take = Int(min(UInt64(available), remaining))
            let range = readIndex..<readIndex + take
            readIndex += take
            remaining -= UInt64(take)
            defer { hasLentSlice = true }
            guard let maskKey else { return .payload(buffer[range]) }
            let key = FrameWriter.maskingKey(maskKey, from: maskOffset)
            maskOffset = (maskOffset + take) & 3
            guard !hasLentSlice else {
                // A slice lent since the last append shares the buffer: changing it in place
                // would copy all of it, so this chunk is copied alone.
                var chunk = Array(buffer[range])
                chunk.withUnsafeMutableBytes { FrameWriter.applyMask(key, to: $0) }
                return .payload(chunk[...])
            }
            // These bytes are read once, so they are unmasked where they lie.
            buffer.withUnsafeMutableBytes { FrameWriter.applyMask(key, to: UnsafeMutableRawBufferPointer(rebasing: $0[range])) }
            return .payload(buffer[range])
        }
        guard let header = try parseHeader() else { return nil }
        inPayload = true
        remaining = header.payloadLength
        maskKey = header.maskKey
        maskOffset = 0
        return .header(header)
    }

    private mutating func parseHeader() throws(WebSocketError) -> FrameHeader? {
        let available = buffer.count - readIndex
        guard available >= 2 else { return nil }
        let first = buffer[readIndex]
        let second = buffer[readIndex + 1]
        let masked = second & 0x80 != 0
        var length = UInt64(second & 0x7F)
        var headerSize = 2
        if length == 126 { headerSize += 2 } else if length == 127 { headerSize += 8 }
        if masked { headerSize += 4 }
        guard available >= headerSize else { return nil }

        let reserved = (first >> 4) & 0x7
        guard reserved == 0 else { throw .protocolViolation(code: .protocolError, reason: "reserved bits set without an extension") }
        guard let opcode = WebSocketOpcode(rawValue: first & 0x0F) else {
            throw .protocolViolation(code: .protocolError, reason: "reserved opcode \(first & 0x0F)")
        }
        let fin = first & 0x80 != 0
        var offset = readIndex + 2
        if length == 126 {
            length = UInt64(buffer[offset]) << 8 | UInt64(buffer[offset + 1])
            offset += 2
        } else if length == 127 {
            length = 0
            for index in 0..<8 { length = length << 8 | UInt64(buffer[offset + index]) }
            offset += 8
            guard length >> 63 == 0 else { throw .protocolViolation(code: .protocolError, reason: "64-bit length with the top bit set") }
        }
        if opcode.isControl {
            guard fin else { throw .protocolViolation(code: .protocolError, reason: "fragmented control frame") }
            guard length <= 125 else { throw .protocolViolation(code: .protocolError, reason: "control frame over 125 bytes") }
        }
        guard masked == expectMasked else {
            throw .protocolViolation(code: .protocolError, reason: masked ? "masked frame from the server" : "unmasked frame from the client")
        }
        guard length <= maximumFrameSize else {
            throw .protocolViolation(code: .messageTooBig, reason: "frame of \(length) bytes exceeds the limit of \(maximumFrameSize)")
        }
        var key: UInt32?
        if masked {
            key = buffer.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: UInt32.self) }
            offset += 4
        }
        readIndex = offset
        return FrameHeader(fin: fin, reserved: reserved, opcode: opcode, maskKey: key, payloadLength: length)
    }
}
