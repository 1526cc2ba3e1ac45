import Foundation
import KitchenSink
import SwitchboardDynamic
import SwitchboardRuntime
import SwitchboardSchema
import Testing

/// Bytes that make the schema-at-run-time codec (`call`, `mock-server`, `listen`) work
/// without bound: each stays bounded.
@Suite struct DynamicHostileInputTests {
    static let schema = DynamicCodecAgreementTests.kitchenSink

    /// An `Any` packing an `Any` packing ... `levels` deep: about 50 bytes a level.
    static func nestedAny(levels: Int) -> Data {
        let url = Array("type.googleapis.com/google.protobuf.Any".utf8)
        var bytes: [UInt8] = []
        for _ in 0..<levels {
            var outer: [UInt8] = [0x0A]
            outer += varint(url.count) + url
            outer += [0x12] + varint(bytes.count) + bytes
            bytes = outer
        }
        return Data(bytes)
    }

    static func varint(_ value: Int) -> [UInt8] {
        var value = UInt64(value), out: [UInt8] = []
        while value >= 0x80 {
            out.append(UInt8(value & 0x7F) | 0x80)
            value >>= 7
        }
        return out + [UInt8(value)]
    }

    @Test func deeplyNestedAnyIsWrittenToTheDepthLimitThenAsRawBytes() throws {
        let any = try #require(Self.schema.messageIndex(named: "google.protobuf.Any"))
        // 3,000 levels: before, writing it as JSON recursed once per level (and a
        // megabyte of input went tens of thousands deep, past the stack).
        let message = try DynamicBinaryCodec(schema: Self.schema).decode(Self.nestedAny(levels: 3000), as: any)
        let codec = DynamicJSONCodec(schema: Self.schema)
        let json = codec.encode(message, prettyPrinted: false)
        // One object a level, as the runtime's writer counts them: 99 Anys unpacked, and the
        // 100th written as its URL and bytes, the 100 objects a reader takes (the 100th,
        // unpacked, would hold the 101st object).
        let unpacked = json.components(separatedBy: "\"@type\"").count - 1
        #expect(unpacked == codec.maximumDepth, "\(unpacked) levels unpacked")
        #expect(JSONNesting.deepest(in: json.utf8) == codec.maximumDepth)
        // The rest is there, as the packed bytes, under a member no decoder takes.
        #expect(json.contains("\"@unreadableBytes\":\""))
        #expect(!json.contains("\"value\":\""))
        #expect(throws: DynamicCodecError.self) { try codec.decode(Data(json.utf8), as: any) }
    }

    /// Anys share one depth budget with what encloses them, as in the runtime's writer: each
    /// Any no longer started a fresh `maximumDepth` of messages, letting writing recurse about
    /// three times the documented depth. 99 Anys, one inside another around an empty one
    /// (100 JSON objects, the most a reader takes), are written by both codecs alike, and read
    /// back; 100 around an empty one (101 objects) are refused by both strict encoders.
    @Test func nestedAnysAreWrittenWithinOneDepthBudget() throws {
        let any = try #require(Self.schema.messageIndex(named: "google.protobuf.Any"))
        let binary = DynamicBinaryCodec(schema: Self.schema)
        let codec = DynamicJSONCodec(schema: Self.schema)
        let fits = Self.nestedAny(levels: codec.maximumDepth - 1)
        let text = try codec.encodeStrictly(binary.decode(fits, as: any))
        #expect(try ProtoAny(serializedData: fits).jsonString() == text)
        // Read back (the innermost Any's empty value was on the wire, so compared as JSON).
        #expect(try ProtoAny(jsonString: text).jsonString() == text)
        let deeper = Self.nestedAny(levels: codec.maximumDepth)
        #expect(throws: JSONEncodingError.self) { try ProtoAny(serializedData: deeper).jsonString() }
        #expect(throws: DynamicCodecError.self) { try codec.encodeStrictly(binary.decode(deeper, as: any)) }

        // Messages inside the packed one take from the same budget: WellKnown's `anything`
        // (field 18) holding `levels` Anys around one packing a Composite whose `point` (field
        // 10) is set. With 97 the point's object is the 100th level; with 98, the 101st.
        let wellKnown = try #require(Self.schema.messageIndex(named: "WellKnown"))
        for (levels, writes) in [(97, true), (98, false)] {
            let composite: [UInt8] = [0x52, 0x02, 0x08, 0x02]
            let compositeURL = Array("type.googleapis.com/switchboard.test.Composite".utf8)
            var bytes: [UInt8] = [0x0A]
            bytes += Self.varint(compositeURL.count) + compositeURL
            bytes += [0x12] + Self.varint(composite.count) + composite
            let anyURL = Array("type.googleapis.com/google.protobuf.Any".utf8)
            for _ in 0..<levels {
                var outer: [UInt8] = [0x0A]
                outer += Self.varint(anyURL.count) + anyURL
                outer += [0x12] + Self.varint(bytes.count) + bytes
                bytes = outer
            }
            let top = Data([0x92, 0x01] + Self.varint(bytes.count) + bytes)
            let message = try binary.decode(top, as: wellKnown)
            if writes {
                #expect((try? codec.encodeStrictly(message)) != nil, "\(levels)")
            } else {
                #expect(throws: DynamicCodecError.self, "\(levels)") { try codec.encodeStrictly(message) }
            }
        }
    }

