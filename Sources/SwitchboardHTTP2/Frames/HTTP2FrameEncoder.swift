/// Writes HTTP/2 frames into a byte buffer. Sizes are known before writing, so each frame
/// is appended in one pass with its capacity reserved. Padding is never written.
public enum HTTP2FrameEncoder {
    /// Appends `frame`. The caller keeps it within the peer's MAX_FRAME_SIZE (see
    /// ``writeHeaderBlock(_:streamID:endStream:maxFrameSize:into:)`` for header blocks).
    public static func write(_ frame: HTTP2Frame, into output: inout [UInt8]) {
        let stream = frame.streamID
        switch frame.payload {
        case let .data(bytes, endStream, _):
            writeData(bytes[...], streamID: stream, endStream: endStream, into: &output)
        case let .headers(fragment, endStream, endHeaders):
            var flags: UInt8 = endStream ? HTTP2FrameFlags.endStream : 0
            if endHeaders { flags |= HTTP2FrameFlags.endHeaders }
            writeHeader(length: fragment.count, type: .headers, flags: flags, streamID: stream, into: &output)
            output.append(contentsOf: fragment)
        case .priority:
            // A dependency on stream 0 with the default weight: says nothing, as intended.
            writeHeader(length: 5, type: .priority, flags: 0, streamID: stream, into: &output)
            appendUInt32(0, to: &output)
            output.append(15)
        case let .rstStream(code):
            writeRSTStream(code, streamID: stream, into: &output)
        case let .settings(settings, ack):
            writeHeader(length: ack ? 0 : settings.count * 6, type: .settings, flags: ack ? HTTP2FrameFlags.ack : 0, streamID: stream, into: &output)
            guard !ack else { return }
            for setting in settings {
                output.append(UInt8(setting.id.rawValue >> 8))
                output.append(UInt8(truncatingIfNeeded: setting.id.rawValue))
                appendUInt32(setting.value, to: &output)
            }
        case let .pushPromise(promised, fragment, endHeaders):
            writeHeader(length: 4 + fragment.count, type: .pushPromise, flags: endHeaders ? HTTP2FrameFlags.endHeaders : 0, streamID: stream, into: &output)
            appendUInt32(promised & 0x7fff_ffff, to: &output)
            output.append(contentsOf: fragment)
        case let .ping(opaque, ack):
            writePing(opaque, ack: ack, into: &output)
        case let .goAway(lastStreamID, code, debugData):
            writeHeader(length: 8 + debugData.count, type: .goAway, flags: 0, streamID: stream, into: &output)
            appendUInt32(lastStreamID & 0x7fff_ffff, to: &output)
            appendUInt32(code.rawValue, to: &output)
            output.append(contentsOf: debugData)
        case let .windowUpdate(increment):
            writeWindowUpdate(increment, streamID: stream, into: &output)
        case let .continuation(fragment, endHeaders):
            writeHeader(length: fragment.count, type: .continuation, flags: endHeaders ? HTTP2FrameFlags.endHeaders : 0, streamID: stream, into: &output)
            output.append(contentsOf: fragment)
        case let .unknown(type, length):
            writeHeader(length: length, type: HTTP2FrameType(rawValue: type), flags: 0, streamID: stream, into: &output)
            output.append(contentsOf: repeatElement(0, count: length))
        }
    }

    /// Appends a header block as one HEADERS frame and as many CONTINUATION frames as
    /// `maxFrameSize` needs, all back to back as RFC 9113 §4.3 requires.
    public static func writeHeaderBlock(_ block: [UInt8], streamID: UInt32, endStream: Bool, maxFrameSize: Int, into output: inout [UInt8]) {
        let limit = max(1, maxFrameSize)
        output.reserveGrowing(block.count + (block.count / limit + 1) * HTTP2FrameLimits.headerLength)
        var offset = 0
        var first = true
        repeat {
            let end = min(block.count, offset + limit)
            var flags: UInt8 = end == block.count ? HTTP2FrameFlags.endHeaders : 0
            if first, endStream { flags |= HTTP2FrameFlags.endStream }
            writeHeader(length: end - offset, type: first ? .headers : .continuation, flags: flags, streamID: streamID, into: &output)
            output.append(contentsOf: block[offset..<end])
            offset = end
            first = false
        } while offset < block.count
    }

