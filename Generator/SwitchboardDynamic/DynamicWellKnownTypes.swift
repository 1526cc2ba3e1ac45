import Foundation
import SwitchboardRuntime
import SwitchboardSchema

/// The well-known types whose JSON is not an object of their fields. The dynamic codecs
/// convert them through the runtime's own types, so `call` and `mock-server` write exactly
/// what generated code writes.
enum WellKnownJSON {
    /// A type with a JSON form of its own, through its runtime type.
    case runtime(any ProtoMessage.Type)
    /// `google.protobuf.Any`: its JSON names a schema type, which the runtime cannot know.
    case any

    init?(_ definition: MessageDefinition) {
        guard definition.importedFrom != nil, definition.fullName.hasPrefix(WellKnownTypes.packageName + "."),
              let type = AnyTypeRegistry.shared.type(forURL: definition.fullName), !type.jsonIsFieldObject else { return nil }
        self = type == ProtoAny.self ? .any : .runtime(type)
    }
}

extension DynamicJSONCodec {
    /// Whether JSON `null` is a value of `type` (google.protobuf.Value and NullValue), not "unset".
    func isJSONNullAValue(_ type: ValueType) -> Bool {
        switch type {
        case let .message(index):
            guard case let .runtime(type)? = WellKnownJSON(schema.messages[index]) else { return false }
            return type.jsonNullIsValue
        case let .enumeration(index): return schema.enums[index].importedFrom != nil && schema.enums[index].fullName == "google.protobuf.NullValue"
        default: return false
        }
    }

    func readWellKnown(_ kind: WellKnownJSON, _ reader: inout JSONReader, type: Int, depth: Int) throws(DynamicCodecError) -> DynamicMessage {
        switch kind {
        case let .runtime(runtimeType):
            let bytes: Data
            do throws(JSONDecodingError) {
                // Held to the depth the generated codec's reader has left here: this codec's
                // reader has a looser bound (see `decode`), under which a Struct or ListValue
                // nested twice as deep before the wire form refused it.
                bytes = try reader.withMaximumDepth(maximumDepth) { (inner: inout JSONReader) throws(JSONDecodingError) -> Data in
                    try Self.bytes(of: runtimeType, from: &inner)
                }
            } catch {
                throw DynamicCodecError("\(schema.messages[type].fullName): \(error.description)")
            }
            // Bounded on the wire, where each level of a Struct or ListValue is two messages
            // (it and its Value) and JSON has one object or array: two levels for each this
            // codec has left, and one for the innermost Value, so a Struct as deep as the
            // generated codec reads is not refused at half that depth.
            var wire = binary
            let levels = maximumDepth - depth
            wire.maximumDepth = levels > (Int.max - 1) / 2 ? Int.max : 2 * levels + 1
            return try wire.decode(bytes, as: type)
        case .any:
            return try readAny(&reader, type: type, depth: depth)
        }
    }

    private static func bytes<Message: ProtoMessage>(of type: Message.Type, from reader: inout JSONReader) throws(JSONDecodingError) -> Data {
        var message = Message()
        try message.decodeJSON(from: &reader)
        return message.serializedData()
    }

