import Foundation
import SwitchboardIO
import SwitchboardRuntime

/// gRPC's length-prefixed messages: a compression flag byte, a 4-byte big-endian length, then
/// the message. Compression is not offered (no `grpc-accept-encoding`), so a compressed
/// message is a protocol error.
public enum GRPCMessageFramer {
    /// `message` with its 5-byte prefix.
    public static func frame(_ message: [UInt8]) -> [UInt8] {
        var framed: [UInt8] = []
        framed.reserveCapacity(5 + message.count)
        appendPrefix(length: message.count, to: &framed)
        framed += message
        return framed
    }

    /// `message` with its 5-byte prefix, copied once from `Data`.
    public static func frame(_ message: Data) -> [UInt8] {
        // Every byte is written below. `withUnsafeBytes` and a copy, not `copyBytes(to:)`:
        // that goes through `DataProtocol`'s generic path, about 3,000 instructions of
        // metadata lookups and region iteration for one `memcpy`.
        message.withUnsafeBytes { bytes in
            var framed = UnfilledByteArray.make(count: 5 + bytes.count)
            framed.withUnsafeMutableBytes { buffer in
                writePrefix(length: bytes.count, into: buffer)
                if let base = bytes.baseAddress, bytes.count > 0 { (buffer.baseAddress! + 5).copyMemory(from: base, byteCount: bytes.count) }
            }
            return framed
        }
    }

    private static func writePrefix(length: Int, into buffer: UnsafeMutableRawBufferPointer) {
        let length = UInt32(truncatingIfNeeded: length)
        buffer[0] = 0
        buffer[1] = UInt8(length >> 24)
        buffer[2] = UInt8(truncatingIfNeeded: length >> 16)
        buffer[3] = UInt8(truncatingIfNeeded: length >> 8)
        buffer[4] = UInt8(truncatingIfNeeded: length)
    }

    /// `message` (of `size` bytes, its `serializedSize()`) encoded behind its 5-byte prefix,
    /// in one buffer: no copy of the encoded message.
    public static func frame(_ message: some ProtoMessage, size: Int) -> [UInt8] {
        // Every byte is written below: the prefix, then the message (its size checked).
        var framed = UnfilledByteArray.make(count: 5 + size)
        framed.withUnsafeMutableBytes { buffer in
            writePrefix(length: size, into: buffer)
            var writer = WireWriter(unsafeStart: buffer.baseAddress! + 5)
            message.serialize(into: &writer)
            precondition(writer.bytesWritten == size, "size pass disagreed with write pass")
        }
        return framed
    }

    /// Appends the prefix of an uncompressed message of `length` bytes.
    public static func appendPrefix(length: Int, to output: inout [UInt8]) {
        let length = UInt32(truncatingIfNeeded: length)
        output.append(0)
        output.append(UInt8(length >> 24))
        output.append(UInt8(truncatingIfNeeded: length >> 16))
        output.append(UInt8(truncatingIfNeeded: length >> 8))
        output.append(UInt8(truncatingIfNeeded: length))
    }
}

/// Why a peer's message stream could not be read.
public enum GRPCFramingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A message longer than the receiver's maximum (RESOURCE_EXHAUSTED).
    case messageTooLarge(length: Int, maximum: Int)
    /// A compressed message although no compression was offered (INTERNAL).
    case unexpectedCompression
    /// The stream ended inside a message (INTERNAL).
    case truncated(missing: Int)
    /// A second message where a unary call carries one (INTERNAL).
    case tooManyMessages

    public var description: String {
        switch self {
        case let .messageTooLarge(length, maximum): "a message of \(length) bytes exceeds the maximum of \(maximum)"
        case .unexpectedCompression: "a compressed message, but no compression was offered"
        case let .truncated(missing): "the stream ended \(missing) bytes short of a whole message"
        case .tooManyMessages: "more than one message on a unary call"
        }
    }

    /// The status a receiver answers this with.
    public var code: GRPCStatusCode {
        if case .messageTooLarge = self { return .resourceExhausted }
        return .internal
    }
}

/// Collects DATA bytes into whole messages, checking each length against `maximumMessageSize`
/// before buffering it, so a peer cannot make it allocate from an unchecked length.
public struct GRPCMessageDeframer: Sendable {
    /// The largest message accepted.
    public let maximumMessageSize: Int
    /// Bytes not yet returned as messages. While `ownsBuffer` is false it is a slice of the
    /// DATA bytes last given (the connection's read buffer), never kept past `append`.
    private var buffer: ArraySlice<UInt8> = []
    private var ownsBuffer = true

    /// A deframer for one stream.
    public init(maximumMessageSize: Int) { self.maximumMessageSize = maximumMessageSize }

    /// Adds bytes and returns the messages they complete.
    public mutating func append(_ bytes: ArraySlice<UInt8>) throws(GRPCFramingError) -> [[UInt8]] {
        var messages: [[UInt8]] = []
        try append(bytes) { (message: ArraySlice<UInt8>) throws(GRPCFramingError) in messages.append(Array(message)) }
        return messages
    }

    /// Adds bytes from an array and returns the messages they complete.
    public mutating func append(_ bytes: [UInt8]) throws(GRPCFramingError) -> [[UInt8]] {
        try append(bytes[...])
    }

    /// Adds bytes from an array, handing `body` each message they complete.
    public mutating func append(_ bytes: [UInt8], each body: (ArraySlice<UInt8>) throws(GRPCFramingError) -> Void) throws(GRPCFramingError) {
        try append(bytes[...], each: body)
    }

    /// Adds bytes and hands `body` each message they complete, in order, as a slice of the
    /// bytes received: a message that arrived in one DATA frame (nearly every unary one) is
    /// never copied here. A slice of `bytes` is valid as long as `bytes` is; the deframer
    /// itself keeps none of them once it returns.
    public mutating func append(_ bytes: ArraySlice<UInt8>, each body: (ArraySlice<UInt8>) throws(GRPCFramingError) -> Void) throws(GRPCFramingError) {
        if buffer.isEmpty {
            // Nothing is left over (the usual case: a message per DATA frame), so the frame's
            // bytes are read where they are.
            buffer = bytes
            ownsBuffer = false
        } else {
            // Copies what is left (and only that) when the storage is shared.
            buffer += bytes
        }
        defer {
            if buffer.isEmpty {
                buffer = []
                ownsBuffer = true
            } else if !ownsBuffer {
                // A partial message waits for the next DATA frame in storage of its own.
                buffer = ArraySlice(Array(buffer))
                ownsBuffer = true
            }
        }
        while buffer.count >= 5 {
            let start = buffer.startIndex
            guard buffer[start] == 0 else { throw .unexpectedCompression }
            let length = Int(buffer[start + 1]) << 24 | Int(buffer[start + 2]) << 16 | Int(buffer[start + 3]) << 8 | Int(buffer[start + 4])
            guard length <= maximumMessageSize else { throw .messageTooLarge(length: length, maximum: maximumMessageSize) }
            guard buffer.count - 5 >= length else { break }
            let message = buffer[start + 5..<start + 5 + length]
            buffer = buffer[(start + 5 + length)...]
            try body(message)
        }
    }

    /// Checks that the stream ended between messages.
    public func finish() throws(GRPCFramingError) {
        let left = buffer.count
        guard left == 0 else {
            let start = buffer.startIndex
            let length = left >= 5 ? Int(buffer[start + 1]) << 24 | Int(buffer[start + 2]) << 16 | Int(buffer[start + 3]) << 8 | Int(buffer[start + 4]) : 0
            throw .truncated(missing: max(1, 5 + length - left))
        }
    }
}
