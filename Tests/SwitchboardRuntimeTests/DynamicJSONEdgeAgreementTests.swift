import Foundation
import KitchenSink
import SignalChat
import SwitchboardDynamic
import SwitchboardRuntime
import SwitchboardSchema
import Testing

/// Edge cases where the schema-at-run-time JSON codec (`call`, `listen`, `mock-server`)
/// disagreed with the generated codec (from the review): each input now gets one answer.
@Suite struct DynamicJSONEdgeAgreementTests {
    static let schema = DynamicCodecAgreementTests.kitchenSink

    /// A string is escaped as the generated codecs escape it, byte for byte (`\b` and `\f`
    /// short, other controls as `\u00XX`, non-ASCII as it is).
    @Test func stringsAreEscapedAsTheGeneratedCodecsEscapeThem() {
        let text = "a\u{8}\u{C}\u{1}\u{1F}\"\\\n\r\té\u{1F600}"
        var writer = JSONWriter()
        writer.writeString(text)
        #expect(DynamicJSONCodec.quoted(text) == String(decoding: writer.bytes, as: UTF8.self))
        #expect(DynamicJSONCodec.quoted(text) == #""a\b\f\u0001\u001f\"\\\n\r\té😀""#)
    }

    /// Names match byte for byte, as in the generated codec and protobuf: "\u{212A}" (the
    /// Kelvin sign) is one Swift String with "K" but names no field, enum value or type.
    @Test func namesWithAKelvinSignAreNotTheirKLookalikes() throws {
        let signal = DynamicCodecAgreementTests.signal
        let preKey = try #require(signal.messageIndex(named: "EcPreKey"))
        let signalCodec = DynamicJSONCodec(schema: signal)
        // Raw UTF-8 and a JSON escape.
        for member in ["public\u{212A}ey", #"public\u212Aey"#] {
            let text = #"{""# + member + #"":"AQI="}"#
            #expect(throws: JSONDecodingError.self, "\(text)") { try EcPreKey(jsonString: text) }
            #expect(throws: DynamicCodecError.self, "\(text)") { try signalCodec.decode(Data(text.utf8), as: preKey) }
        }
        #expect(try signalCodec.decode(Data(#"{"publicKey":"AQI="}"#.utf8), as: preKey).fields[2] == .single(.bytes(Data([1, 2]))))

        let codec = DynamicJSONCodec(schema: Self.schema)
        let composite = try #require(Self.schema.messageIndex(named: "Composite"))
        let level = "{\"inner\":{\"level\":\"LEVEL_UN\u{212A}NOWN\"}}"
        #expect(throws: JSONDecodingError.self) { try Composite(jsonString: level) }
        #expect(throws: DynamicCodecError.self) { try codec.decode(Data(level.utf8), as: composite) }

        let wellKnown = try #require(Self.schema.messageIndex(named: "WellKnown"))
        var options = JSONDecodingOptions()
        options.anyTypes = AnyTypeRegistry()
        options.anyTypes.register(WellKnown.self)
        let packed = #"{"anything":{"@type":"type.googleapis.com/switchboard.test.WellKnown"}}"#
        #expect(try WellKnown(jsonString: packed, options: options).anything?.typeUrl.isEmpty == false)
        #expect(try codec.decode(Data(packed.utf8), as: wellKnown).fields[18] != nil)
        let kelvin = "{\"anything\":{\"@type\":\"type.googleapis.com/switchboard.test.Well\u{212A}nown\"}}"
        #expect(throws: JSONDecodingError.self) { try WellKnown(jsonString: kelvin, options: options) }
        #expect(throws: DynamicCodecError.self) { try codec.decode(Data(kelvin.utf8), as: wellKnown) }
    }

