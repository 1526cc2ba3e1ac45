import Foundation
import SwitchboardRuntime
import SwitchboardSchema

/// Proto3 JSON for ``DynamicMessage``, driven by the schema: the same mapping the generated
/// codecs use (JSON names, 64-bit integers as strings, bytes as base64, enums by name).
public struct DynamicJSONCodec: Sendable {
    public let schema: Schema
    /// Well-known types go through the binary form to the runtime's own JSON code.
    private(set) var binary: DynamicBinaryCodec
    /// Nesting bound for hostile input, in messages; the binary form of well-known types is
    /// held to the same bound.
    public var maximumDepth = 100 {
        didSet { binary.maximumDepth = maximumDepth }
    }
    /// Whether members the schema does not define, and enum names it does not know, are
    /// skipped instead of failing the decode (protobuf's `ignoring_unknown_fields`). Off by
    /// default: a typo in a command should not be sent silently.
    public var ignoresUnknownFields = false

    public init(schema: Schema) {
        self.schema = schema
        binary = DynamicBinaryCodec(schema: schema)
    }

    /// A codec for what a peer sent (responses, error bodies, pushes), read as generated code
    /// reads it (`ProtoMessage.init(decoding:encoding:)`): members the schema does not define,
    /// and enum names it does not know, are skipped, so a peer on a newer schema is still
    /// understood. What a person types stays with the strict ``init(schema:)``.
    public static func lenient(schema: Schema) -> DynamicJSONCodec {
        var codec = DynamicJSONCodec(schema: schema)
        codec.ignoresUnknownFields = true
        return codec
    }

    // MARK: Reading

