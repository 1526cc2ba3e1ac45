/// Why binary (protobuf wire format) input could not be decoded.
///
/// Every malformed input maps to one of these cases; decoding never traps.
public enum WireDecodingError: Error, Sendable, Hashable {
    /// The input ended in the middle of a value.
    case truncated
    /// A varint ran past 10 bytes or overflowed 64 bits.
    case malformedVarint
    /// A length prefix points past the end of the enclosing input.
    case lengthExceedsInput(length: UInt64, remaining: Int)
    /// A tag carried wire type 6 or 7, which protobuf does not define.
    case invalidWireType(UInt8)
    /// A tag carried field number 0 or one above 2^29 - 1.
    case invalidFieldNumber(UInt64)
    /// Two keys of one map that differ in bytes but are one Swift `String` (canonically
    /// equivalent, as `"é"` and `"e\u{301}"`): a map cannot keep both, so the decode fails
    /// rather than lose one.
    case equivalentMapKeys(key: String)
    /// A string field held bytes that are not valid UTF-8.
    case invalidUTF8(field: Int)
    /// Messages or groups nested deeper than ``WireDecodingOptions/maximumDepth``.
    case nestingTooDeep(limit: Int)
    /// An end-group tag without a matching start group, or with another field number.
    case mismatchedGroup(field: Int)
}

extension WireDecodingError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .truncated:
            return "input ended in the middle of a value"
        case .malformedVarint:
            return "malformed varint (longer than 10 bytes or over 64 bits)"
        case let .lengthExceedsInput(length, remaining):
            return "length prefix \(length) exceeds the \(remaining) bytes that remain"
        case let .invalidWireType(type):
            return "invalid wire type \(type)"
        case let .invalidFieldNumber(number):
            return "invalid field number \(number)"
        case let .equivalentMapKeys(key):
            return "map keys that differ in bytes but are equal as Swift strings (\(key.utf8.count) bytes)"
        case let .invalidUTF8(field):
            return "field \(field) is not valid UTF-8"
        case let .nestingTooDeep(limit):
            return "messages nested deeper than the limit of \(limit)"
        case let .mismatchedGroup(field):
            return "mismatched end-group tag for field \(field)"
        }
    }
}