    /// `{"@type": url, ...}`: the fields of the schema type the URL names, or `"value"` for a
    /// well-known type with its own JSON.
    private func readAny(_ reader: inout JSONReader, type: Int, depth: Int) throws(DynamicCodecError) -> DynamicMessage {
        // The runtime's rules, so `call` and generated code agree: "@type" once, and an object
        // with other members but no "@type" is an error (only `{}` is the empty Any).
        var url: String?
        var memberCount = 0
        var scan = reader
        do {
            try scan.beginObject()
            while let name = try scan.nextKey() {
                memberCount += 1
                if name.matches("@type") {
                    guard url == nil else { throw DynamicCodecError("google.protobuf.Any: \"@type\" appears twice") }
                    url = try scan.readString()
                } else if name.matches(ProtoAny.unreadableBytesJSONKey) {
                    // What a lenient write keeps of an Any it could not read: not a value.
                    throw DynamicCodecError("google.protobuf.Any: it holds bytes that could not be read when it was written")
                } else {
                    try scan.skipValue()
                }
            }
        } catch let error as DynamicCodecError {
            throw error
        } catch {
            throw DynamicCodecError("google.protobuf.Any: \(error)")
        }
        guard let url else {
            guard memberCount == 0 else { throw DynamicCodecError("google.protobuf.Any: the object has no \"@type\"") }
            reader = scan
            return DynamicMessage(type: type)
        }
        let name = Self.typeName(inURL: url)
        guard let packed = messageIndex(ofTypeName: name) else {
            throw DynamicCodecError("google.protobuf.Any: type \(String(reflecting: url)) is not in the schema")
        }
        var inner: DynamicMessage?
        if WellKnownJSON(schema.messages[packed]) != nil {
            do {
                try reader.beginObject()
                while let member = try reader.nextKey() {
                    if member.matches("@type") {
                        _ = try reader.readString()
                    } else if member.matches("value") {
                        guard inner == nil else { throw DynamicCodecError("google.protobuf.Any: \"value\" appears twice") }
                        inner = try readMessage(&reader, type: packed, depth: depth + 1)
                    } else {
                        throw DynamicCodecError("google.protobuf.Any: a packed \(name) has only \"@type\" and \"value\"")
                    }
                }
            } catch let error as DynamicCodecError {
                throw error
            } catch {
                throw DynamicCodecError("google.protobuf.Any: \(error)")
            }
        } else {
            inner = try readMessage(&reader, type: packed, depth: depth + 1, skippingTypeMember: true)
        }
        // As read from the wire: proto3 defaults (an empty URL or packed message) are absent.
        let bytes = binary.encode(inner ?? DynamicMessage(type: packed))
        var fields: [Int: DynamicField] = [:]
        if !url.isEmpty { fields[1] = .single(.string(url)) }
        if !bytes.isEmpty { fields[2] = .single(.bytes(bytes)) }
        return DynamicMessage(type: type, fields: fields)
    }

    func writeWellKnown(_ kind: WellKnownJSON, _ message: DynamicMessage, indent: Int) -> String {
        switch kind {
        case let .runtime(runtimeType):
            // A value the runtime refuses (a timestamp out of range) prints as null, or fails
            // strict encoding.
            do {
                return try Self.json(of: runtimeType, bytes: binary.encode(message), maximumDepth: maximumDepth > Int.max / 3 ? Int.max : 3 * maximumDepth)
            } catch {
                unrepresentable?.note("\(schema.messages[message.type].fullName): \(error)")
                return "null"
            }
        case .any:
            var bytes = Data()
            if case let .single(.bytes(value))? = message.fields[2] { bytes = value }
            guard case let .single(.string(url))? = message.fields[1] else {
                // No type but a payload: JSON cannot say what it is (the generated codec
                // refuses it too), and `{}` would drop the bytes.
                if !bytes.isEmpty {
                    unrepresentable?.note("google.protobuf.Any: \(bytes.count) bytes with no type URL")
                    return "null"
                }
                return "{}"
            }
            var output = ""
            let unpackedAny: (type: Int, message: DynamicMessage)
            do throws(DynamicCodecError) {
                unpackedAny = try unpacked(url: url, bytes: bytes, indent: indent)
            } catch {
                // The URL and the raw bytes, so nothing is hidden; strict encoding fails, as
                // the generated codec's encoder does. Not under "value", where they would
                // read back as a packed StringValue or BytesValue: under a member that both
                // codecs' decoders refuse.
                unrepresentable?.note("google.protobuf.Any \(String(reflecting: url)): \(error.message)")
                writeObject([("@type", { $0 += Self.quoted(url) }),
                             (ProtoAny.unreadableBytesJSONKey.description, { $0 += Self.quoted(bytes.base64EncodedString()) })],
                            indent: indent, to: &output)
                return output
            }
            let packed = unpackedAny.type, inner = unpackedAny.message
            if bytes.isEmpty, case .runtime(let type)? = WellKnownJSON(schema.messages[packed]), ObjectIdentifier(type) == ObjectIdentifier(ProtoValue.self) {
                // A packed Value with no kind has no JSON form: `"@type"` alone, as the
                // generated codec writes it.
                writeObject([("@type", { $0 += Self.quoted(url) })], indent: indent, to: &output)
            } else if WellKnownJSON(schema.messages[packed]) != nil {
                writeObject([("@type", { $0 += Self.quoted(url) }), ("value", { self.write(inner, indent: indent + 1, to: &$0) })],
                            indent: indent, to: &output)
            } else {
                write(inner, indent: indent, typeURL: url, to: &output)
            }
            // Held to the JSON levels left, as the runtime's writer holds an Any: what the JSON
            // reader took, this writes back, and nothing deeper.
            if indent + JSONNesting.deepest(in: output.utf8) > maximumDepth {
                unrepresentable?.note("google.protobuf.Any \(String(reflecting: url)): its message would nest deeper than \(maximumDepth) objects and arrays")
                output = ""
                writeObject([("@type", { $0 += Self.quoted(url) }),
                             (ProtoAny.unreadableBytesJSONKey.description, { $0 += Self.quoted(bytes.base64EncodedString()) })],
                            indent: indent, to: &output)
            }
            return output
        }
    }

