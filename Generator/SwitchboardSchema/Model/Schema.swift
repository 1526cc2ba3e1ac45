/// A validated schema: every name resolved, every rule checked, Swift names chosen.
///
/// This is the boundary between the front end and the emitters; it holds no syntax.
/// Messages and enums live in flat arrays and refer to each other by index, which
/// keeps the model a plain value and its iteration order deterministic.
public struct Schema: Sendable, Hashable {
    /// The package shared by every file, such as `signal.chat`.
    public var packageName: String
    /// The files the schema was read from, sorted by path.
    public var files: [SourceFile]
    /// Every message, nested ones included, in file and source order.
    public var messages: [MessageDefinition]
    /// Every enum, nested ones included, in file and source order.
    public var enums: [EnumDefinition]
    /// Services in file and source order.
    public var services: [ServiceDefinition] = []
    /// Per-request credentials.
    public var keys: [KeyDefinition] = []
    /// Packages whose types fields use (`import`, or `timestamp`). Their messages and enums
    /// sit at the end of ``messages`` and ``enums``, marked ``MessageDefinition/importedFrom``;
    /// emitters refer to them and never declare them.
    public var importedPackages: [ImportedPackage] = []

    /// Messages declared at the top level of one of this schema's files.
    public var topLevelMessages: [MessageDefinition] { messages.filter { $0.parent == nil && $0.importedFrom == nil } }
    /// Enums declared at the top level of one of this schema's files.
    public var topLevelEnums: [EnumDefinition] { enums.filter { $0.parent == nil && $0.importedFrom == nil } }
}

/// A compiled schema that another schema may import, and where its Swift types live.
public struct ImportableSchema: Sendable, Hashable {
    /// The compiled package.
    public var schema: Schema
    /// The Swift module its types are generated into; `nil` for the importing schema's own.
    public var swiftModule: String?

    /// Describes a schema to import.
    public init(schema: Schema, swiftModule: String?) {
        self.schema = schema
        self.swiftModule = swiftModule
    }
}

/// A package whose types a schema uses without declaring them.
public struct ImportedPackage: Sendable, Hashable {
    /// The package name, such as `google.protobuf`.
    public var name: String
    /// The Swift module that declares its types; `nil` when they are generated into the same
    /// module as the importing schema.
    public var swiftModule: String?

    /// Creates a description of an imported package.
    public init(name: String, swiftModule: String?) {
        self.name = name
        self.swiftModule = swiftModule
    }
}

/// The scalar types of the schema language.
public enum ScalarType: String, Sendable, Hashable, CaseIterable {
    case bool, int32, int64, uint32, uint64, sint32, sint64
    case fixed32, fixed64, sfixed32, sfixed64, float, double, string, bytes

    /// Whether a list of this type is packed on the wire.
    public var isPackable: Bool { self != .string && self != .bytes }
    /// Whether this type may be a map key (protobuf allows integers, bool and string).
    public var isValidMapKey: Bool { self != .float && self != .double && self != .bytes }
}

/// How a `timestamp(...)` other than protobuf's own is carried on the wire. A plain
/// `timestamp` is the message `google.protobuf.Timestamp` (``WellKnownTypes``).
public enum TimestampEncoding: String, Sendable, Hashable, CaseIterable {
    /// Milliseconds since the epoch as an `int64` varint (Signal's envelope timestamps).
    case millis
}

/// The type of one value: a scalar, a message, an enum or a millisecond timestamp.
public enum ValueType: Sendable, Hashable {
    case scalar(ScalarType)
    /// Index into ``Schema/messages``.
    case message(Int)
    /// Index into ``Schema/enums``.
    case enumeration(Int)
    case timestamp(TimestampEncoding)

    /// Whether a list of this type is packed.
    public var isPackable: Bool {
        switch self {
        case let .scalar(scalar): return scalar.isPackable
        case .enumeration: return true
        case .timestamp(.millis): return true
        case .message: return false
        }
    }
}

/// The shape of a field: one value, an optional value, a list or a map.
public enum FieldShape: Sendable, Hashable {
    /// Always present; the default value is not written (implicit presence).
    case singular(ValueType)
    /// `T?`: absent or present, even when present with the default (explicit presence).
    case optional(ValueType)
    /// `[T]`
    case list(ValueType)
    /// `{K: V}`
    case map(key: ScalarType, value: ValueType)

    /// The element or value type.
    public var valueType: ValueType {
        switch self {
        case let .singular(type), let .optional(type), let .list(type), let .map(_, type): return type
        }
    }
}

