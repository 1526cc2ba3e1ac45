/// The naming rules that map schema names to Swift: case conversion, keyword
/// escaping, and the names generated code already uses. Every rule is a pure
/// function of the schema, so the chosen names are deterministic.
public enum SwiftNames {
    /// Swift keywords that backticks make usable as member names.
    static let escapableKeywords: Set<String> = [
        "associatedtype", "borrowing", "class", "consuming", "deinit", "enum", "extension", "fileprivate",
        "func", "import", "inout", "internal", "let", "nonisolated", "open", "operator", "private",
        "precedencegroup", "protocol", "public", "rethrows", "static", "struct", "subscript", "typealias",
        "var", "break", "case", "catch", "continue", "default", "defer", "do", "else", "fallthrough", "for",
        "guard", "if", "in", "repeat", "return", "throw", "switch", "where", "while", "as", "await", "false",
        "is", "nil", "super", "throws", "true", "try", "Any", "some", "any",
    ]

    /// `name` with an underscore after it, to tell it from a name already taken: a
    /// backticked keyword loses its backticks (`` `default` `` becomes `default_`, a name
    /// that needs none), where a plain `_` after the backtick would not be Swift.
    public static func appendingUnderscore(_ name: String) -> String {
        if name.hasPrefix("`"), name.hasSuffix("`"), name.count > 2 { return String(name.dropFirst().dropLast()) + "_" }
        return name + "_"
    }

    /// `name` without the backticks that escape a keyword.
    public static func unescaped(_ name: String) -> String {
        name.hasPrefix("`") && name.hasSuffix("`") && name.count > 2 ? String(name.dropFirst().dropLast()) : name
    }

    /// Whether `name` is a Swift keyword, escapable or not.
    public static func isKeyword(_ name: String) -> Bool {
        escapableKeywords.contains(name) || renamedKeywords.contains(name)
    }

    /// The parameters and locals of a generated call, which a key (itself a parameter) must
    /// not shadow or repeat.
    public static let callLocals: Set<String> = [
        "request", "options", "path", "headers", "bodyMessage", "body", "rpcRequest", "transport", "interceptors", "context",
        // And those of the paged calls (`listPages(pageSize:)`).
        "pageSize", "firstPageRequest",
    ]

    /// Names backticks cannot rescue (`x.self` and `x.Type` mean something else), renamed with `_`.
    static let renamedKeywords: Set<String> = ["self", "Self", "Type", "Protocol", "init", "_"]

    /// Members every generated message has; a field with one of these names is renamed.
    static let messageMembers: Set<String> = [
        "unknownFields", "serializedSize", "serialize", "decodeFields", "encodeJSONFields", "decodeJSONFields",
        "protoMessageName", "jsonFieldNames", "serializedBytes", "serializedData", "jsonString", "jsonUTF8Bytes", "jsonUTF8Data", "hashValue",
        "description", "debugDescription", "customMirror", "recipientID",
    ]

    /// Members every generated enum has; a case with one of these names is renamed.
    static let enumMembers: Set<String> = ["unrecognized", "rawValue", "protoName", "allCases", "hashValue", "hash"]