    /// The message an Any packs: the schema type its URL names, and its bytes decoded as that
    /// type. Fails if the type is not in the schema, the bytes do not decode, or the packed
    /// message would nest deeper than `maximumDepth` objects and arrays.
    ///
    /// `indent` is the number of objects and arrays around the Any, as the runtime's writer
    /// counts them. Each level of packed messages is decoded here, as it is written, within
    /// the levels left below the Any, as the runtime's writer decodes it: an Any does not start
    /// a fresh `maximumDepth` of recursion, and nesting past the limit (an Any in an Any, 25
    /// bytes a level) stays as raw bytes, so hostile input cannot recurse without bound.
    private func unpacked(url: String, bytes: Data, indent: Int) throws(DynamicCodecError) -> (type: Int, message: DynamicMessage) {
        // The Any's object takes one level.
        let remaining = maximumDepth - indent - 1
        guard remaining >= 0 else { throw DynamicCodecError("nested deeper than \(maximumDepth) objects and arrays") }
        guard let packed = messageIndex(ofTypeName: Self.typeName(inURL: url)) else {
            throw DynamicCodecError("the type is not in the schema")
        }
        // Binary nests deeper than JSON for some types (a Struct inside a Struct is two more
        // messages here, the Value and the Struct): decoded within three wire levels a JSON
        // level, as the runtime's writer decodes them, the JSON is then held to the levels
        // left (`writeWellKnown`). This codec counts the packed message itself as a level.
        var wire = binary
        wire.maximumDepth = remaining > (Int.max - 3) / 3 ? Int.max : 3 * remaining + 3
        do throws(DynamicCodecError) {
            return (packed, try wire.decode(bytes, as: packed))
        } catch {
            // Said as the runtime's writer says it when the bytes fail only for their depth.
            if (try? binary.decode(bytes, as: packed)) != nil {
                throw DynamicCodecError("its message would nest deeper than \(maximumDepth) objects and arrays")
            }
            throw error
        }
    }

    /// The full type name in a type URL: what follows its last `/`.
    private static func typeName(inURL url: String) -> String {
        url.lastIndex(of: "/").map { String(url[url.index(after: $0)...]) } ?? url
    }

    /// The schema type named `name`, compared byte for byte as the generated codec and
    /// protobuf compare it (Swift's `==` takes "\u{212A}", the Kelvin sign, for "K").
    private func messageIndex(ofTypeName name: String) -> Int? {
        schema.messages.firstIndex { $0.fullName.utf8.elementsEqual(name.utf8) }
    }

    /// The runtime's JSON for `bytes`. Its decoder counts three levels for each Struct inside
    /// a Struct (the map entry, the Value, the Struct) where this codec counts two, so it is
    /// given room for all this codec accepted: a deep but valid Struct must not print as null.
    private static func json<Message: ProtoMessage>(of type: Message.Type, bytes: Data, maximumDepth: Int) throws -> String {
        let message = try Message(serializedData: bytes, options: WireDecodingOptions(maximumDepth: maximumDepth))
        var writer = JSONWriter()
        try message.encodeJSON(into: &writer)
        return String(decoding: writer.bytes, as: UTF8.self)
    }
}
