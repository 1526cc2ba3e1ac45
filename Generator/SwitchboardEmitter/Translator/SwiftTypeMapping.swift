import SwitchboardSchema

/// Maps schema types to Swift types, runtime codecs, defaults and wire tags.
final class SwiftTypeMapping: Sendable {
    let schema: Schema
    /// For each message, the Swift names of its nested messages, enums and oneof enums: the
    /// names that shadow a top-level type inside it. Made once, since every type reference
    /// looks them up for each enclosing message.
    let nestedTypeNames: [Set<String>]
    /// What a type reference reads of each message and enum, kept apart from the definitions:
    /// a debug build (what `swift run` makes) copies a whole definition, every array and string
    /// in it retained, at each `schema.messages[index].parent`.
    let messageReferences: [TypeReferenceInfo]
    let enumReferences: [TypeReferenceInfo]

    struct TypeReferenceInfo: Sendable {
        let swiftPath: String
        let importedFrom: Int?
        let parent: Int?
    }

    init(schema: Schema) {
        self.schema = schema
        nestedTypeNames = schema.messages.map { message in
            Set(message.nestedMessages.map { schema.messages[$0].swiftName } + message.nestedEnums.map { schema.enums[$0].swiftName }
                + message.oneofs.map(\.swiftTypeName))
        }
        messageReferences = schema.messages.map { TypeReferenceInfo(swiftPath: $0.swiftPath, importedFrom: $0.importedFrom, parent: $0.parent) }
        enumReferences = schema.enums.map { TypeReferenceInfo(swiftPath: $0.swiftPath, importedFrom: $0.importedFrom, parent: $0.parent) }
    }

    static func swiftType(_ scalar: ScalarType) -> String {
        switch scalar {
        case .bool: return "Bool"
        case .int32, .sint32, .sfixed32: return "Int32"
        case .int64, .sint64, .sfixed64: return "Int64"
        case .uint32, .fixed32: return "UInt32"
        case .uint64, .fixed64: return "UInt64"
        case .float: return "Float"
        case .double: return "Double"
        case .string: return "String"
        case .bytes: return "Data"
        }
    }

    static func codec(_ scalar: ScalarType) -> String {
        switch scalar {
        case .bool: return "BoolCodec"
        case .int32: return "Int32Codec"
        case .int64: return "Int64Codec"
        case .uint32: return "UInt32Codec"
        case .uint64: return "UInt64Codec"
        case .sint32: return "SInt32Codec"
        case .sint64: return "SInt64Codec"
        case .fixed32: return "Fixed32Codec"
        case .fixed64: return "Fixed64Codec"
        case .sfixed32: return "SFixed32Codec"
        case .sfixed64: return "SFixed64Codec"
        case .float: return "FloatCodec"
        case .double: return "DoubleCodec"
        case .string: return "StringCodec"
        case .bytes: return "BytesCodec"
        }
    }

    /// The protobuf wire type number of one value.
    static func wireType(_ type: ValueType) -> UInt32 {
        switch type {
        case let .scalar(scalar):
            switch scalar {
            case .fixed32, .sfixed32, .float: return 5
            case .fixed64, .sfixed64, .double: return 1
            case .string, .bytes: return 2
            default: return 0
            }
        case .enumeration, .timestamp(.millis): return 0
        case .message: return 2
        }
    }

    /// The tag of a field as emitted in Swift source, such as `0x0A`.
    static func tagLiteral(number: Int, wireType: UInt32) -> String {
        let raw = UInt32(number) << 3 | wireType
        guard raw < 0x80 else { return "\(raw)" }
        // By hand: `String(format:)` was a seventh of generation time.
        let digits = Array("0123456789ABCDEF")
        return "0x" + String(digits[Int(raw >> 4)]) + String(digits[Int(raw & 0xF)])
    }

    /// Bytes the tag's varint takes.
    static func tagSize(number: Int) -> Int {
        var value = UInt32(number) << 3
        var size = 1
        while value >= 0x80 { value >>= 7; size += 1 }
        return size
    }

    /// Top-level type names that a nested type or oneof somewhere also takes: code inside
    /// that message reaches the top-level one through ``topLevelAlias(_:)``. A module
    /// qualifier would do too, but the module's name is not certain (a target's folder and
    /// its module may differ), and a wrong one does not compile.
    var shadowedTopLevelNames: Set<String> {
        let topLevel = Set(schema.messages.filter { $0.parent == nil }.map(\.swiftName) + schema.enums.filter { $0.parent == nil }.map(\.swiftName))
        var inner: Set<String> = []
        for message in schema.messages {
            for nested in message.nestedMessages { inner.insert(schema.messages[nested].swiftName) }
            for nested in message.nestedEnums { inner.insert(schema.enums[nested].swiftName) }
            for oneof in message.oneofs { inner.insert(oneof.swiftTypeName) }
        }
        return topLevel.intersection(inner)
    }