    /// Messages nested through lists count their arrays too, in both codecs, as protobuf's
    /// parser counts them: the dynamic codec took 99 list-nested levels (199 objects and
    /// arrays) that the generated codec refused (from the JSON review).
    @Test func messagesNestedThroughListsAreRefusedAtTheSameDepthInBothCodecs() throws {
        let type = try #require(Self.schema.messageIndex(named: "TreeNode"))
        let codec = DynamicJSONCodec(schema: Self.schema)
        func nested(_ levels: Int) -> String {
            String(repeating: #"{"children":["#, count: levels) + "{}" + String(repeating: "]}", count: levels)
        }
        // 49 levels: 99 objects and arrays, within both bounds.
        #expect(try TreeNode(jsonString: nested(49)).children.count == 1)
        #expect(try codec.decode(Data(nested(49).utf8), as: type).fields[3] != nil)
        for levels in [50, 99] {
            #expect(throws: JSONDecodingError.self, "\(levels)") { try TreeNode(jsonString: nested(levels)) }
            #expect(throws: DynamicCodecError.self, "\(levels)") { try codec.decode(Data(nested(levels).utf8), as: type) }
        }
    }

    /// A Struct 60 and 99 objects deep reads in both codecs and prints back as itself; 100
    /// is refused by both. The dynamic codec re-checked the Struct on the wire, where each
    /// level is two messages, and so refused past 50.
    @Test func deepStructsReadToTheSameDepthInBothCodecs() throws {
        let type = try #require(Self.schema.messageIndex(named: "WellKnown"))
        let codec = DynamicJSONCodec(schema: Self.schema)
        let binary = DynamicBinaryCodec(schema: Self.schema)
        let nested = { (depth: Int) -> String in #"{"object":"# + String(repeating: #"{"a":"#, count: depth) + "1" + String(repeating: "}", count: depth) + "}" }
        for depth in [60, 99] {
            let text = nested(depth)
            let generated = try WellKnown(jsonString: text)
            let dynamic = try codec.decode(Data(text.utf8), as: type)
            // Compared as bytes: read back, the wire form (two messages a level) is deeper than
            // the binary reader's default limit.
            #expect(binary.encode(dynamic) == generated.serializedData(), "\(depth)")
            #expect(try codec.encodeStrictly(dynamic) == text, "\(depth)")
        }
        #expect(throws: JSONDecodingError.self) { try WellKnown(jsonString: nested(100)) }
        #expect(throws: DynamicCodecError.self) { try codec.decode(Data(nested(100).utf8), as: type) }
    }

    /// A Struct or ListValue nested past the limit is refused by the JSON reader at the depth
    /// the generated codec refuses it, with its error. The dynamic codec's reader has a looser
    /// bound of its own, under which the runtime's Struct decoder read twice as deep, leaving
    /// the refusal to the wire form's depth check.
    @Test func aStructTooDeepIsRefusedWhereTheGeneratedCodecRefusesIt() throws {
        let type = try #require(Self.schema.messageIndex(named: "WellKnown"))
        let codec = DynamicJSONCodec(schema: Self.schema)
        let texts = [
            #"{"object":"# + String(repeating: #"{"a":"#, count: 200) + "1" + String(repeating: "}", count: 201),
            #"{"list":"# + String(repeating: "[", count: 200) + String(repeating: "]", count: 200) + "}",
            #"{"value":"# + String(repeating: #"{"a":"#, count: 100) + "1" + String(repeating: "}", count: 101),
        ]
        for text in texts {
            #expect(throws: JSONDecodingError.nestingTooDeep(limit: 100)) { try WellKnown(jsonString: text) }
            let refusal = JSONDecodingError.nestingTooDeep(limit: 100).description
            do throws(DynamicCodecError) {
                _ = try codec.decode(Data(text.utf8), as: type)
                Issue.record("\(text.prefix(20)) must be refused")
            } catch {
                #expect(error.message.contains(refusal), "\(error.message)")
            }
        }
        // Inside a list the array counts too, as in the generated codec.
        let listed = #"{"values":["# + String(repeating: #"{"a":"#, count: 99) + "1" + String(repeating: "}", count: 99) + "]}"
        #expect(throws: JSONDecodingError.nestingTooDeep(limit: 100)) { try WellKnown(jsonString: listed) }
        #expect(throws: DynamicCodecError.self) { try codec.decode(Data(listed.utf8), as: type) }
        let fits = #"{"values":["# + String(repeating: #"{"a":"#, count: 98) + "1" + String(repeating: "}", count: 98) + "]}"
        let generated = try WellKnown(jsonString: fits)
        #expect(try DynamicBinaryCodec(schema: Self.schema).encode(codec.decode(Data(fits.utf8), as: type)) == generated.serializedData())
    }

    /// An enum name skipped as unknown gives its oneof no value, so another member may: the
    /// dynamic codec claimed the oneof before reading the name.
    @Test func aSkippedEnumNameLeavesItsOneofFree() throws {
        let type = try #require(Self.schema.messageIndex(named: "Composite"))
        var codec = DynamicJSONCodec(schema: Self.schema)
        codec.ignoresUnknownFields = true
        let options = JSONDecodingOptions(ignoreUnknownFields: true)
        for text in [#"{"shade":"ULTRAVIOLET","text":"t"}"#, #"{"text":"t","shade":"ULTRAVIOLET"}"#] {
            #expect(try Composite(jsonString: text, options: options).payload == .text("t"), "\(text)")
            let dynamic = try codec.decode(Data(text.utf8), as: type)
            #expect(dynamic.fields[9] == .single(.string("t")) && dynamic.fields[12] == nil, "\(text)")
        }
        // A known name still claims it.
        let both = #"{"shade":"BLUE","text":"t"}"#
        #expect(throws: JSONDecodingError.self) { try Composite(jsonString: both, options: options) }
        #expect(throws: DynamicCodecError.self) { try codec.decode(Data(both.utf8), as: type) }
    }

    /// An Any whose bytes do not decode cannot be written as JSON: strict encoding fails, as
    /// the generated encoder does, where it wrote the raw bytes silently.
    @Test func strictEncodingRefusesAnAnyThatDoesNotDecode() throws {
        let type = try #require(Self.schema.messageIndex(named: "WellKnown"))
        let broken = WellKnown(anything: ProtoAny(typeUrl: "type.googleapis.com/google.protobuf.StringValue", value: Data([0x0A, 0x05])))
        #expect(throws: JSONEncodingError.self) { try broken.jsonString() }
        let message = try DynamicBinaryCodec(schema: Self.schema).decode(broken.serializedData(), as: type)
        let codec = DynamicJSONCodec(schema: Self.schema)
        #expect(throws: DynamicCodecError.self) { try codec.encodeStrictly(message) }
        // The tools' lenient form still shows the URL and the bytes, but not under "value",
        // where they read back as a StringValue of the base64 text: neither codec reads it.
        let lenient = codec.encode(message, prettyPrinted: false)
        #expect(lenient.contains(#""@unreadableBytes":"CgU=""#))
        #expect(!lenient.contains(#""value""#))
        #expect(throws: DynamicCodecError.self) { try codec.decode(Data(lenient.utf8), as: type) }
        #expect(throws: JSONDecodingError.self) { try WellKnown(jsonString: lenient) }
        // So does a type the schema does not hold, named with a Kelvin sign.
        let kelvin = WellKnown(anything: ProtoAny(typeUrl: "type.googleapis.com/switchboard.test.Well\u{212A}nown", value: Data()))
        let strange = try DynamicBinaryCodec(schema: Self.schema).decode(kelvin.serializedData(), as: type)
        #expect(throws: DynamicCodecError.self) { try codec.encodeStrictly(strange) }
    }

    /// `null` for a list or map is empty whatever the element type; for a list of Values
    /// the dynamic codec took `null` as an element and then wanted an array.
    @Test func nullForAListOfValuesIsEmptyInBothCodecs() throws {
        let type = try #require(Self.schema.messageIndex(named: "WellKnown"))
        let codec = DynamicJSONCodec(schema: Self.schema)
        for text in [#"{"values":null}"#, #"{"values":null,"value":null}"#] {
            let generated = try WellKnown(jsonString: text)
            #expect(generated.values.isEmpty)
            let dynamic = try codec.decode(Data(text.utf8), as: type)
            #expect(dynamic.fields[20] == nil, "\(text)")
            #expect(try WellKnown(serializedData: DynamicBinaryCodec(schema: Self.schema).encode(dynamic)) == generated, "\(text)")
        }
    }

    /// String map keys are ordered by their UTF-8 bytes in both codecs, as protobuf's
    /// deterministic encoding orders them; Swift's `<` put "\u{212A}" (E2 84 AA) before "L".
    @Test func stringMapKeysAreInByteOrderInBothCodecs() throws {
        let type = try #require(Self.schema.messageIndex(named: "Maps"))
        var maps = Maps()
        maps.stringToString = ["\u{212A}": "kelvin", "L": "l"]
        let binary = DynamicBinaryCodec(schema: Self.schema)
        let codec = DynamicJSONCodec(schema: Self.schema)
        let fromWire = try binary.decode(maps.serializedData(), as: type)
        guard case let .map(entries)? = fromWire.fields[1] else {
            Issue.record("stringToString must decode as a map")
            return
        }
        #expect(entries.map(\.key) == [.string("L"), .string("\u{212A}")])
        #expect(binary.encode(fromWire) == maps.serializedData())
        #expect(try codec.encode(fromWire, prettyPrinted: false) == maps.jsonString())
        let fromJSON = try codec.decode(Data(try maps.jsonString().utf8), as: type)
        #expect(binary.encode(fromJSON) == maps.serializedData())
    }
}