    /// An Any whose bytes do not decode is written, leniently, as its URL and its bytes under
    /// `"@unreadableBytes"`; neither codec reads that back, even ignoring unknown fields. Under
    /// `"value"` it read back as a StringValue of the base64 text.
    @Test func anUnreadableAnyDoesNotReadBackAsAValue() throws {
        let wellKnown = try #require(Self.schema.messageIndex(named: "WellKnown"))
        var codec = DynamicJSONCodec(schema: Self.schema)
        for url in ["type.googleapis.com/google.protobuf.StringValue", "type.googleapis.com/switchboard.test.Point"] {
            let broken = WellKnown(anything: ProtoAny(typeUrl: url, value: Data([0x0A, 0x05])))
            let message = try DynamicBinaryCodec(schema: Self.schema).decode(broken.serializedData(), as: wellKnown)
            let json = codec.encode(message, prettyPrinted: false)
            #expect(json.contains(#""anything":{"@type":""# + url + #"","@unreadableBytes":"CgU="}"#), "\(json)")
            for ignoring in [false, true] {
                codec.ignoresUnknownFields = ignoring
                #expect(throws: DynamicCodecError.self, "\(url) \(ignoring)") { try codec.decode(Data(json.utf8), as: wellKnown) }
                var options = JSONDecodingOptions(ignoreUnknownFields: ignoring)
                options.anyTypes = AnyTypeRegistry()
                options.anyTypes.register(Point.self)
                #expect(throws: JSONDecodingError.self, "\(url) \(ignoring)") { try WellKnown(jsonString: json, options: options) }
            }
            codec.ignoresUnknownFields = false
        }
    }

    @Test func aMessageMergedManyTimesKeepsEveryUnknownFieldOnce() throws {
        // A plain message field (not a well-known type, which has a form of its own).
        func isPlainMessage(_ field: FieldDefinition) -> Bool {
            guard case let .singular(.message(index)) = field.shape else { return false }
            return !Self.schema.messages[index].fullName.hasPrefix("google.protobuf.")
        }
        let holder = try #require(Self.schema.messages.firstIndex { $0.fields.contains(where: isPlainMessage) })
        let field = try #require(Self.schema.messages[holder].fields.first(where: isPlainMessage))
        // The same message field 5,000 times, each carrying one unknown field (number 999):
        // merged, they keep 5,000 unknown fields, appended in place.
        let tag = Self.varint(field.number << 3 | 2)
        let unknown: [UInt8] = Self.varint(999 << 3) + [1]
        var bytes: [UInt8] = []
        for _ in 0..<5000 { bytes += tag + Self.varint(unknown.count) + unknown }
        let message = try DynamicBinaryCodec(schema: Self.schema).decode(Data(bytes), as: holder)
        guard case let .single(.message(inner))? = message.fields[field.number] else {
            Issue.record("the field is one merged message")
            return
        }
        #expect(inner.unknownFields.count == 5000 * unknown.count)
    }
}