    /// Type names generated code refers to unqualified; a schema type with one of these names is renamed.
    public static let reservedTypeNames: Set<String> = [
        "String", "Int", "Int8", "Int16", "Int32", "Int64", "UInt", "UInt8", "UInt16", "UInt32", "UInt64", "Bool",
        "Float", "Double", "Data", "Date", "Array", "Dictionary", "Set", "Optional", "Never", "Error", "Hasher",
        "Sendable", "Hashable", "Equatable", "Swift", "Foundation", "StaticString", "Result", "Character", "Void",
        "AnyObject", "Codable", "CaseIterable", "RawRepresentable", "CustomStringConvertible",
        "CustomDebugStringConvertible", "CustomReflectable", "Mirror", "Duration",
        "SwitchboardRuntime", "ProtoMessage", "ProtoEnum", "WireWriter", "WireReader", "WireTag", "WireType",
        "WireSize", "WireSizeSum", "WireLimits", "WireDecodingError", "WireDecodingOptions", "JSONWriter", "JSONReader", "JSONName", "JSONFieldsSeen", "JSONFieldNames", "JSONFieldCursor", "FieldEquality", "JSONIntegerKey",
        "JSONDecodingError", "JSONEncodingError", "JSONDecodingOptions", "UnknownFields", "IndirectBox",
        "FieldCodec", "MapKeyCodec", "RepeatedField", "MapField", "ZigZag", "Base64", "RFC3339",
        "BoolCodec", "Int32Codec", "Int64Codec", "UInt32Codec", "UInt64Codec", "SInt32Codec", "SInt64Codec",
        "Fixed32Codec", "Fixed64Codec", "SFixed32Codec", "SFixed64Codec", "FloatCodec", "DoubleCodec",
        "StringCodec", "BytesCodec", "EnumCodec", "MessageCodec", "UnixMillisTimestampCodec",
        "ProtoTimestamp", "ProtoDuration", "ProtoDoubleValue", "ProtoFloatValue", "ProtoInt64Value", "ProtoUInt64Value",
        "ProtoInt32Value", "ProtoUInt32Value", "ProtoBoolValue", "ProtoStringValue", "ProtoBytesValue", "ProtoEmpty",
        "ProtoFieldMask", "ProtoStruct", "ProtoValue", "ProtoNullValue", "ProtoListValue", "ProtoAny", "ProtoWrapper",
        "AnyTypeRegistry",
        // The RPC layer's public types, which generated services, clients, handlers and mocks name.
        "AuthMode", "AuthRequirement", "Authenticated", "Unauthenticated", "BodyEncoding", "CallOptions",
        "DeadlineEnforcingTransport", "DisconnectReason", "EndpointDescriptor", "EndpointErrorMapping", "EventContext", "EventDescriptor",
        "EventOutcome", "FakeServerTransport", "FirstAnswer", "InProcessTransport", "Locked", "LogRedaction",
        "MockEndpoint", "ParameterValue", "PathEncoding", "PathParameters", "PathTemplate", "RPCCall", "RPCHeaders", "RPCRequest",
        "RPCResponse", "RPCRoute", "RPCRouter", "RPCTransport", "RequestBindingError", "RequestError", "RequestResult",
        "RoutingTransport", "ServerBinding", "ServerContext", "ServerRequest", "ServiceDescriptor", "TransportError",
        "UTF8Validation", "ClientInterceptor", "ServerInterceptor", "PushInterceptor", "InterceptedTransport",
        "InterceptorChain", "LoggingInterceptor", "RetryInterceptor", "RetryThrottle", "RetryBackoff", "ResponseCapture", "ServerResponseHeaders",
        "Pagination", "PageContinuation", "PageSequence", "PageItemSequence", "PushPayload", "PushPayloadRejection", "CountryAvailability", "ServiceUnavailability",
        "URLAuthority", "RequestKey",
    ]

    /// Whether a generated type may not take `name`: a keyword backticks cannot rescue, or
    /// a type generated code names unqualified.
    public static func isReservedTypeName(_ name: String) -> Bool {
        reservedTypeNames.contains(name) || renamedKeywords.contains(name) || escapableKeywords.contains(name)
    }

    /// protobuf's JSON name: drop each `_` and capitalise the letter after it.
    public static func jsonName(_ name: String) -> String {
        var result = ""
        var capitalizeNext = false
        for character in name {
            if character == "_" {
                capitalizeNext = true
            } else if capitalizeNext {
                result += character.uppercased()
                capitalizeNext = false
            } else {
                result.append(character)
            }
        }
        return result
    }

    /// The Swift property for a field or oneof: protobuf's JSON name, starting lowercase
    /// (`Leading_Capital` → `leadingCapital`, `_leading` → `leading`, `Choice` → `choice`); an
    /// all-capitals name is read as words (`FIELD_NAME5` → `fieldName5`). A name of underscores
    /// alone, which has no JSON name to start from, keeps its spelling (`__`; `_` itself is a
    /// keyword, renamed where names are assigned).
    public static func propertyName(_ name: String) -> String {
        let isUpperSnake = name.contains(where: \.isLetter) && name.allSatisfy { $0.isUppercase || $0.isNumber || $0 == "_" }
        var result: String
        if isUpperSnake {
            let words = name.split(separator: "_", omittingEmptySubsequences: true)
            result = (words.first.map { $0.lowercased() } ?? "") + words.dropFirst().map { $0.prefix(1).uppercased() + $0.dropFirst().lowercased() }.joined()
        } else {
            let json = jsonName(name)
            // A leading capital run (`URLPath`) lowers as a word: `urlPath`.
            let capitals = json.prefix { $0.isUppercase }
            if capitals.count > 1, capitals.count < json.count {
                result = capitals.dropLast().lowercased() + json.dropFirst(capitals.count - 1)
            } else {
                result = lowercaseFirst(json)
            }
        }
        if let first = result.first, first.isNumber { result = "_" + result }
        if result.isEmpty { result = name }
        return result
    }

