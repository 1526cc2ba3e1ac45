import Foundation

extension ProtoAny {
    /// The prefix protobuf's libraries give type URLs.
    public static let defaultTypeURLPrefix = "type.googleapis.com"

    /// The member under which a lenient writer (the dynamic codec's non-strict JSON) keeps the
    /// bytes of an Any it could not read, next to `"@type"`. No decoder takes it, whatever its
    /// options, so such JSON never reads back as some other value (as `"value"` would, the
    /// member of a packed StringValue or BytesValue).
    package static let unreadableBytesJSONKey: StaticString = "@unreadableBytes"

    /// Packs `message`: its type's URL and its binary encoding.
    public init(packing message: some ProtoMessage, typeURLPrefix: String = ProtoAny.defaultTypeURLPrefix) {
        self.init(typeUrl: typeURLPrefix + "/" + type(of: message).protoMessageName, value: message.serializedData())
    }

    /// Whether the packed message is of `type`: the URL's last `/`-separated component is its
    /// full name, byte for byte.
    public func holds<Message: ProtoMessage>(_ type: Message.Type) -> Bool {
        // Bytes, not `hasSuffix` or `==`, which take "\u{212A}" (the Kelvin sign) for "K".
        let url = typeUrl.utf8, name = Message.protoMessageName.utf8
        if url.elementsEqual(name) { return true }
        return url.count > name.count && url.suffix(name.count + 1).elementsEqual([UInt8(ascii: "/")] + name)
    }

    /// The packed message as `type`, or `nil` if it holds another type.
    public func unpack<Message: ProtoMessage>(_ type: Message.Type, options: WireDecodingOptions = .init()) throws(WireDecodingError) -> Message? {
        guard holds(type) else { return nil }
        return try Message(serializedData: value, options: options)
    }

    /// The packed message's JSON with an `"@type"` member first; a well-known type, whose JSON
    /// is not an object, sits under `"value"`. The type must be in ``JSONWriter/anyTypes``.
    public func encodeJSON(into writer: inout JSONWriter) throws(JSONEncodingError) {
        if typeUrl.isEmpty && value.isEmpty {
            writer.beginObject()
            writer.endObject()
            return
        }
        guard let type = writer.anyTypes.type(forURL: typeUrl) else {
            throw .invalidAny(typeURL: typeUrl, reason: "the type is not in the AnyTypeRegistry")
        }
        try Self.writeJSON(of: type, typeURL: typeUrl, bytes: value, to: &writer)
    }

    static func writeJSON<Message: ProtoMessage>(of type: Message.Type, typeURL: String, bytes: Data, to writer: inout JSONWriter) throws(JSONEncodingError) {
        guard writer.anyDepth < writer.maximumAnyDepth else {
            throw .invalidAny(typeURL: typeURL, reason: "Any values nested deeper than \(writer.maximumAnyDepth)")
        }
        // The Any's object takes one level; its packed message may nest only within the levels
        // left below it, so each Any cannot start a fresh `maximumDepth` of recursion.
        let outerDepth = writer.depth
        let remaining = writer.maximumDepth - outerDepth - 1
        guard remaining >= 0 else {
            throw .invalidAny(typeURL: typeURL, reason: "nested deeper than \(writer.maximumDepth) objects and arrays")
        }
        let outerTypeURL = writer.anyTypeURL
        writer.anyDepth += 1
        writer.anyTypeURL = typeURL
        defer {
            writer.anyDepth -= 1
            writer.anyTypeURL = outerTypeURL
        }
        let tooDeep = writer.tooDeepInAny
        let message: Message
        do throws(WireDecodingError) {
            // Binary nests deeper than JSON for some types (each level of a Struct is three
            // messages: the Struct, its map entry and the Value), so the bytes are decoded
            // within three wire levels a JSON level, and the JSON written is held to the
            // levels left (below): what the JSON reader took, an Any writes back.
            message = try Message(serializedData: bytes, options: WireDecodingOptions(maximumDepth: Self.wireDepth(forJSONLevels: remaining)))
        } catch {
            if case .nestingTooDeep = error { throw tooDeep }
            throw .invalidAny(typeURL: typeURL, reason: "its bytes do not decode: \(error)")
        }
        let deepestOutside = writer.deepest
        writer.beginObject()
        writer.deepest = writer.depth
        writer.writeKey("@type")
        writer.writeString(typeURL)
        if bytes.isEmpty && Message.self == ProtoValue.self {
            // A packed Value with no kind set has no JSON form to put in "value" (writing it
            // failed the whole message): `"@type"` alone, as protobuf's C++ writes an Any whose
            // bytes are empty, and as this reader reads back (other types keep their "value").
            writer.endObject()
            writer.deepest = max(deepestOutside, writer.deepest)
            return
        } else if !Message.jsonIsFieldObject {
            writer.writeKey("value")
            try message.encodeJSON(into: &writer)
            guard writer.deepest <= writer.maximumDepth else { throw tooDeep }
            writer.deepest = max(deepestOutside, writer.deepest)
        } else {
            // The fields follow "@type" in the same object: write them to a writer of their
            // own and splice its members in.
            var fields = JSONWriter()
            fields.anyTypes = writer.anyTypes
            fields.maximumAnyDepth = writer.maximumAnyDepth
            fields.anyDepth = writer.anyDepth
            fields.anyTypeURL = typeURL
            fields.maximumDepth = writer.maximumDepth
            // Its own object stands for the Any's, which is open here.
            fields.depth = outerDepth
            fields.deepest = outerDepth
            try message.encodeJSON(into: &fields)
            guard fields.deepest <= writer.maximumDepth else { throw tooDeep }
            writer.deepest = max(deepestOutside, fields.deepest)
            let members = fields.bytes.dropFirst().dropLast()
            if !members.isEmpty {
                writer.writeRawValue([UInt8(ascii: ",")] + members)
            }
        }
        writer.endObject()
    }

