import Foundation
import SwitchboardRuntime
import SwitchboardSchema

/// One value of a field, typed by the schema at run time rather than by generated code.
public indirect enum DynamicValue: Sendable, Hashable {
    case bool(Bool)
    case int(Int64)
    case uint(UInt64)
    case float(Float)
    case double(Double)
    case string(String)
    case bytes(Data)
    case enumeration(Int32)
    case message(DynamicMessage)
    case timestamp(seconds: Int64, nanos: Int32)
}

/// A map entry. Maps are kept in key order (numeric keys by value, string keys by their UTF-8
/// bytes), so the same map reads the same from JSON and from the wire, and prints the same
/// every time.
public struct DynamicMapEntry: Sendable, Hashable {
    public var key: DynamicValue
    public var value: DynamicValue

    /// An entry of `key` and `value`.
    public init(key: DynamicValue, value: DynamicValue) {
        self.key = key
        self.value = value
    }

    /// `entries` sorted by key, the last entry winning for a repeated key (as protobuf merges).
    static func canonicalOrder(_ entries: [DynamicMapEntry]) throws(DynamicCodecError) -> [DynamicMapEntry] {
        var latest: [DynamicValue: DynamicMapEntry] = [:]
        for entry in entries {
            // Two string keys that differ in bytes but are one Swift String cannot both be kept:
            // an error, as in the generated codec, never a silent loss.
            if let earlier = latest.updateValue(entry, forKey: entry.key), case let (.string(first), .string(second)) = (earlier.key, entry.key),
               !first.utf8.elementsEqual(second.utf8) {
                throw DynamicCodecError("two map keys (\(first.utf8.count) and \(second.utf8.count) bytes) differ in bytes but are equal as Swift strings")
            }
        }
        return latest.values.sorted { lhs, rhs in
            switch (lhs.key, rhs.key) {
            case let (.int(a), .int(b)): return a < b
            case let (.uint(a), .uint(b)): return a < b
            // Byte order, as the generated codec and protobuf's deterministic encoding sort
            // string keys: Swift's `<` orders "\u{212A}" (the Kelvin sign) as "K".
            case let (.string(a), .string(b)): return a.utf8.lexicographicallyPrecedes(b.utf8)
            case let (.bool(a), .bool(b)): return !a && b
            default: return false
            }
        }
    }
}

/// What a field holds.
public enum DynamicField: Sendable, Hashable {
    case single(DynamicValue)
    case list([DynamicValue])
    case map([DynamicMapEntry])
}

/// A message of a schema type, for tools that read the schema at run time (`call`,
/// `listen`, `mock-server`): they convert between JSON and the wire without generated code.
public struct DynamicMessage: Sendable, Hashable {
    /// Index of the type in `Schema.messages`.
    public let type: Int
    /// Set fields by number.
    public var fields: [Int: DynamicField]
    /// Fields the schema does not know (or known numbers with another wire type), kept as
    /// read and written back after the known ones, as generated messages keep them.
    public var unknownFields = UnknownFields()

    public init(type: Int, fields: [Int: DynamicField] = [:]) {
        self.type = type
        self.fields = fields
    }
}

/// Why a dynamic conversion failed; says which field of which message.
public struct DynamicCodecError: Error, Sendable, Hashable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

extension Schema {
    /// The message type named `name` (full name, or the unqualified name if unique).
    public func messageIndex(named name: String) -> Int? {
        if let exact = messages.firstIndex(where: { $0.fullName == name }) { return exact }
        let matches = messages.indices.filter { messages[$0].name == name }
        return matches.count == 1 ? matches[0] : nil
    }
}

extension FieldDefinition {
    /// Whether an unset field and a default value are the same (proto3 implicit presence).
    var hasImplicitPresence: Bool {
        if oneof != nil { return false }
        if case .singular = shape { return true }
        return false
    }
}

extension DynamicValue {
    /// A `timestamp(millis)` value: whole milliseconds since the epoch, floored for dates before it.
    static func timestamp(millis: Int64) -> DynamicValue {
        let (seconds, remainder) = millis.quotientAndRemainder(dividingBy: 1000)
        return remainder < 0 ? .timestamp(seconds: seconds - 1, nanos: Int32(remainder + 1000) * 1_000_000)
                             : .timestamp(seconds: seconds, nanos: Int32(remainder) * 1_000_000)
    }

    /// Whether this is its type's default, which proto3 leaves off the wire and out of JSON.
    var isDefault: Bool {
        switch self {
        case let .bool(value): return !value
        case let .int(value): return value == 0
        case let .uint(value): return value == 0
        case let .float(value): return value == 0 && value.sign == .plus
        case let .double(value): return value == 0 && value.sign == .plus
        case let .string(value): return value.isEmpty
        case let .bytes(value): return value.isEmpty
        case let .enumeration(value): return value == 0
        case let .timestamp(seconds, nanos): return seconds == 0 && nanos == 0
        case .message: return false
        }
    }
}