    /// The Swift type for a message, enum or oneof: its name as written, the first letter after
    /// any leading underscores made uppercase (`chat_message` → `Chat_message`, `_internal` →
    /// `_Internal`, `Foo__Bar_` and `_1` as they are), so no type starts as a property does.
    public static func typeName(_ name: String) -> String {
        let underscores = name.prefix { $0 == "_" }
        let rest = String(name.dropFirst(underscores.count))
        guard let first = rest.unicodeScalars.first, ("a"..."z").contains(first) else { return name }
        return String(underscores) + uppercaseFirst(rest)
    }

    /// What an alias for a top-level type that a nested one shadows starts with
    /// (`_SwitchboardTopLevel_Tag`); no schema type may take a name starting so.
    public static let topLevelAliasPrefix = "_SwitchboardTopLevel_"

    /// Why generated code cannot use `name` as a field's JSON name, or `nil` when it can.
    /// Generated messages list their member names in one string (the runtime's
    /// `JSONFieldNames`), separated by spaces and tabs, which an empty name or one holding
    /// either would break; any other text (quotes, backslashes, controls, non-ASCII) is
    /// escaped where it is written.
    public static func jsonNameProblem(_ name: String) -> String? {
        if name.isEmpty { return "is empty" }
        if name.unicodeScalars.contains(where: { $0 == " " || $0 == "\t" }) { return "holds a space or a tab" }
        return nil
    }

    /// `MessageStatus` → `MESSAGE_STATUS`, the prefix protobuf style puts on enum values.
    public static func upperSnake(_ name: String) -> String {
        var result = ""
        var previousWasLower = false
        for character in name {
            if character.isUppercase, previousWasLower { result += "_" }
            result += character.uppercased()
            previousWasLower = character.isLowercase || character.isNumber
        }
        return result
    }

    /// The Swift case for an enum value: `MESSAGE_STATUS_SENT` in `MessageStatus` → `sent`,
    /// `READ_RECEIPT` → `readReceipt`, `sending` → `sending`.
    public static func enumCaseName(_ name: String, enumName: String) -> String {
        let isUpperSnake = name.allSatisfy { $0.isUppercase || $0.isNumber || $0 == "_" }
        guard isUpperSnake else { return lowercaseFirst(name) }
        var base = name
        // `enum Status_` puts `STATUS_` before its values, as `Status` does.
        var stem = upperSnake(enumName)
        while stem.hasSuffix("_") { stem.removeLast() }
        let prefix = stem + "_"
        if base.hasPrefix(prefix) {
            let rest = String(base.dropFirst(prefix.count))
            if let first = rest.first, first.isLetter { base = rest }
        }
        let words = base.split(separator: "_", omittingEmptySubsequences: true)
        guard let head = words.first else { return lowercaseFirst(name) }
        return head.lowercased() + words.dropFirst().map { $0.prefix(1).uppercased() + $0.dropFirst().lowercased() }.joined()
    }

    /// `Content` for a oneof named `content`.
    public static func uppercaseFirst(_ name: String) -> String {
        name.prefix(1).uppercased() + name.dropFirst()
    }

    static func lowercaseFirst(_ name: String) -> String {
        name.prefix(1).lowercased() + name.dropFirst()
    }

    /// Whether `name` can be the Swift module an imported package is generated into: generated
    /// code writes `import <name>` and `<name>.<Type>`, so a plain ASCII identifier that is
    /// not a keyword (`_`, `self` and `class` are refused).
    public static func isModuleName(_ name: String) -> Bool {
        isIdentifier(name) && !isKeyword(name)
    }

    /// Whether `name` is a plain ASCII identifier.
    static func isIdentifier(_ name: String) -> Bool {
        // Bytes, not scalars' Unicode properties (a lookup per scalar): any non-ASCII byte fails.
        var bytes = name.utf8.makeIterator()
        guard let first = bytes.next(), isASCIILetter(first) || first == UInt8(ascii: "_") else { return false }
        while let byte = bytes.next() {
            guard isASCIILetter(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "_") else { return false }
        }
        return true
    }

    private static func isASCIILetter(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
    }
}
