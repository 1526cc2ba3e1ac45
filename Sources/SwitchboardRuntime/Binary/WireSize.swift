/// Byte counts of wire-format encodings, used by the size pass that precedes every write.
public enum WireSize {
    /// The encoded size of a varint.
    @inlinable
    public static func varint(_ value: UInt64) -> Int {
        // Most varints (enums, small counts, lengths) are one byte: one compare first.
        if value < 0x80 { return 1 }
        // 1 + floor(bits / 7), where bits is the index of the highest set bit.
        let bits = 64 - value.leadingZeroBitCount
        return (bits + 6) / 7
    }

    /// The encoded size of a 32-bit varint.
    @inlinable
    public static func varint(_ value: UInt32) -> Int {
        if value < 0x80 { return 1 }
        let bits = 32 - value.leadingZeroBitCount
        return (bits + 6) / 7
    }

    /// The size of a length prefix plus `length` payload bytes.
    @inlinable
    public static func lengthDelimited(_ length: Int) -> Int {
        // Most strings, bytes and nested messages are under 128 bytes: one compare instead
        // of the bit count and the division by seven.
        if UInt(bitPattern: length) < 0x80 { return length &+ 1 }
        let bits = 64 - UInt64(truncatingIfNeeded: length).leadingZeroBitCount
        return (bits + 6) / 7 + length
    }
}

extension Int {
    /// Whether the value is zero; generated code uses it instead of `== 0`, which is
    /// slower to type-check in modules with many `Equatable` types.
    @inlinable
    public var isZero: Bool { self == 0 }
}
