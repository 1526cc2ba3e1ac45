import Foundation
import KitchenSink
import SwitchboardDynamic
import SwitchboardRuntime
import SwitchboardSchema
import TestMessagesProto3
import Testing

/// The protobuf JSON mapping's number and key grammar, from its spec: what the generated
/// codec accepts and refuses, and the schema-at-run-time codec (`call`, `mock-server`)
/// agreeing with it on every case.
@Suite struct JSONMappingEdgeTests {
    static let schema = DynamicCodecAgreementTests.kitchenSink
    /// Protobuf's conformance message's schema.
    static let conformance = SchemaCompiler.compile(
        directory: DynamicCodecAgreementTests.schemas.appendingPathComponent("Schemas/test_messages_proto3")).schema!
    /// NullValue in a list and in a map, which no fixture schema has.
    static let nullValues = SchemaCompiler.compile(files: [SourceFile(path: "nulls.sb", text: """
        package demo
        import google.protobuf
        message Nulls {
          1 nulls: [google.protobuf.NullValue]
          2 byName: {string: google.protobuf.NullValue}
        }
        """)]).schema!

    /// Decodes `json` with both codecs: both must fail, or both give the same message.
    func bothDecode<M: ProtoMessage & Equatable>(_ json: String, as type: M.Type, name: String,
                                                 in schema: Schema = JSONMappingEdgeTests.schema) throws -> M? {
        let generated = try? M(jsonString: json)
        let index = try #require(schema.messageIndex(named: name))
        let dynamic = try? DynamicJSONCodec(schema: schema).decode(Data(json.utf8), as: index)
        let viaDynamic = try dynamic.map { try M(serializedData: DynamicBinaryCodec(schema: schema).encode($0)) }
        // Compared as bytes: NaN is not equal to itself.
        #expect(generated?.serializedData() == viaDynamic?.serializedData(), "the codecs disagree on \(json): \(String(describing: generated)) vs \(String(describing: viaDynamic))")
        return generated
    }

