/// The protobuf wire type carried in the low three bits of every field tag.
public enum WireType: UInt8, Sendable, Hashable {
    /// A base-128 varint: the `int`, `uint` and `sint` types, `bool` and enums.
    case varint = 0
    /// Eight little-endian bytes: `fixed64`, `sfixed64` and `double`.
    case fixed64 = 1
    /// A varint length, then that many bytes: strings, bytes, messages and packed lists.
    case lengthDelimited = 2
    /// Opens a group, a deprecated encoding that is only skipped.
    case startGroup = 3
    /// Closes the group opened with the same field number.
    case endGroup = 4
    /// Four little-endian bytes: `fixed32`, `sfixed32` and `float`.
    case fixed32 = 5
}

/// A decoded field tag: `fieldNumber << 3 | wireType`.
///
/// Generated decoders switch on ``rawValue`` directly, so a field number and wire
/// type are matched with a single integer comparison.
public struct WireTag: Sendable, Hashable {
    /// The tag as it appears on the wire, before varint encoding.
    public let rawValue: UInt32

    @inlinable
    init(uncheckedRawValue: UInt32) { rawValue = uncheckedRawValue }

    /// Builds a tag from a field number and wire type.
    @inlinable
    public init(fieldNumber: Int, wireType: WireType) {
        rawValue = UInt32(truncatingIfNeeded: fieldNumber) << 3 | UInt32(wireType.rawValue)
    }

    /// The field number (the schema's key).
    @inlinable
    public var fieldNumber: Int { Int(rawValue >> 3) }

    /// The wire type; always valid because ``WireReader`` rejects types 6 and 7.
    @inlinable
    public var wireType: WireType { WireType(rawValue: UInt8(rawValue & 7)) ?? .varint }
}

/// Limits of the protobuf wire format.
public enum WireLimits {
    /// The largest legal field number, 2^29 - 1.
    public static let maximumFieldNumber = 536_870_911
    /// Field numbers protobuf reserves for its own implementation.
    public static let reservedFieldNumbers = 19_000...19_999
}