    /// Appends the header block `encode` writes, as ``writeHeaderBlock(_:streamID:endStream:maxFrameSize:into:)``
    /// does, but encoded straight into `output` behind a frame header that is filled in
    /// after: a block that fits one frame (almost every one) needs no buffer of its own.
    public static func writeHeaderBlock(streamID: UInt32, endStream: Bool, maxFrameSize: Int, into output: inout [UInt8],
                                        encode: (inout [UInt8]) -> Void) {
        let frameStart = output.count
        writeHeader(length: 0, type: .headers, flags: 0, streamID: streamID, into: &output)
        let blockStart = output.count
        encode(&output)
        let length = output.count - blockStart
        guard length <= max(1, maxFrameSize) else {
            let block = Array(output[blockStart...])
            output.removeSubrange(frameStart...)
            writeHeaderBlock(block, streamID: streamID, endStream: endStream, maxFrameSize: maxFrameSize, into: &output)
            return
        }
        output.withUnsafeMutableBufferPointer { frame in
            frame[frameStart] = UInt8(truncatingIfNeeded: length >> 16)
            frame[frameStart + 1] = UInt8(truncatingIfNeeded: length >> 8)
            frame[frameStart + 2] = UInt8(truncatingIfNeeded: length)
            frame[frameStart + 4] = HTTP2FrameFlags.endHeaders | (endStream ? HTTP2FrameFlags.endStream : 0)
        }
    }

    /// Appends one DATA frame; the caller keeps `bytes` within the peer's MAX_FRAME_SIZE and windows.
    public static func writeData(_ bytes: ArraySlice<UInt8>, streamID: UInt32, endStream: Bool, into output: inout [UInt8]) {
        output.reserveGrowing(HTTP2FrameLimits.headerLength + bytes.count)
        writeHeader(length: bytes.count, type: .data, flags: endStream ? HTTP2FrameFlags.endStream : 0, streamID: streamID, into: &output)
        output.append(contentsOf: bytes)
    }

    /// Appends RST_STREAM.
    public static func writeRSTStream(_ code: HTTP2ErrorCode, streamID: UInt32, into output: inout [UInt8]) {
        writeHeader(length: 4, type: .rstStream, flags: 0, streamID: streamID, into: &output)
        appendUInt32(code.rawValue, to: &output)
    }

    /// Appends PING or its acknowledgement.
    public static func writePing(_ opaque: UInt64, ack: Bool, into output: inout [UInt8]) {
        writeHeader(length: 8, type: .ping, flags: ack ? HTTP2FrameFlags.ack : 0, streamID: 0, into: &output)
        appendUInt32(UInt32(truncatingIfNeeded: opaque >> 32), to: &output)
        appendUInt32(UInt32(truncatingIfNeeded: opaque), to: &output)
    }

    /// Appends WINDOW_UPDATE.
    public static func writeWindowUpdate(_ increment: UInt32, streamID: UInt32, into output: inout [UInt8]) {
        writeHeader(length: 4, type: .windowUpdate, flags: 0, streamID: streamID, into: &output)
        appendUInt32(increment & 0x7fff_ffff, to: &output)
    }

    /// Appends a frame header: 24-bit length, type, flags, 31-bit stream id.
    public static func writeHeader(length: Int, type: HTTP2FrameType, flags: UInt8, streamID: UInt32, into output: inout [UInt8]) {
        output.append(UInt8(truncatingIfNeeded: length >> 16))
        output.append(UInt8(truncatingIfNeeded: length >> 8))
        output.append(UInt8(truncatingIfNeeded: length))
        output.append(type.rawValue)
        output.append(flags)
        appendUInt32(streamID & 0x7fff_ffff, to: &output)
    }

    private static func appendUInt32(_ value: UInt32, to output: inout [UInt8]) {
        output.append(UInt8(truncatingIfNeeded: value >> 24))
        output.append(UInt8(truncatingIfNeeded: value >> 16))
        output.append(UInt8(truncatingIfNeeded: value >> 8))
        output.append(UInt8(truncatingIfNeeded: value))
    }
}