    /// Reads a JSON object as message type `type`, with the generated codecs' reader, so
    /// numbers parse exactly and the same spellings are accepted. Unknown fields (unless
    /// ``ignoresUnknownFields``) and values of the wrong type are errors that name the field:
    /// a typo should not be sent silently.
    public func decode(_ data: Data, as type: Int) throws(DynamicCodecError) -> DynamicMessage {
        // The reader counts objects and arrays, two to a message in a list, with the bound the
        // generated codec's reader (and protobuf's parser) has: a message nested through lists
        // is refused at the same depth by both (at twice it, `call` and `mock-server` took what
        // generated code refuses). Messages nested directly meet this codec's own bound first,
        // which names the field. A well-known type read by the runtime's code is held to this
        // codec's bound (see `readWellKnown`), as the generated codec's reader would hold it.
        // The runtime's own readers (well-known types) skip what this codec skips.
        let options = JSONDecodingOptions(ignoreUnknownFields: ignoresUnknownFields, maximumDepth: maximumDepth)
        let result: Result<DynamicMessage, DynamicCodecError> = data.withUnsafeBytes { buffer in
            var reader = JSONReader(buffer: buffer, options: options)
            do throws(DynamicCodecError) {
                let message = try readMessage(&reader, type: type, depth: 0)
                do throws(JSONDecodingError) {
                    try reader.expectEnd()
                } catch {
                    throw DynamicCodecError("not valid JSON: \(error.description)")
                }
                return .success(message)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    func readMessage(_ reader: inout JSONReader, type: Int, depth: Int, skippingTypeMember: Bool = false) throws(DynamicCodecError) -> DynamicMessage {
        let definition = schema.messages[type]
        guard depth < maximumDepth else { throw DynamicCodecError("nesting deeper than \(maximumDepth)") }
        if let wellKnown = WellKnownJSON(definition) {
            return try readWellKnown(wellKnown, &reader, type: type, depth: depth)
        }
        var message = DynamicMessage(type: type)
        var seenOneofs: [Int: String] = [:]
        var seenFields: Set<Int> = []
        do throws(JSONDecodingError) {
            try reader.beginObject()
        } catch {
            throw DynamicCodecError("\(definition.name): expected a JSON object (\(error.description))")
        }
        while true {
            let key: String
            do throws(JSONDecodingError) {
                guard let name = try reader.nextKey() else { break }
                key = name.string
                if skippingTypeMember && name.matches("@type") {
                    _ = try reader.readString()
                    continue
                }
            } catch {
                throw DynamicCodecError("not valid JSON: \(error.description)")
            }
            // Byte for byte, as the generated codec and protobuf match names: Swift's `==` would
            // take "\u{212A}" (the Kelvin sign) for "K".
            guard let field = definition.fields.first(where: { $0.jsonName.utf8.elementsEqual(key.utf8) || $0.name.utf8.elementsEqual(key.utf8) }) else {
                if ignoresUnknownFields {
                    do throws(JSONDecodingError) {
                        try reader.skipValue()
                    } catch {
                        throw DynamicCodecError("not valid JSON: \(error.description)")
                    }
                    continue
                }
                let names = definition.fields.map(\.jsonName) + definition.fields.map(\.name)
                let hint = Suggestion.closest(to: key, among: names).map { "; did you mean '\($0)'?" } ?? ""
                throw DynamicCodecError("\(definition.name) has no field '\(LogRedaction.excerpt(key))'\(hint)")
            }
            // Named twice (by either name) is an error, as in the generated codec.
            guard seenFields.insert(field.number).inserted else {
                throw DynamicCodecError("\(definition.name): field '\(LogRedaction.excerpt(key))' appears twice")
            }
            // `null` leaves a field unset; a list or map given `null` is empty whatever its
            // element type, as in the generated codec: only a singular Value or NullValue
            // takes `null` as a value.
            let nullIsAValue: Bool
            switch field.shape {
            case let .singular(valueType), let .optional(valueType): nullIsAValue = isJSONNullAValue(valueType)
            case .list, .map: nullIsAValue = false
            }
            if !nullIsAValue && reader.readNull() { continue }
            let context = "\(definition.name).\(key)"
            do {
                switch field.shape {
                case let .singular(valueType), let .optional(valueType):
                    let value: DynamicValue
                    do {
                        value = try readValue(&reader, type: valueType, context: context, depth: depth)
                    } catch is SkippedEnumName {
                        continue
                    }
                    // Only a value claims its oneof, as in the generated codec: a skipped
                    // enum name leaves the oneof to another member.
                    if let oneof = field.oneof {
                        if let other = seenOneofs[oneof] {
                            throw DynamicCodecError("\(definition.name): '\(other)' and '\(key)' are members of the same oneof")
                        }
                        seenOneofs[oneof] = key
                    }
                    message.fields[field.number] = .single(value)
                case let .list(valueType):
                    try reader.beginArray()
                    var items: [DynamicValue] = []
                    // `null` is no element, as in the generated codec and protobuf, unless it
                    // is a value of the element type (Value, NullValue): a wrapper's reader
                    // would take it for the wrapper's default.
                    let elementTakesNull = isJSONNullAValue(valueType)
                    while try reader.nextElement() {
                        if !elementTakesNull && reader.readNull() {
                            throw DynamicCodecError("\(context): null is not a list element")
                        }
                        do {
                            items.append(try readValue(&reader, type: valueType, context: context, depth: depth))
                        } catch is SkippedEnumName {}
                    }
                    message.fields[field.number] = .list(items)
                case let .map(keyType, valueType):
                    try reader.beginObject()
                    var entries: [DynamicMapEntry] = []
                    // A key written twice is refused, as the generated codec does; keys equal
                    // only as Swift strings go on to canonicalOrder's own error.
                    var keysHere: Set<DynamicValue> = []
                    // `null` is no map value either, unless it is one of the value type.
                    let valueTakesNull = isJSONNullAValue(valueType)
                    while let name = try reader.nextKey() {
                        // Checked, not repaired: a key of invalid UTF-8 must not become U+FFFD.
                        guard name.withUnsafeBytes({ UTF8Validation.isValid($0) }) else {
                            throw DynamicCodecError("\(context): a map key is not valid UTF-8")
                        }
                        let text = name.string
                        let mapKey = try self.mapKey(text, type: keyType, context: context)
                        let (inserted, earlier) = keysHere.insert(mapKey)
                        if !inserted, !Self.differInBytes(earlier, mapKey) {
                            throw DynamicCodecError("\(context): a map key (\(text.utf8.count) bytes) appears twice")
                        }
                        if !valueTakesNull && reader.readNull() {
                            throw DynamicCodecError("\(context): null is not a map value (key of \(text.utf8.count) bytes)")
                        }
                        do {
                            entries.append(DynamicMapEntry(key: mapKey, value: try readValue(&reader, type: valueType, context: "\(context)[\(text)]", depth: depth)))
                        } catch is SkippedEnumName {}
                    }
                    message.fields[field.number] = .map(try DynamicMapEntry.canonicalOrder(entries))
                }
            } catch let error as DynamicCodecError {
                throw error
            } catch {
                throw DynamicCodecError("\(context): \(error)")
            }
        }
        return message
    }

    /// Two string keys equal as Swift strings but not byte for byte.
    private static func differInBytes(_ first: DynamicValue, _ second: DynamicValue) -> Bool {
        guard case let (.string(a), .string(b)) = (first, second) else { return false }
        return !a.utf8.elementsEqual(b.utf8)
    }

    private func mapKey(_ text: String, type: ScalarType, context: String) throws(DynamicCodecError) -> DynamicValue {
        let invalid = DynamicCodecError("\(context): a map key (\(text.utf8.count) bytes) is not a \(type.rawValue)")
        switch type {
        case .int32, .sint32, .sfixed32, .int64, .sint64, .sfixed64, .uint32, .fixed32, .uint64, .fixed64:
            guard JSONIntegerKey.isCanonical(text.utf8, signed: [.int32, .sint32, .sfixed32, .int64, .sint64, .sfixed64].contains(type)) else { throw invalid }
        default:
            break
        }
        switch type {
        case .string: return .string(text)
        case .bool:
            guard text == "true" || text == "false" else { throw invalid }
            return .bool(text == "true")
        case .int32, .sint32, .sfixed32:
            guard let value = Int32(text) else { throw invalid }
            return .int(Int64(value))
        case .int64, .sint64, .sfixed64:
            guard let value = Int64(text) else { throw invalid }
            return .int(value)
        case .uint32, .fixed32:
            guard let value = UInt32(text) else { throw invalid }
            return .uint(UInt64(value))
        case .uint64, .fixed64:
            guard let value = UInt64(text) else { throw invalid }
            return .uint(value)
        case .float, .double, .bytes:
            throw invalid
        }
    }

    /// Reads one value; `DynamicCodecError` from nested messages, `JSONDecodingError` for bad JSON.
    func readValue(_ reader: inout JSONReader, type: ValueType, context: String, depth: Int) throws -> DynamicValue {
        switch type {
        case let .scalar(scalar):
            switch scalar {
            case .bool: return .bool(try reader.readBool())
            case .int32, .sint32, .sfixed32: return .int(try reader.readInteger(in: Int64(Int32.min)...Int64(Int32.max)))
            case .int64, .sint64, .sfixed64: return .int(try reader.readInteger(in: Int64.min...Int64.max))
            case .uint32, .fixed32: return .uint(try reader.readUnsignedInteger(maximum: UInt64(UInt32.max)))
            case .uint64, .fixed64: return .uint(try reader.readUnsignedInteger(maximum: UInt64.max))
            case .float: return .float(try reader.readFloat())
            case .double: return .double(try reader.readDouble())
            case .string: return .string(try reader.readString())
            case .bytes: return .bytes(try reader.readBase64())
            }
        case let .enumeration(index):
            let definition = schema.enums[index]
            if isJSONNullAValue(type) && reader.readNull() { return .enumeration(0) }
            if reader.peekIsString {
                let name = try reader.readString()
                // Byte for byte, as the generated codec compares names.
                guard let match = definition.cases.first(where: { $0.name.utf8.elementsEqual(name.utf8) }) else {
                    // A number in quotes, as the generated codec takes it.
                    if let number = Int32(name), String(number) == name { return .enumeration(number) }
                    if ignoresUnknownFields { throw SkippedEnumName() }
                    throw JSONDecodingError.unknownEnumName(enum: definition.name, name: name)
                }
                return .enumeration(match.value)
            }
            return .enumeration(Int32(try reader.readInteger(in: Int64(Int32.min)...Int64(Int32.max))))
        case let .message(index):
            return .message(try readMessage(&reader, type: index, depth: depth + 1))
        case .timestamp(.millis):
            // Held within the range the generated codec's `Date` keeps, so both read alike.
            return .timestamp(millis: UnixMillisTimestampCodec.clamped(try reader.readInteger(in: Int64.min...Int64.max)))
        }
    }

    // MARK: Writing

    /// Writes `message` as proto3 JSON, indented or on one line; fields in number order, so
    /// output is stable.
    public func encode(_ message: DynamicMessage, prettyPrinted: Bool = true) -> String {
        var codec = self
        codec.prettyPrinted = prettyPrinted
        return codec.render(message)
    }

    /// Writes `message` as compact proto3 JSON, or fails if a value has no JSON form (a
    /// Timestamp or Duration out of protobuf's range), as the generated codec's encoder does;
    /// ``encode(_:prettyPrinted:)`` writes such a value as `null` instead.
    public func encodeStrictly(_ message: DynamicMessage) throws(DynamicCodecError) -> String {
        var codec = self
        codec.prettyPrinted = false
        let problems = UnrepresentableValues()
        codec.unrepresentable = problems
        let output = codec.render(message)
        if let first = problems.first { throw DynamicCodecError(first) }
        return output
    }

    var prettyPrinted = true
    /// Where strict encoding notes values it wrote as `null`.
    var unrepresentable: UnrepresentableValues?
    private var newline: String { prettyPrinted ? "\n" : "" }
    private var colon: String { prettyPrinted ? ": " : ":" }
    private func pad(_ depth: Int) -> String { prettyPrinted ? String(repeating: "  ", count: depth) : "" }

    private func render(_ message: DynamicMessage) -> String {
        var output = ""
        write(message, indent: 0, to: &output)
        return output
    }

    func write(_ message: DynamicMessage, indent: Int, typeURL: String? = nil, to output: inout String) {
        let definition = schema.messages[message.type]
        if typeURL == nil, let wellKnown = WellKnownJSON(definition) {
            output += writeWellKnown(wellKnown, message, indent: indent)
            return
        }
        var members: [(String, (inout String) -> Void)] = []
        if let typeURL { members.append(("@type", { $0 += Self.quoted(typeURL) })) }
        for field in definition.fieldsByNumber {
            guard let value = message.fields[field.number] else { continue }
            let valueType = field.shape.valueType
            switch value {
            case let .single(single):
                if field.hasImplicitPresence && single.isDefault { continue }
                members.append((field.jsonName, { self.write(single, type: valueType, indent: indent + 1, to: &$0) }))
            case let .list(items):
                if items.isEmpty { continue }
                members.append((field.jsonName, { output in
                    output += "["
                    for (offset, item) in items.enumerated() {
                        output += offset == 0 ? newline : "," + newline
                        output += pad(indent + 2)
                        self.write(item, type: valueType, indent: indent + 2, to: &output)
                    }
                    output += newline + pad(indent + 1) + "]"
                }))
            case let .map(entries):
                if entries.isEmpty { continue }
                members.append((field.jsonName, { output in
                    output += "{"
                    for (offset, entry) in entries.enumerated() {
                        output += offset == 0 ? newline : "," + newline
                        output += pad(indent + 2) + Self.quoted(Self.keyText(entry.key)) + colon
                        self.write(entry.value, type: valueType, indent: indent + 2, to: &output)
                    }
                    output += newline + pad(indent + 1) + "}"
                }))
            }
        }
        writeObject(members, indent: indent, to: &output)
    }

    /// An object of members, each written by its closure, indented when pretty-printing.
    func writeObject(_ members: [(String, (inout String) -> Void)], indent: Int, to output: inout String) {
        guard !members.isEmpty else {
            output += "{}"
            return
        }
        output += "{"
        for (offset, member) in members.enumerated() {
            output += offset == 0 ? newline : "," + newline
            output += pad(indent + 1) + Self.quoted(member.0) + colon
            member.1(&output)
        }
        output += newline + pad(indent) + "}"
    }

    func write(_ value: DynamicValue, type: ValueType, indent: Int, to output: inout String) {
        switch value {
        case let .bool(flag): output += flag ? "true" : "false"
        case let .int(number):
            if case .scalar(.int64) = type { output += "\"\(number)\"" }
            else if case .scalar(.sint64) = type { output += "\"\(number)\"" }
            else if case .scalar(.sfixed64) = type { output += "\"\(number)\"" }
            else { output += String(number) }
        case let .uint(number):
            if case .scalar(.uint64) = type { output += "\"\(number)\"" }
            else if case .scalar(.fixed64) = type { output += "\"\(number)\"" }
            else { output += String(number) }
        case let .float(number): output += Self.floatingText(Double(number), description: number.description)
        case let .double(number): output += Self.floatingText(number, description: number.description)
        case let .string(text): output += Self.quoted(text)
        case let .bytes(data): output += "\"" + data.base64EncodedString() + "\""
        case .enumeration where isJSONNullAValue(type):
            output += "null"
        case let .enumeration(number):
            if case let .enumeration(index) = type, let match = schema.enums[index].cases.first(where: { $0.value == number }) {
                output += Self.quoted(match.name)
            } else {
                output += String(number)
            }
        case let .message(message): write(message, indent: indent, to: &output)
        case let .timestamp(seconds, nanos):
            if case .timestamp(.millis) = type {
                output += "\"\(seconds &* 1000 &+ Int64(nanos / 1_000_000))\""
            } else {
                var bytes: [UInt8] = []
                if RFC3339.format(seconds: seconds, nanos: nanos, into: &bytes) {
                    output += Self.quoted(String(decoding: bytes, as: UTF8.self))
                } else {
                    unrepresentable?.note("timestamp \(seconds) s + \(nanos) ns is outside what JSON can write")
                    output += "null"
                }
            }
        }
    }

    static func keyText(_ key: DynamicValue) -> String {
        switch key {
        case let .string(text): return text
        case let .bool(flag): return flag ? "true" : "false"
        case let .int(number): return String(number)
        case let .uint(number): return String(number)
        default: return ""
        }
    }

    static func floatingText(_ value: Double, description: String) -> String {
        if value.isNaN { return "\"NaN\"" }
        if value.isInfinite { return value > 0 ? "\"Infinity\"" : "\"-Infinity\"" }
        return description
    }

    /// `text` as a JSON string literal, control characters escaped: the generated codecs'
    /// escaping (the runtime's `JSONWriter`), so both write a string's bytes alike.
    public static func quoted(_ text: String) -> String {
        var writer = JSONWriter(capacity: text.utf8.count + 2)
        writer.writeString(text)
        return String(decoding: writer.bytes, as: UTF8.self)
    }
}

/// An enum name the schema does not know, read while unknown names are ignored: the value is
/// dropped (the field stays unset, a list or map loses the element).
struct SkippedEnumName: Error {}

/// Values strict encoding could not write, first one first.
final class UnrepresentableValues: @unchecked Sendable {
    private(set) var first: String?
    func note(_ problem: String) { if first == nil { first = problem } }
}