    @Test(arguments: [
        (#""2\u00314""#, Int32(214)), (#""\u002d7""#, -7), (#""1\u0030""#, 10), (#""\u0031e2""#, 100),
    ])
    func quotedIntegersMaySpellDigitsWithEscapes(text: String, value: Int32) throws {
        #expect(try bothDecode(#"{"int32Value":\#(text)}"#, as: Scalars.self, name: "Scalars")?.int32Value == value)
    }

    @Test(arguments: [#""\u0020""#, #""1\u0020""#, #""\u00221\u0022""#, #""0x\u0031""#, #""+\u0031""#])
    func escapedQuotedIntegersKeepTheGrammar(text: String) throws {
        #expect(try bothDecode(#"{"int32Value":\#(text)}"#, as: Scalars.self, name: "Scalars") == nil)
    }

    @Test(arguments: [#""1.5""#, #""-0.25""#, #""1e3""#, #""1E-2""#, #""0""#, #""-0""#, #""NaN""#, #""Infinity""#, #""-Infinity""#, #""2\u002e5""#])
    func quotedDoublesFollowTheNumberGrammar(text: String) throws {
        #expect(try bothDecode(#"{"doubleValue":\#(text)}"#, as: Scalars.self, name: "Scalars") != nil)
    }

    @Test(arguments: [#""0x10""#, #""+1""#, #"".5""#, #""5.""#, #"" 1""#, #""1 ""#, #""01""#, #""1e""#, #""inf""#, #""nan""#, #""""#, #""1.5f""#])
    func otherQuotedDoublesAreRefused(text: String) throws {
        #expect(try bothDecode(#"{"doubleValue":\#(text)}"#, as: Scalars.self, name: "Scalars") == nil)
    }

    @Test(arguments: ["0", "5", "-5", "-0", "2147483647", "-2147483648"])
    func signedMapKeysInProtobufsSpelling(key: String) throws {
        #expect(try bothDecode(#"{"int32ToInt64":{"\#(key)":"1"}}"#, as: Maps.self, name: "Maps")?.int32ToInt64 == [Int32(key)!: 1])
    }

    @Test(arguments: ["+5", "05", "00", " 5", "5 ", "5.0", "1e1", "", "-", "2147483648", "0x5"])
    func otherSignedMapKeysAreRefused(key: String) throws {
        #expect(try bothDecode(#"{"int32ToInt64":{"\#(key)":"1"}}"#, as: Maps.self, name: "Maps") == nil)
    }

    @Test(arguments: ["-0", "-1", "+1", "01"])
    func unsignedMapKeysTakeNoSign(key: String) throws {
        #expect(try bothDecode(#"{"uint64ToBytes":{"\#(key)":""}}"#, as: Maps.self, name: "Maps") == nil)
    }

    /// How our writer spells Float.greatestFiniteMagnitude (`3.4028235e+38`) is a little above
    /// it as a double, yet rounds to it: it must come back, while a float past it must not.
    @Test func theLargestFloatRoundTrips() throws {
        var scalars = Scalars()
        scalars.floatValue = .greatestFiniteMagnitude
        let text = try scalars.jsonString()
        #expect(try bothDecode(text, as: Scalars.self, name: "Scalars")?.floatValue == .greatestFiniteMagnitude)
        scalars.floatValue = -.greatestFiniteMagnitude
        #expect(try bothDecode(try scalars.jsonString(), as: Scalars.self, name: "Scalars")?.floatValue == -.greatestFiniteMagnitude)
        #expect(try bothDecode(#"{"floatValue":3.5e38}"#, as: Scalars.self, name: "Scalars") == nil)
        #expect(try bothDecode(#"{"floatValue":"-1e39"}"#, as: Scalars.self, name: "Scalars") == nil)
    }

    /// `@jsonName` (protobuf's `json_name`): written under the chosen name, read under it or
    /// the field's own name, by both codecs.
    @Test func chosenJSONNamesAreWrittenAndBothNamesRead() throws {
        #expect(try Renamed(plain: "p", lower: 7).jsonString() == #"{"custom_key":"p","Upper":7}"#)
        #expect(try bothDecode(#"{"custom_key":"p","Upper":7}"#, as: Renamed.self, name: "Renamed") == Renamed(plain: "p", lower: 7))
        #expect(try bothDecode(#"{"plain":"p","lower":7}"#, as: Renamed.self, name: "Renamed") == Renamed(plain: "p", lower: 7))
        #expect(try bothDecode(#"{"plain":"p","custom_key":"q"}"#, as: Renamed.self, name: "Renamed") == nil)
        let index = try #require(Self.schema.messageIndex(named: "Renamed"))
        let dynamic = DynamicJSONCodec(schema: Self.schema)
        let text = dynamic.encode(try dynamic.decode(Data(#"{"plain":"p"}"#.utf8), as: index), prettyPrinted: false)
        #expect(text.contains(#""custom_key""#))
    }

    /// `@allowAlias`: every name of a value reads as that value; the first name is written,
    /// as Python protobuf writes it (the fixture `aliases` checks the bytes and JSON too).
    @Test func enumAliasesReadAsTheirValue() throws {
        #expect(Mood.glad == .happy)
        #expect(Mood.allCases == [.unspecified, .happy, .sad])
        let feelings = try #require(try bothDecode(#"{"mood":"GLAD","moods":["HAPPY","GLAD",2],"byName":{"a":"GLAD"}}"#, as: Feelings.self, name: "Feelings"))
        #expect(feelings.mood == .happy && feelings.moods == [.happy, .happy, .sad] && feelings.byName == ["a": .happy])
        #expect(try feelings.jsonString() == #"{"mood":"HAPPY","moods":["HAPPY","HAPPY","SAD"],"byName":{"a":"HAPPY"}}"#)
    }

    /// Field names in every spelling protobuf allows: protobuf's JSON names (what Python
    /// writes for the `spellings` fixture), idiomatic Swift names, both codecs agreeing.
    @Test func everySpellingOfAFieldNameHasProtobufsJSONName() throws {
        let json = #"{"LeadingCapital":"a","doubleUnderscore":2,"trailing":true,"Leading":"b","FIELDNAME5":5,"URLPath":"/x"}"#
        let spellings = try #require(try bothDecode(json, as: Spellings.self, name: "Spellings"))
        #expect(spellings.leadingCapital == "a" && spellings.doubleUnderscore == 2 && spellings.trailing && spellings.leading == "b")
        #expect(spellings.fieldName5 == 5 && spellings.urlPath == "/x")
        // The names as written in the schema are read too.
        let asWritten = #"{"Leading_Capital":"a","double__underscore":2,"trailing_":true,"_leading":"b","FIELD_NAME5":5,"URLPath":"/x"}"#
        #expect(try bothDecode(asWritten, as: Spellings.self, name: "Spellings") == spellings)
    }

    @Test func repeatedMembersAndOneofConflictsFailInBothCodecs() throws {
        #expect(try bothDecode(#"{"title":"a","title":"b"}"#, as: Composite.self, name: "Composite") == nil)
        #expect(try bothDecode(#"{"snakeCaseField":"a","snake_case_field":"b"}"#, as: Composite.self, name: "Composite") == nil)
        #expect(try bothDecode(#"{"text":"a","number":"5"}"#, as: Composite.self, name: "Composite") == nil)
        #expect(try bothDecode(#"{"text":null,"number":"5"}"#, as: Composite.self, name: "Composite")?.payload == .number(5))
        #expect(try bothDecode(#"{"points":[null]}"#, as: Lists.self, name: "Lists") == nil)
        #expect(try bothDecode(#"{"stringToString":{"a":null}}"#, as: Maps.self, name: "Maps") == nil)
    }

    /// `null` is no list element or map value of a wrapper type, in both codecs, as in
    /// protobuf (Python refuses each of these). The dynamic codec read it through the
    /// wrapper's reader, as the wrapper's default: `[true,null]` was `[true,false]`.
    @Test func nullIsNoWrapperInAListOrMap() throws {
        let allTypes = "protobuf_test_messages.proto3.TestAllTypesProto3"
        for text in [#"{"repeatedInt32Wrapper":[1,null]}"#, #"{"repeatedBoolWrapper":[true,null]}"#,
                     #"{"repeatedStringWrapper":[null]}"#, #"{"repeatedBytesWrapper":[null,"AQI="]}"#,
                     #"{"repeatedDoubleWrapper":[ null ]}"#] {
            #expect(try bothDecode(text, as: TestAllTypesProto3.self, name: allTypes, in: Self.conformance) == nil, "\(text)")
        }
        #expect(try bothDecode(#"{"repeatedInt32Wrapper":[1,2]}"#, as: TestAllTypesProto3.self, name: allTypes, in: Self.conformance)?
            .repeatedInt32Wrapper == [ProtoInt32Value(1), ProtoInt32Value(2)])
        #expect(try bothDecode(#"{"wrappedByName":{"a":null}}"#, as: WellKnown.self, name: "WellKnown") == nil)
        #expect(try bothDecode(#"{"wrappedByName":{"a":1,"b":null}}"#, as: WellKnown.self, name: "WellKnown") == nil)
        #expect(try bothDecode(#"{"wrappedByName":{"a":1}}"#, as: WellKnown.self, name: "WellKnown")?.wrappedByName == ["a": ProtoInt32Value(1)])
        // A Value's `null` is a value, in a list as alone; a list or map given `null` is empty.
        #expect(try bothDecode(#"{"values":[null]}"#, as: WellKnown.self, name: "WellKnown")?.values == [ProtoValue.null])
        #expect(try bothDecode(#"{"repeatedValue":[1,null]}"#, as: TestAllTypesProto3.self, name: allTypes, in: Self.conformance)?
            .repeatedValue == [ProtoValue(kind: .numberValue(1)), .null])
        #expect(try bothDecode(#"{"wrappedByName":null}"#, as: WellKnown.self, name: "WellKnown")?.wrappedByName == [:])
        #expect(try bothDecode(#"{"repeatedBoolWrapper":null}"#, as: TestAllTypesProto3.self, name: allTypes, in: Self.conformance)?
            .repeatedBoolWrapper == [])
    }

    /// A packed wrapper's `"value"` is not `null`, nor is a whole document of a wrapper, as
    /// Python refuses both: the codecs read it as the wrapper's default (false, 0, ""). A
    /// packed Value's `null` is its value.
    @Test func aWrapperIsNeverNull() throws {
        for wrapper in ["BoolValue", "Int32Value", "StringValue", "BytesValue", "DoubleValue"] {
            let text = #"{"anything":{"@type":"type.googleapis.com/google.protobuf.\#(wrapper)","value":null}}"#
            #expect(try bothDecode(text, as: WellKnown.self, name: "WellKnown") == nil, "\(text)")
        }
        let packedFalse = #"{"anything":{"@type":"type.googleapis.com/google.protobuf.BoolValue","value":false}}"#
        #expect(try bothDecode(packedFalse, as: WellKnown.self, name: "WellKnown")?.anything?.unpack(ProtoBoolValue.self) == ProtoBoolValue(false))
        let packedNull = #"{"anything":{"@type":"type.googleapis.com/google.protobuf.Value","value":null}}"#
        #expect(try bothDecode(packedNull, as: WellKnown.self, name: "WellKnown")?.anything?.unpack(ProtoValue.self) == .null)
        #expect(try bothDecode("null", as: ProtoBoolValue.self, name: "google.protobuf.BoolValue") == nil)
        #expect(try bothDecode(" null", as: ProtoInt32Value.self, name: "google.protobuf.Int32Value") == nil)
        #expect(try bothDecode("true", as: ProtoBoolValue.self, name: "google.protobuf.BoolValue") == ProtoBoolValue(true))
        #expect(try bothDecode("null", as: ProtoValue.self, name: "google.protobuf.Value") == .null)
    }

    /// An Any packing a well-known type with no `"value"` member holds that type's default:
    /// the URL, and no bytes. Protobuf's C++ library writes such an Any so (3.21's `RenderAny`
    /// writes `"@type"` alone when the bytes are empty), and C++ (3.21 and the current
    /// parser), Java and upb read it so; Python (a `KeyError`) and Go refuse it. The
    /// conformance suite has no case of it. Empty has no JSON form of its own: the `"@type"`
    /// alone is the packed Empty, and a `"value"` member is an unknown field, as in Python,
    /// Java and C++.
    /// A packed Value with no kind (from binary, or `ProtoAny(packing: ProtoValue())`) has no
    /// JSON form to put under "value": both codecs write `"@type"` alone, and read it back.
    /// Writing the message failed as a whole before (a server answered it with a 500).
    @Test func aPackedValueWithNoKindIsWrittenAsItsTypeAlone() throws {
        var holder = WellKnown()
        holder.anything = ProtoAny(packing: ProtoValue())
        let expected = #"{"anything":{"@type":"type.googleapis.com/google.protobuf.Value"}}"#
        #expect(try holder.jsonString() == expected)
        let index = try #require(Self.schema.messageIndex(named: "WellKnown"))
        let dynamic = try DynamicBinaryCodec(schema: Self.schema).decode(holder.serializedData(), as: index)
        #expect(DynamicJSONCodec(schema: Self.schema).encode(dynamic, prettyPrinted: false) == expected)
        #expect(try bothDecode(expected, as: WellKnown.self, name: "WellKnown") == holder)
    }

    @Test func aPackedWellKnownTypeWithoutItsValueIsItsDefault() throws {
        for wellKnown in ["BoolValue", "Int32Value", "StringValue", "BytesValue", "DoubleValue", "Duration", "Timestamp",
                          "FieldMask", "Struct", "Value", "ListValue", "Any", "Empty"] {
            let url = "type.googleapis.com/google.protobuf.\(wellKnown)"
            let text = #"{"anything":{"@type":"\#(url)"}}"#
            let anything = try #require(try bothDecode(text, as: WellKnown.self, name: "WellKnown")?.anything, "\(text)")
            #expect(anything.typeUrl == url && anything.value.isEmpty, "\(text)")
        }
        // Written back with its "value", as the generated codec writes every packed wrapper.
        let packedDefault = try #require(try bothDecode(#"{"anything":{"@type":"type.googleapis.com/google.protobuf.BoolValue"}}"#,
                                                        as: WellKnown.self, name: "WellKnown"))
        #expect(try packedDefault.jsonString().contains(#"{"@type":"type.googleapis.com/google.protobuf.BoolValue","value":false}"#))
        #expect(try bothDecode(#"{"anything":{"@type":"type.googleapis.com/google.protobuf.Empty","value":{}}}"#,
                               as: WellKnown.self, name: "WellKnown") == nil)
    }

    /// `json` read as a list of NullValue by the reader generated code calls for such a field.
    func generatedNullList(_ json: String) -> [ProtoNullValue]? {
        let bytes = Array(json.utf8)
        return bytes.withUnsafeBytes { buffer -> [ProtoNullValue]? in
            var reader = JSONReader(buffer: buffer)
            var values: [ProtoNullValue] = []
            do {
                try RepeatedField<EnumCodec<ProtoNullValue>>.readJSON(from: &reader, into: &values)
                try reader.expectEnd()
            } catch {
                return nil
            }
            return values
        }
    }

    /// `json` read as a map of NullValue by the reader generated code calls for such a field.
    func generatedNullMap(_ json: String) -> [String: ProtoNullValue]? {
        let bytes = Array(json.utf8)
        return bytes.withUnsafeBytes { buffer -> [String: ProtoNullValue]? in
            var reader = JSONReader(buffer: buffer)
            var map: [String: ProtoNullValue] = [:]
            do {
                try MapField<StringCodec, EnumCodec<ProtoNullValue>>.readJSON(from: &reader, into: &map)
                try reader.expectEnd()
            } catch {
                return nil
            }
            return map
        }
    }

    /// `json` read as `demo.Nulls` by the dynamic codec, or `nil` if it refuses it.
    func dynamicNulls(_ json: String) throws -> DynamicMessage? {
        let index = try #require(Self.nullValues.messageIndex(named: "demo.Nulls"))
        return try? DynamicJSONCodec(schema: Self.nullValues).decode(Data(json.utf8), as: index)
    }

    /// NullValue is the one enum whose value JSON writes as `null`, so `null` is a list
    /// element and a map value of it, in both codecs, as both codecs write them. C++ 3.21
    /// (which keeps `null` for a NullValue field, element or map value) and upb read both;
    /// the current C++ parser reads the element; Python refuses both, though it writes both
    /// so. The conformance suite has no case of either. Any other type's list or map still
    /// refuses `null` (``nullIsNoWrapperInAListOrMap()``).
    @Test func nullIsANullValueInAListOrMap() throws {
        #expect(generatedNullList(#"[null,"NULL_VALUE",0]"#) == [ProtoNullValue.nullValue, .nullValue, .nullValue])
        #expect(generatedNullMap(#"{"a":null,"b":"NULL_VALUE"}"#) == ["a": ProtoNullValue.nullValue, "b": .nullValue])
        // A list or map given `null` is empty.
        #expect(generatedNullList("null") == [])
        #expect(generatedNullMap("null") == [:])
        var writer = JSONWriter()
        try RepeatedField<EnumCodec<ProtoNullValue>>.writeJSON([.nullValue, .nullValue], to: &writer)
        #expect(String(decoding: writer.bytes, as: UTF8.self) == "[null,null]")
        writer = JSONWriter()
        try MapField<StringCodec, EnumCodec<ProtoNullValue>>.writeJSON(["a": .nullValue], to: &writer)
        #expect(String(decoding: writer.bytes, as: UTF8.self) == #"{"a":null}"#)

        let read = try #require(try dynamicNulls(#"{"nulls":[null,"NULL_VALUE",0],"byName":{"a":null,"b":"NULL_VALUE"}}"#))
        #expect(read.fields[1] == DynamicField.list([.enumeration(0), .enumeration(0), .enumeration(0)]))
        #expect(read.fields[2] == DynamicField.map([DynamicMapEntry(key: .string("a"), value: .enumeration(0)),
                                        DynamicMapEntry(key: .string("b"), value: .enumeration(0))]))
        let written = DynamicJSONCodec(schema: Self.nullValues).encode(read, prettyPrinted: false)
        #expect(written == #"{"nulls":[null,null,null],"byName":{"a":null,"b":null}}"#)
        #expect(try dynamicNulls(written) == read)
        #expect(try dynamicNulls(#"{"nulls":null,"byName":null}"#)?.fields.isEmpty == true)
    }
}