/// A field of a message.
public struct FieldDefinition: Sendable, Hashable {
    /// The name as written in the schema (protobuf's original name).
    public var name: String
    /// The Swift property or case name, escaped or renamed if needed.
    public var swiftName: String
    /// The lowerCamelCase JSON name.
    public var jsonName: String
    /// The key: the protobuf field number.
    public var number: Int
    public var shape: FieldShape
    /// Index into ``MessageDefinition/oneofs`` when the field belongs to a oneof.
    public var oneof: Int?
    /// True when the field closes a reference cycle and is stored in an `IndirectBox`.
    public var isIndirect: Bool
    /// `@sensitive`: kept out of descriptions and logs.
    public var isSensitive: Bool
    /// `@deprecated`
    public var isDeprecated: Bool
    public var documentation: [String]
    /// Where the field starts (its key).
    public var location: SourceLocation
    /// Where its name is, for diagnostics about the name.
    public var nameLocation: SourceLocation? = nil
    /// `@unpacked`: a list of numbers, bools or enums written one tagged element at a time
    /// (proto3 writes them packed by default). Decoding accepts both forms either way.
    public var isUnpacked = false

    /// Whether the list is written packed: numbers, bools and enums, unless `@unpacked`.
    public var isPacked: Bool {
        guard case let .list(type) = shape else { return false }
        return type.isPackable && !isUnpacked
    }
}

/// A `oneof`: at most one of its fields is set.
public struct OneofDefinition: Sendable, Hashable {
    public var name: String
    /// The Swift property name.
    public var swiftName: String
    /// The Swift enum type nested in the message.
    public var swiftTypeName: String
    /// Indices into ``MessageDefinition/fields``.
    public var fields: [Int]
    public var documentation: [String]
    public var location: SourceLocation
}

/// A message.
public struct MessageDefinition: Sendable, Hashable {
    /// The name as written.
    public var name: String
    /// Names from the outermost enclosing message down to this one.
    public var path: [String]
    /// `package.Outer.Name`
    public var fullName: String
    /// The Swift type name of this level (the last path component, renamed if needed).
    public var swiftName: String
    /// The qualified Swift type, such as `ChatMessage.Reaction`.
    public var swiftPath: String
    /// Index of the enclosing message.
    public var parent: Int?
    /// Fields in declaration order, oneof members included.
    public var fields: [FieldDefinition]
    public var oneofs: [OneofDefinition]
    /// Indices into ``Schema/messages`` of messages declared inside this one.
    public var nestedMessages: [Int]
    /// Indices into ``Schema/enums`` of enums declared inside this one.
    public var nestedEnums: [Int]
    public var reservedNumbers: [ClosedRange<Int>]
    public var reservedNames: [String]
    public var isDeprecated: Bool
    public var documentation: [String]
    /// Index into ``Schema/files``.
    public var file: Int
    public var location: SourceLocation

    /// For a message of another package: index into ``Schema/importedPackages``. Its `file`
    /// and locations then refer to that package's files.
    public var importedFrom: Int? = nil

    /// For a message marked `@pushPayload(field)`: index of the field (in ``fields``) that
    /// names the user the payload is for.
    public var pushRecipientField: Int? = nil

    /// Fields sorted by key: the order the binary codec writes them.
    public var fieldsByNumber: [FieldDefinition] { fields.sorted { $0.number < $1.number } }
}

/// One value of an enum.
public struct EnumCaseDefinition: Sendable, Hashable {
    /// The name as written: the protobuf and JSON name.
    public var name: String
    /// The Swift case name.
    public var swiftName: String
    public var value: Int32
    public var isDeprecated: Bool
    public var documentation: [String]
    public var location: SourceLocation
    /// For an alias (`@allowAlias` enums): the index of the first case with this value, which
    /// the alias stands for; nil for a case of its own.
    public var aliasOf: Int? = nil
}

/// An open enum.
public struct EnumDefinition: Sendable, Hashable {
    public var name: String
    public var path: [String]
    public var fullName: String
    public var swiftName: String
    public var swiftPath: String
    public var parent: Int?
    /// Cases in declaration order, aliases included (see ``EnumCaseDefinition/aliasOf``).
    public var cases: [EnumCaseDefinition]
    /// `@allowAlias`: several names may share a value (protobuf's `allow_alias`).
    public var allowsAlias = false

    /// The cases that are not aliases: one per value.
    public var distinctCases: [EnumCaseDefinition] { cases.filter { $0.aliasOf == nil } }
    public var reservedNumbers: [ClosedRange<Int>]
    public var reservedNames: [String]
    public var isDeprecated: Bool
    public var documentation: [String]
    public var file: Int
    public var location: SourceLocation
    /// For an enum of another package: index into ``Schema/importedPackages``.
    public var importedFrom: Int? = nil
}

/// Limits protobuf places on keys.
public enum ProtobufLimits {
    /// The largest field key, 2^29 - 1.
    public static let maximumFieldNumber = 536_870_911
    /// Keys protobuf reserves for its implementation.
    public static let reservedFieldNumbers = 19_000...19_999
}