    /// The alias the file of top-level type `name` declares for it, when it is shadowed.
    static func topLevelAlias(_ name: String) -> String { SwiftNames.topLevelAliasPrefix + name }

    /// A reference to a generated type that resolves correctly from code inside the
    /// message at `scope`: through the top-level alias when a nested type of the same name
    /// as the path's first component would shadow the top-level one.
    func reference(_ path: String, from scope: Int?) -> String {
        let head = String(path.prefix { $0 != "." })
        var current = scope
        while let index = current {
            if nestedTypeNames[index].contains(head) { return Self.topLevelAlias(head) + path.dropFirst(head.count) }
            current = messageReferences[index].parent
        }
        return path
    }

    /// A type of this schema, or of an imported package: qualified by its module, so a type of
    /// this schema with the same name cannot hide it (the runtime's names are reserved instead).
    func imported(_ package: Int?, _ path: String, from scope: Int?) -> String {
        guard let package else { return reference(path, from: scope) }
        guard let module = schema.importedPackages[package].swiftModule, module != WellKnownTypes.swiftModule else { return path }
        return module + "." + path
    }

    func valueType(_ type: ValueType, from scope: Int?) -> String {
        switch type {
        case let .scalar(scalar): return Self.swiftType(scalar)
        case let .message(index):
            let type = messageReferences[index]
            return imported(type.importedFrom, type.swiftPath, from: scope)
        case let .enumeration(index):
            let type = enumReferences[index]
            return imported(type.importedFrom, type.swiftPath, from: scope)
        case .timestamp(.millis): return "Date"
        }
    }

    func codec(_ type: ValueType, from scope: Int?) -> String {
        switch type {
        case let .scalar(scalar): return Self.codec(scalar)
        case .message: return "MessageCodec<\(valueType(type, from: scope))>"
        case .enumeration: return "EnumCodec<\(valueType(type, from: scope))>"
        case .timestamp(.millis): return "UnixMillisTimestampCodec"
        }
    }

    func fieldType(_ shape: FieldShape, from scope: Int?) -> String {
        switch shape {
        case let .singular(type): return valueType(type, from: scope)
        case let .optional(type): return valueType(type, from: scope) + "?"
        case let .list(type): return "[\(valueType(type, from: scope))]"
        case let .map(key, value): return "[\(Self.swiftType(key)): \(valueType(value, from: scope))]"
        }
    }

    /// The type of a field as an initializer or call parameter: a message field that tracks
    /// presence takes an optional, so leaving it out leaves the field unset.
    func parameterType(_ field: FieldDefinition, from scope: Int?) -> String {
        field.tracksPresence ? valueType(field.shape.valueType, from: scope) + "?" : fieldType(field.shape, from: scope)
    }

    /// The default of ``parameterType(_:from:)``.
    func parameterDefault(_ field: FieldDefinition, from scope: Int?) -> String {
        field.tracksPresence ? "nil" : defaultValue(field.shape, from: scope)
    }

    func defaultValue(_ shape: FieldShape, from scope: Int?) -> String {
        switch shape {
        case let .singular(type):
            switch type {
            case let .scalar(scalar):
                switch scalar {
                case .bool: return "false"
                case .string: return "\"\""
                case .bytes: return "Data()"
                default: return "0"
                }
            case .message, .enumeration: return "\(valueType(type, from: scope))()"
            case .timestamp(.millis): return "Date(timeIntervalSince1970: 0)"
            }
        case .optional: return "nil"
        case .list: return "[]"
        case .map: return "[:]"
        }
    }

    /// The condition under which an implicit-presence value differs from its default.
    /// Codec calls rather than `!=` keep type-checking fast: every generated type adds
    /// an `==` overload the checker would otherwise have to consider. Strings and bytes
    /// too: `isEmpty` on `String` or `Data` took about 12 ms to type-check per use in a
    /// 200-message module (many protocols offer it), the codec call under 1 ms.
    /// `scope` is where the code sits, as for ``valueType(_:from:)``: a nested type or oneof
    /// of the same name as the field's type must not stand in for it.
    func nonDefaultCondition(_ type: ValueType, _ value: String, from scope: Int?) -> String {
        switch type {
        case .scalar(.bool): return value
        default: return "!\(codec(type, from: scope)).isDefault(\(value))"
        }
    }

    /// Whether writing this type as JSON can throw (messages: a timestamp out of range, say).
    static func jsonWriteThrows(_ type: ValueType) -> Bool {
        switch type {
        case .message: return true
        default: return false
        }
    }
}

extension FieldDefinition {
    /// A singular message field outside a oneof: its Swift property is the message (the
    /// default when unset) and its storage remembers whether it was set, as protobuf does.
    var tracksPresence: Bool {
        guard oneof == nil, case .singular(.message) = shape else { return false }
        return true
    }
}
