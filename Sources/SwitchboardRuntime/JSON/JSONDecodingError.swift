/// Why JSON input could not be decoded. Offsets count bytes from the start of the input.
public enum JSONDecodingError: Error, Sendable, Hashable {
    /// The input ended before the value was complete.
    case unexpectedEnd
    /// A character that cannot start or continue the expected token.
    case unexpectedCharacter(offset: Int, expected: String)
    /// A number that is malformed or does not fit the field's type.
    case invalidNumber(offset: Int)
    /// A string with a bad escape, a raw control character or invalid UTF-8.
    case invalidString(offset: Int)
    /// A map key that does not spell a value of the map's key type (an integer or a bool).
    case invalidMapKey(offset: Int, key: String)
    /// A bytes field whose text is not base64.
    case invalidBase64(offset: Int)
    /// A timestamp that is not RFC 3339 or is out of protobuf's range.
    case invalidTimestamp(offset: Int)
    /// A member the message does not define (see ``JSONDecodingOptions/ignoreUnknownFields``).
    case unknownField(message: String, name: String)
    /// An enum name the schema does not define (see ``JSONDecodingOptions/ignoreUnknownFields``).
    case unknownEnumName(enum: String, name: String)
    /// Objects or arrays nested deeper than ``JSONDecodingOptions/maximumDepth``.
    case nestingTooDeep(limit: Int)
    /// Non-whitespace after the top-level value.
    case trailingCharacters(offset: Int)
    /// Two keys of one map that differ in bytes but are one Swift `String` (see
    /// ``WireDecodingError/equivalentMapKeys(key:)``).
    case equivalentMapKeys(offset: Int, key: String)
    /// `null` as a list element or a map value, where protobuf has no null.
    case nullInContainer(offset: Int)
    /// A map's JSON object names one key twice.
    case duplicateMapKey(offset: Int, key: String)
    /// A member named twice in one object (by either of its names).
    case duplicateField(message: String, name: String)
    /// A second member of one oneof with a value (a `null` member does not count).
    case oneofConflict(message: String, name: String)
    /// A `google.protobuf.Duration` that is not `[-]seconds[.fraction]s` or is out of range.
    case invalidDuration(offset: Int)
    /// A `google.protobuf.FieldMask` path that is not lowerCamelCase (`_` is not allowed).
    case invalidFieldMask(offset: Int)
    /// A `google.protobuf.Any` whose object lacks `"@type"`, or whose type URL names no type
    /// the ``AnyTypeRegistry`` knows.
    case invalidAny(offset: Int, reason: String)
}

extension JSONDecodingError: CustomStringConvertible {
    /// Says what is wrong and where. It quotes no map key (a key can be a phone number or a
    /// token, and these texts end up in logs; the key stays in the case's value for code
    /// that wants it) and at most 64 characters of a member or enum name.
    public var description: String {
        switch self {
        case .unexpectedEnd: return "JSON ended unexpectedly"
        case let .unexpectedCharacter(offset, expected): return "unexpected character at byte \(offset); expected \(expected)"
        case let .invalidNumber(offset): return "invalid or out-of-range number at byte \(offset)"
        case let .invalidMapKey(offset, key): return "map key near byte \(offset) (\(key.utf8.count) bytes) is not of the map's key type"
        case let .invalidString(offset): return "invalid string at byte \(offset)"
        case let .invalidBase64(offset): return "invalid base64 at byte \(offset)"
        case let .invalidTimestamp(offset): return "invalid RFC 3339 timestamp at byte \(offset)"
        case let .unknownField(message, name): return "unknown field '\(LogRedaction.excerpt(name))' in \(message)"
        case let .unknownEnumName(enumName, name): return "unknown value '\(LogRedaction.excerpt(name))' for enum \(enumName)"
        case let .nestingTooDeep(limit): return "JSON nested deeper than the limit of \(limit)"
        case let .trailingCharacters(offset): return "unexpected characters after the value at byte \(offset)"
        case let .duplicateMapKey(offset, key): return "map key at byte \(offset) (\(key.utf8.count) bytes) appears twice in one object"
        case let .equivalentMapKeys(offset, key): return "map key at byte \(offset) (\(key.utf8.count) bytes) differs in bytes from an earlier key but is equal to it as a Swift string"
        case let .nullInContainer(offset): return "null at byte \(offset) is not a list element or map value"
        case let .duplicateField(message, name): return "field '\(name)' of \(message) appears twice"
        case let .oneofConflict(message, name): return "field '\(name)' of \(message) sets a oneof another field already set"
        case let .invalidDuration(offset): return "invalid duration at byte \(offset); expected seconds with up to nine fraction digits and 's', such as \"1.5s\""
        case let .invalidFieldMask(offset): return "invalid field mask at byte \(offset); expected lowerCamelCase paths separated by commas"
        case let .invalidAny(offset, reason): return "invalid google.protobuf.Any at byte \(offset): \(reason)"
        }
    }
}

/// Why a message could not be written as JSON.
public enum JSONEncodingError: Error, Sendable, Hashable {
    /// A timestamp outside 0001-01-01 ... 9999-12-31 (or with nanos outside a second), which
    /// RFC 3339 cannot express.
    case timestampOutOfRange(secondsSince1970: Int64)
    /// A duration beyond 10,000 years, or whose nanos do not fit its seconds.
    case durationOutOfRange(seconds: Int64, nanos: Int32)
    /// A field mask path that does not survive the trip to lowerCamelCase and back.
    case invalidFieldMaskPath(String)
    /// A `google.protobuf.Value` with no kind set, or a number JSON cannot write (NaN, infinity).
    case invalidValue(String)
    /// A `google.protobuf.Any` whose type the ``AnyTypeRegistry`` does not know, or whose
    /// bytes do not decode as that type.
    case invalidAny(typeURL: String, reason: String)
}

/// Options for decoding JSON.
public struct JSONDecodingOptions: Sendable, Hashable {
    /// Skips members and enum names the schema does not define instead of failing,
    /// as protobuf's `ignore_unknown_fields` does.
    public var ignoreUnknownFields: Bool
    /// The deepest nesting of objects and arrays accepted.
    public var maximumDepth: Int
    /// The types a `google.protobuf.Any` may name.
    public var anyTypes: AnyTypeRegistry = .shared

    /// Creates options; by default unknown members are errors and depth is capped at 100.
    public init(ignoreUnknownFields: Bool = false, maximumDepth: Int = 100) {
        self.ignoreUnknownFields = ignoreUnknownFields
        self.maximumDepth = maximumDepth
    }
}
