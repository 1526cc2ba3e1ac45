import Foundation

/// Writes protobuf wire format into a buffer whose exact size was computed beforehand.
///
/// Messages run a size pass first (`serializedSize()`), allocate once, then write.
/// The writer therefore never grows or checks capacity on the hot path; a final
/// check in ``ProtoMessage/serializedBytes()`` verifies the size pass agreed.
public struct WireWriter {
    @usableFromInline var cursor: UnsafeMutableRawPointer
    @usableFromInline let start: UnsafeMutableRawPointer

    /// Creates a writer over memory with at least as many bytes as will be written.
    @inlinable
    public init(unsafeStart start: UnsafeMutableRawPointer) {
        self.start = start
        self.cursor = start
    }

    /// The number of bytes written so far.
    @inlinable
    public var bytesWritten: Int { cursor - start }

    /// Writes one byte.
    @inlinable
    public mutating func writeByte(_ byte: UInt8) {
        cursor.storeBytes(of: byte, as: UInt8.self)
        cursor += 1
    }

    /// Writes a precomputed tag. Generated code passes the tag's varint as constant bytes.
    @inlinable
    public mutating func writeTag(_ rawTag: UInt32) {
        writeVarint(rawTag)
    }

    /// Writes `value` as a base-128 varint, low seven bits first.
    @inlinable
    public mutating func writeVarint(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            writeByte(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        writeByte(UInt8(truncatingIfNeeded: value))
    }

    /// Writes a length prefix: `length` as a varint.
    @inlinable
    public mutating func writeLength(_ length: Int) {
        writeVarint(UInt64(truncatingIfNeeded: length))
    }

    /// Writes `value` as a varint without widening it to 64 bits first.
    @inlinable
    public mutating func writeVarint(_ value: UInt32) {
        var value = value
        while value >= 0x80 {
            writeByte(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        writeByte(UInt8(truncatingIfNeeded: value))
    }

    /// Writes `value` as four little-endian bytes.
    @inlinable
    public mutating func writeFixed32(_ value: UInt32) {
        cursor.storeBytes(of: value.littleEndian, as: UInt32.self)
        cursor += 4
    }

    /// Writes `value` as eight little-endian bytes.
    @inlinable
    public mutating func writeFixed64(_ value: UInt64) {
        cursor.storeBytes(of: value.littleEndian, as: UInt64.self)
        cursor += 8
    }

    /// Copies `bytes` as they are, without a length prefix.
    @inlinable @inline(__always)
    public mutating func writeRawBytes(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress else { return }
        let count = bytes.count
        if count <= 64 {
            Self.copyShort(from: UnsafeRawPointer(base), to: cursor, count: count)
        } else {
            cursor.copyMemory(from: base, byteCount: count)
        }
        cursor += count
    }

    /// Copies up to 64 bytes with at most eight loads and stores, overlapping in the middle.
    /// Strings and header values are mostly this short, and a call to `memcpy` costs more
    /// than the copy itself there.
    @inlinable @inline(__always)
    static func copyShort(from source: UnsafeRawPointer, to destination: UnsafeMutableRawPointer, count: Int) {
        if count > 32 {
            let a = source.loadUnaligned(as: SIMD16<UInt8>.self)
            let b = source.loadUnaligned(fromByteOffset: 16, as: SIMD16<UInt8>.self)
            let c = source.loadUnaligned(fromByteOffset: count - 32, as: SIMD16<UInt8>.self)
            let d = source.loadUnaligned(fromByteOffset: count - 16, as: SIMD16<UInt8>.self)
            destination.storeBytes(of: a, as: SIMD16<UInt8>.self)
            destination.storeBytes(of: b, toByteOffset: 16, as: SIMD16<UInt8>.self)
            destination.storeBytes(of: c, toByteOffset: count - 32, as: SIMD16<UInt8>.self)
            destination.storeBytes(of: d, toByteOffset: count - 16, as: SIMD16<UInt8>.self)
        } else if count >= 8 {
            if count > 16 {
                let a = source.loadUnaligned(as: UInt64.self)
                let b = source.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
                let c = source.loadUnaligned(fromByteOffset: count - 16, as: UInt64.self)
                let d = source.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
                destination.storeBytes(of: a, as: UInt64.self)
                destination.storeBytes(of: b, toByteOffset: 8, as: UInt64.self)
                destination.storeBytes(of: c, toByteOffset: count - 16, as: UInt64.self)
                destination.storeBytes(of: d, toByteOffset: count - 8, as: UInt64.self)
            } else {
                let a = source.loadUnaligned(as: UInt64.self)
                let b = source.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
                destination.storeBytes(of: a, as: UInt64.self)
                destination.storeBytes(of: b, toByteOffset: count - 8, as: UInt64.self)
            }
        } else if count >= 4 {
            let a = source.loadUnaligned(as: UInt32.self)
            let b = source.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self)
            destination.storeBytes(of: a, as: UInt32.self)
            destination.storeBytes(of: b, toByteOffset: count - 4, as: UInt32.self)
        } else if count > 0 {
            // 1, 2 or 3 bytes: first, middle and last (some the same byte).
            let first = source.load(as: UInt8.self)
            let middle = source.load(fromByteOffset: count >> 1, as: UInt8.self)
            let last = source.load(fromByteOffset: count - 1, as: UInt8.self)
            destination.storeBytes(of: first, as: UInt8.self)
            destination.storeBytes(of: middle, toByteOffset: count >> 1, as: UInt8.self)
            destination.storeBytes(of: last, toByteOffset: count - 1, as: UInt8.self)
        }
    }

    /// Writes a length prefix and the string's UTF-8 bytes.
    ///
    /// Always inlined: called out of line from another module, the caller had to retain a
    /// string read from a list's storage around the call (and release it after), which cost
    /// more than the copy of a short string.
    @inlinable @inline(__always)
    public mutating func writeString(_ value: String) {
        // Borrow the contiguous storage (`withUTF8` would need a mutable copy), and take the
        // count from it: asking the view for its count tests the string's form a second time.
        let copied: Void? = value.utf8.withContiguousStorageIfAvailable { utf8 in
            writeVarint(UInt64(truncatingIfNeeded: utf8.count))
            writeRawBytes(UnsafeRawBufferPointer(utf8))
        }
        if copied == nil { writeNonContiguousUTF8(value.utf8) }
    }

    /// A bridged string without contiguous UTF-8, kept out of line so that every inlined
    /// string write stays small (a large caller stops having its calls inlined).
    @inlinable @inline(never)
    mutating func writeNonContiguousUTF8(_ utf8: String.UTF8View) {
        writeVarint(UInt64(truncatingIfNeeded: utf8.count))
        for byte in utf8 { writeByte(byte) }
    }

    /// Writes a length prefix and the bytes.
    @inlinable
    public mutating func writeBytes(_ value: Data) {
        // One access to the storage: each of `count` and `withUnsafeBytes` pays an
        // exclusivity check on `Data`'s class storage.
        value.withUnsafeBytes { bytes in
            writeVarint(UInt64(truncatingIfNeeded: bytes.count))
            writeRawBytes(bytes)
        }
    }

    /// Writes `message` with its length prefix, without asking the message for its size.
    ///
    /// The size pass has already counted the message, so asking again would walk it a second
    /// time (at every level of nesting). One byte is set aside for the prefix and fixed once
    /// the message is written; a message of 128 bytes or more moves up by the prefix's extra
    /// bytes, a `memmove` far cheaper than a size pass. The message never writes beyond where
    /// its final layout ends, so a buffer sized by the size pass still suffices.
    @inlinable
    public mutating func writeLengthDelimited<Message: ProtoMessage>(_ message: Message) {
        let prefixStart = beginLengthPrefix()
        message.serialize(into: &self)
        endLengthPrefix(startingAt: prefixStart)
    }

    /// Sets one byte aside for the length prefix of what is written next, and returns where
    /// it starts, for ``endLengthPrefix(startingAt:)`` once that is written. The pair writes a
    /// length-delimited payload (a message, a map entry) without a size pass of its own.
    @inlinable @inline(__always)
    mutating func beginLengthPrefix() -> UnsafeMutableRawPointer {
        let prefixStart = cursor
        cursor += 1
        return prefixStart
    }

    /// Fixes the prefix set aside at `prefixStart` to the length of what was written since:
    /// a payload of 128 bytes or more moves up by the prefix's extra bytes (`memmove`), which
    /// never writes beyond where its final layout ends.
    @inlinable @inline(__always)
    mutating func endLengthPrefix(startingAt prefixStart: UnsafeMutableRawPointer) {
        let length = cursor - prefixStart - 1
        if length < 0x80 {
            prefixStart.storeBytes(of: UInt8(truncatingIfNeeded: length), as: UInt8.self)
            return
        }
        let prefixSize = WireSize.varint(UInt64(truncatingIfNeeded: length))
        // Overlapping regions: `copyMemory` moves like `memmove`.
        (prefixStart + prefixSize).copyMemory(from: prefixStart + 1, byteCount: length)
        var prefix = WireWriter(unsafeStart: prefixStart)
        prefix.writeLength(length)
        cursor = prefixStart + prefixSize + length
    }

    /// Writes raw bytes kept from an earlier decode.
    @inlinable
    public mutating func writeRawBytes(_ value: [UInt8]) {
        value.withUnsafeBytes { writeRawBytes($0) }
    }
}
