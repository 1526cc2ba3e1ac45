/// Byte counts of wire-format encodings, used by the size pass that precedes every write.
public enum WireSize {
    /// The encoded size of a varint.
    @inlinable
    public static func varint(_ value: UInt64) -> Int {
        // 1 + floor(bits / 7), where bits is the index of the highest set bit.
        let bits = 64 - (value | 1).leadingZeroBitCount
        return (bits + 6) / 7
    }

    /// The encoded size of a 32-bit varint.
    @inlinable
    public static func varint(_ value: UInt32) -> Int {
        let bits = 32 - (value | 1).leadingZeroBitCount
        return (bits + 6) / 7
    }

    /// The size of a length prefix plus `length` payload bytes.
    @inlinable
    public static func lengthDelimited(_ length: Int) -> Int {
        varint(UInt64(truncatingIfNeeded: length)) + length
    }
}

extension Int {
    /// Whether the value is zero; generated code uses it instead of `== 0`, which is
    /// slower to type-check in modules with many `Equatable` types.
    @inlinable
    public var isZero: Bool { self == 0 }
}
