/// An open enumeration generated from a schema `enum`.
///
/// Values unknown to this version of the schema decode to an `unrecognized`
/// case that keeps the number, so decoding and re-encoding loses nothing.
public protocol ProtoEnum: Sendable, Hashable, RawRepresentable, ParameterValue where RawValue == Int32 {
    /// The value for `rawValue`; numbers the schema does not name become `unrecognized`.
    init(rawValue: Int32)
    /// The zero value, protobuf's default.
    init()
    /// The schema name of this value, written by the JSON codec; `nil` when unrecognized.
    var protoName: StaticString? { get }
    /// The value whose schema name is `name`, or `nil`.
    init?(protoName name: JSONName)
    /// Whether this is `google.protobuf.NullValue`, which JSON writes and reads as `null`.
    static var isProtobufNullValue: Bool { get }
}

extension ProtoEnum {
    @inlinable
    public static var isProtobufNullValue: Bool { false }

    /// Enums compare by number, so `.unrecognized(0)` equals the zero case.
    @inlinable
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.rawValue == rhs.rawValue }

    @inlinable
    public func hash(into hasher: inout Hasher) { hasher.combine(rawValue) }
}
