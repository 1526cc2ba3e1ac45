/// ZigZag encoding maps signed integers to unsigned so small magnitudes stay short varints.
public enum ZigZag {
    /// Encodes a `sint32`: 0, -1, 1, -2 become 0, 1, 2, 3.
    @inlinable
    public static func encode(_ value: Int32) -> UInt32 {
        UInt32(bitPattern: (value << 1) ^ (value >> 31))
    }

    /// Encodes a `sint64`: 0, -1, 1, -2 become 0, 1, 2, 3.
    @inlinable
    public static func encode(_ value: Int64) -> UInt64 {
        UInt64(bitPattern: (value << 1) ^ (value >> 63))
    }

    /// Decodes a `sint32`, undoing `encode(_:)`.
    @inlinable
    public static func decode(_ value: UInt32) -> Int32 {
        Int32(bitPattern: (value >> 1) ^ (0 &- (value & 1)))
    }

    /// Decodes a `sint64`, undoing `encode(_:)`.
    @inlinable
    public static func decode(_ value: UInt64) -> Int64 {
        Int64(bitPattern: (value >> 1) ^ (0 &- (value & 1)))
    }
}