    /// The wire nesting that `levels` of JSON objects and arrays can take: three messages a
    /// level at most (a Struct, its map entry, its Value), and the packed message's own.
    static func wireDepth(forJSONLevels levels: Int) -> Int {
        levels > (Int.max - 2) / 3 ? Int.max : 3 * levels + 2
    }

    /// Reads `{"@type": url, ...}` (the `"@type"` member may come anywhere), decoding the
    /// rest as the named type from ``JSONDecodingOptions/anyTypes`` and packing it.
    public mutating func decodeJSON(from reader: inout JSONReader) throws(JSONDecodingError) {
        reader.skipWhitespace()
        let offset = reader.offset
        // A first pass over a copy of the reader finds "@type"; the second decodes.
        var scan = reader
        try scan.beginObject()
        var url: String?
        var memberCount = 0
        while let name = try scan.nextKey() {
            memberCount += 1
            if name.matches("@type") {
                guard url == nil else { throw .invalidAny(offset: offset, reason: "\"@type\" appears twice") }
                url = try scan.readString()
            } else if name.matches(Self.unreadableBytesJSONKey) {
                throw .invalidAny(offset: offset, reason: "it holds bytes that could not be read when it was written")
            } else {
                try scan.skipValue()
            }
        }
        guard let url else {
            if memberCount == 0 {
                reader = scan
                self = ProtoAny()
                return
            }
            throw .invalidAny(offset: offset, reason: "the object has no \"@type\"")
        }
        guard let type = reader.options.anyTypes.type(forURL: url) else {
            throw .invalidAny(offset: offset, reason: "type \(String(reflecting: url)) is not in the AnyTypeRegistry")
        }
        let bytes = try Self.readJSON(of: type, from: &reader, offset: offset)
        typeUrl = url
        value = bytes
    }

    static func readJSON<Message: ProtoMessage>(of type: Message.Type, from reader: inout JSONReader, offset: Int) throws(JSONDecodingError) -> Data {
        var message = Message()
        if !Message.jsonIsFieldObject {
            try reader.beginObject()
            var sawValue = false
            while let name = try reader.nextKey() {
                if name.matches("@type") {
                    _ = try reader.readString()
                } else if name.matches("value"), !sawValue {
                    sawValue = true
                    try message.decodeJSON(from: &reader)
                } else {
                    throw .invalidAny(offset: offset, reason: "a packed \(Message.protoMessageName) has only \"@type\" and \"value\"")
                }
            }
        } else {
            try reader.beginObject()
            // Nested Anys set their own depth; this one's comes back after the fields.
            let outer = reader.typeMemberDepth
            reader.skipsTypeMember = true
            defer { reader.typeMemberDepth = outer }
            try message.decodeJSONFields(from: &reader)
        }
        return message.serializedData()
    }
}

extension ProtoAny {
    /// Its JSON is the packed message's, not an object of `typeUrl` and `value`.
    public static var jsonIsFieldObject: Bool { false }
}
