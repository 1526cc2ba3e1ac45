import Foundation
import KitchenSink
import PeerSupport
import SignalChat
import SwitchboardDynamic
import SwitchboardRuntime
import SwitchboardSchema
import TestMessagesProto3
import Testing

/// The schema-at-run-time codecs behind `call`, `listen` and `mock-server` must agree with
/// the generated codecs on every message shape, both ways, in binary and in JSON.
@Suite struct DynamicCodecAgreementTests {
    static let schemas = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    static let kitchenSink = SchemaCompiler.compile(directory: schemas.appendingPathComponent("Schemas/kitchen_sink")).schema!
    static let signal = SchemaCompiler.compile(directory: schemas.deletingLastPathComponent().appendingPathComponent("schema")).schema!

    func check<M: ProtoMessage & Equatable>(_ name: String, in schema: Schema, seed: UInt64, iterations: Int = 150,
                                            _ make: (inout RandomMessages) -> M) throws {
        let type = try #require(schema.messageIndex(named: name))
        let binary = DynamicBinaryCodec(schema: schema)
        let json = DynamicJSONCodec(schema: schema)
        var random = RandomMessages(seed: seed)
        for iteration in 0..<iterations {
            let message = make(&random)
            // Generated binary -> dynamic -> binary and JSON -> generated.
            let dynamic = try binary.decode(message.serializedData(), as: type)
            #expect(try M(serializedData: binary.encode(dynamic)) == message, "binary disagrees at \(iteration)")
            let text = json.encode(dynamic)
            #expect(try M(jsonString: text) == message, "JSON disagrees at \(iteration): \(text)")
            // Generated JSON -> dynamic -> binary -> generated.
            let fromJSON = try json.decode(Data(message.jsonString().utf8), as: type)
            #expect(try M(serializedData: binary.encode(fromJSON)) == message, "JSON input disagrees at \(iteration)")
            if fromJSON != dynamic {
                let differing = Set(fromJSON.fields.keys).union(dynamic.fields.keys).filter { fromJSON.fields[$0] != dynamic.fields[$0] }
                Issue.record("JSON and binary inputs differ at \(iteration) in fields \(differing.sorted()): \(differing.sorted().map { "\(fromJSON.fields[$0].map(String.init(describing:)) ?? "nil") vs \(dynamic.fields[$0].map(String.init(describing:)) ?? "nil")" })")
                return
            }
        }
    }

    @Test func scalars() throws { try check("Scalars", in: Self.kitchenSink, seed: 11) { $0.scalars() } }
    @Test func lists() throws { try check("Lists", in: Self.kitchenSink, seed: 12) { $0.lists() } }
    @Test func maps() throws { try check("Maps", in: Self.kitchenSink, seed: 13) { $0.maps() } }
    @Test func composite() throws { try check("Composite", in: Self.kitchenSink, seed: 14) { $0.composite() } }
    @Test func wellKnownTypes() throws {
        AnyTypeRegistry.shared.register(Point.self)
        try check("WellKnown", in: Self.kitchenSink, seed: 17) { $0.wellKnown() }
    }
    /// Protobuf's conformance message, every field drawn at random from its schema.
    @Test func conformanceMessage() throws {
        AnyTypeRegistry.shared.register(ForeignMessage.self)
        let schema = try #require(SchemaCompiler.compile(directory: Self.schemas.appendingPathComponent("Schemas/test_messages_proto3")).schema)
        let type = try #require(schema.messageIndex(named: "protobuf_test_messages.proto3.TestAllTypesProto3"))
        var dynamic = RandomDynamicMessages(schema: schema, seed: 19, anyPayload: "protobuf_test_messages.proto3.ForeignMessage")
        let binary = DynamicBinaryCodec(schema: schema)
        try check("protobuf_test_messages.proto3.TestAllTypesProto3", in: schema, seed: 18, iterations: 60) { _ in
            try! TestAllTypesProto3(serializedData: binary.encode(dynamic.message(type, depth: 3)))
        }
    }
    @Test func chatMessages() throws { try check("ChatMessage", in: Self.signal, seed: 15) { $0.chatMessage() } }
    @Test func envelopes() throws { try check("WebSocketMessage", in: Self.signal, seed: 16) { $0.webSocketMessage() } }

    /// Types of an imported package, and the well-known types it imports, read and write
    /// through `call` and `mock-server`'s codecs like the schema's own.
    @Test func importedPackagesTypesRoundTrip() throws {
        let imports = Self.schemas.appendingPathComponent("Schemas/imports")
        let output = SchemaCompiler.compile(directory: imports.appendingPathComponent("app"),
                                            importPaths: [.init(directory: imports.appendingPathComponent("common"))])
        let schema = try #require(output.schema, "\(output.renderedDiagnostics)")
        let type = try #require(schema.messageIndex(named: "acme.app.Profile"))
        let json = DynamicJSONCodec(schema: schema), binary = DynamicBinaryCodec(schema: schema)
        let text = #"{"home":{"street":"Main St","verifiedAt":"2026-11-26T10:00:00.000000001Z","ttl":"-1.500s","kind":"HOME"},"kinds":["HOME",7],"byName":{"x":{}}}"#
        let message = try json.decode(Data(text.utf8), as: type)
        let again = try binary.decode(binary.encode(message), as: type)
        #expect(again == message)
        #expect(json.encode(again, prettyPrinted: false) == text)
    }

    /// Two encodings one after the other decode as protobuf's merge: embedded messages merge
    /// recursively, lists concatenate, maps merge by key, the last oneof member wins.
    @Test func concatenatedEncodingsMergeLikeProtobuf() throws {
        let type = try #require(Self.kitchenSink.messageIndex(named: "Composite"))
        let binary = DynamicBinaryCodec(schema: Self.kitchenSink)
        var random = RandomMessages(seed: 21)
        for iteration in 0..<100 {
            let first = random.composite(), second = random.composite()
            let joined = first.serializedData() + second.serializedData()
            let expected = try Composite(serializedData: joined)
            #expect(try Composite(serializedData: binary.encode(binary.decode(joined, as: type))) == expected, "merge differs at \(iteration)")
        }
        let maps = try #require(Self.kitchenSink.messageIndex(named: "Maps"))
        // A map entry (field 1, string to string) whose key arrives as a varint: skipped, so
        // the entry has the default key, in both codecs.
        let strayKey = Data([0x0A, 0x02, 0x08, 0x01])
        #expect(try Maps(serializedData: binary.encode(binary.decode(strayKey, as: maps))) == Maps(serializedData: strayKey))
        #expect(try Maps(serializedData: strayKey).stringToString == ["": ""])
    }

    /// A message value that appears twice in one map entry merges, as protobuf's parsers
    /// (C++, upb, swift-protobuf) merge it; a scalar value is replaced. Both codecs kept only
    /// the last message.
    @Test func aMessageValueTwiceInOneMapEntryMerges() throws {
        let maps = try #require(Self.kitchenSink.messageIndex(named: "Maps"))
        let binary = DynamicBinaryCodec(schema: Self.kitchenSink)
        // fixed32ToPoint (field 6): key 7, then value {x: 1}, then value {y: 2}.
        let entry: [UInt8] = [0x0D, 7, 0, 0, 0, 0x12, 0x02, 0x08, 0x02, 0x12, 0x02, 0x10, 0x04]
        let points = Data([0x32, UInt8(entry.count)] + entry)
        #expect(try Maps(serializedData: points).fixed32ToPoint == [7: Point(x: 1, y: 2)])
        #expect(try Maps(serializedData: binary.encode(binary.decode(points, as: maps))).fixed32ToPoint == [7: Point(x: 1, y: 2)])
        // A later value overrides what it sets and keeps the rest: {x: 1, label: "a"} then {x: 3}.
        let relabelled: [UInt8] = [0x0D, 7, 0, 0, 0, 0x12, 0x05, 0x08, 0x02, 0x1A, 0x01, 0x61, 0x12, 0x02, 0x08, 0x06]
        let again = Data([0x32, UInt8(relabelled.count)] + relabelled)
        let merged = [UInt32(7): Point(x: 3, label: "a")]
        #expect(try Maps(serializedData: again).fixed32ToPoint == merged)
        #expect(try Maps(serializedData: binary.encode(binary.decode(again, as: maps))).fixed32ToPoint == merged)
        // stringToString (field 1): key "k", then "a", then "b": the last wins.
        let strings = Data([0x0A, 0x09, 0x0A, 0x01, 0x6B, 0x12, 0x01, 0x61, 0x12, 0x01, 0x62])
        #expect(try Maps(serializedData: strings).stringToString == ["k": "b"])
        #expect(try Maps(serializedData: binary.encode(binary.decode(strings, as: maps))).stringToString == ["k": "b"])
    }

    /// `@unpacked` lists are written one tagged element at a time by both codecs, as protoc
    /// writes `[packed = false]`, and both read either form.
    @Test func unpackedListsAreWrittenUnpackedByBothCodecs() throws {
        let type = try #require(Self.kitchenSink.messageIndex(named: "UnpackedLists"))
        let binary = DynamicBinaryCodec(schema: Self.kitchenSink)
        let protoc = try Fixtures.binary("unpacked.switchboard.test.UnpackedLists")
        #expect(try binary.encode(binary.decode(protoc, as: type)) == protoc)
        let generated = try UnpackedLists(serializedData: protoc)
        #expect(generated.int32s == [1, -2, 300] && generated.colors == [.red, .infrared] && generated.packedInt32s == [7, 8])
        // Packed input for an unpacked field is read too, and written back unpacked.
        let packed = Data([0x0A, 0x02, 0x01, 0x02])
        #expect(try UnpackedLists(serializedData: packed).int32s == [1, 2])
        #expect(try Array(UnpackedLists(serializedData: packed).serializedData()) == [0x08, 0x01, 0x08, 0x02])
        #expect(try Array(binary.encode(binary.decode(packed, as: type))) == [0x08, 0x01, 0x08, 0x02])
    }

    /// A known field number with the wrong wire type is an unknown field in both codecs, not
    /// an error: both keep it and write it back after the known fields, as protoc's C++ and
    /// Python code do.
    @Test func aKnownFieldWithTheWrongWireTypeIsUnknownInBothCodecs() throws {
        let type = try #require(Self.kitchenSink.messageIndex(named: "Composite"))
        let binary = DynamicBinaryCodec(schema: Self.kitchenSink)
        // Input, and the generated codec's re-encoding: known fields first, then the unknown ones in order.
        let cases: [([UInt8], [UInt8])] = [
            ([0x0D, 1, 2, 3, 4], [0x0D, 1, 2, 3, 4]),
            ([0x10, 0x05, 0x0D, 0, 0, 0, 0], [0x10, 0x05, 0x0D, 0, 0, 0, 0]),
            ([0x0D, 1, 2, 3, 4, 0x20, 0x02], [0x20, 0x02, 0x0D, 1, 2, 3, 4]),
        ]
        for (bytes, reencoded) in cases {
            let generated = try Composite(serializedBytes: bytes)
            #expect(Array(generated.serializedData()) == reencoded, "\(bytes)")
            let dynamic = try binary.encode(binary.decode(Data(bytes), as: type))
            #expect(Array(dynamic) == reencoded, "\(bytes)")
            #expect(try Composite(serializedData: dynamic) == generated, "\(bytes)")
        }
    }

    /// Ignoring unknown JSON (protobuf's `ignoring_unknown_fields`) skips members the schema
    /// does not define and drops unknown enum names wherever they stand, as the generated
    /// codec does; by default both are errors.
    @Test func unknownMembersAndEnumNamesAreSkippedOnlyWhenAsked() throws {
        let type = try #require(Self.kitchenSink.messageIndex(named: "Composite"))
        let text = #"{"title": "t", "later": {"a": [1, 2]}, "color": "ULTRAVIOLET", "optionalColor": "GREEN"}"#
        var codec = DynamicJSONCodec(schema: Self.kitchenSink)
        #expect(throws: DynamicCodecError.self) { try codec.decode(Data(text.utf8), as: type) }
        codec.ignoresUnknownFields = true
        let dynamic = try codec.decode(Data(text.utf8), as: type)
        let generated = try Composite(jsonString: text, options: JSONDecodingOptions(ignoreUnknownFields: true))
        #expect(generated.title == "t" && generated.color == .unspecified && generated.optionalColor == .green)
        #expect(try Composite(serializedData: DynamicBinaryCodec(schema: Self.kitchenSink).encode(dynamic)) == generated)

        let maps = try #require(Self.kitchenSink.messageIndex(named: "Maps"))
        let entries = try codec.decode(Data(#"{"sint64ToColor": {"1": "BLUE", "2": "ULTRAVIOLET"}}"#.utf8), as: maps)
        #expect(entries.fields[5] == .map([DynamicMapEntry(key: .int(1), value: .enumeration(3))]))
    }

    /// Strict JSON encoding fails where the generated encoder does (a Timestamp out of
    /// protobuf's range); the tools' lenient encoding writes `null` there instead.
    @Test func strictEncodingRefusesWhatJSONCannotHold() throws {
        let type = try #require(Self.kitchenSink.messageIndex(named: "Composite"))
        let binary = DynamicBinaryCodec(schema: Self.kitchenSink)
        let json = DynamicJSONCodec(schema: Self.kitchenSink)
        let outOfRange = Composite(title: "x", createdAt: ProtoTimestamp(seconds: 253_402_300_800, nanos: 0))
        let message = try binary.decode(outOfRange.serializedData(), as: type)
        #expect(throws: DynamicCodecError.self) { try json.encodeStrictly(message) }
        #expect(json.encode(message, prettyPrinted: false).contains(#""createdAt":null"#))
        let inRange = try binary.decode(Composite(title: "x", createdAt: ProtoTimestamp(seconds: 0, nanos: 5)).serializedData(), as: type)
        #expect(try json.encodeStrictly(inRange) == #"{"title":"x","createdAt":"1970-01-01T00:00:00.000000005Z"}"#)
    }

    @Test func aRepeatedMapKeyIsRefusedByBothCodecs() throws {
        let maps = try #require(Self.kitchenSink.messageIndex(named: "Maps"))
        let codec = DynamicJSONCodec(schema: Self.kitchenSink)
        for text in [#"{"stringToString":{"a":"1","a":"2"}}"#, #"{"sint64ToColor":{"1":"BLUE","1":"RED"}}"#] {
            #expect(throws: DynamicCodecError.self, "\(text)") { try codec.decode(Data(text.utf8), as: maps) }
            #expect(throws: JSONDecodingError.self, "\(text)") { try Maps(jsonString: text) }
        }
        let distinct = #"{"stringToString":{"a":"1","b":"2"}}"#
        #expect(try codec.decode(Data(distinct.utf8), as: maps).fields.count == 1)
    }

    @Test func badJSONIsATypedErrorNamingTheField() throws {
        let type = try #require(Self.kitchenSink.messageIndex(named: "Scalars"))
        let codec = DynamicJSONCodec(schema: Self.kitchenSink)
        let cases: [(String, String)] = [
            (#"{"int32Valu": 1}"#, "Scalars has no field 'int32Valu'"),
            (#"{"int32Value": 3000000000}"#, "Scalars.int32Value: invalid or out-of-range number"),
            (#"{"boolValue": "yes"}"#, "Scalars.boolValue: unexpected character"),
            (#"{"bytesValue": "***"}"#, "Scalars.bytesValue: invalid base64"),
            (#"[1, 2]"#, "Scalars: expected a JSON object"),
            (#"{"#, "not valid JSON"),
        ]
        for (input, expected) in cases {
            #expect(throws: DynamicCodecError.self) { try codec.decode(Data(input.utf8), as: type) }
            do {
                _ = try codec.decode(Data(input.utf8), as: type)
            } catch {
                #expect(error.message.hasPrefix(expected), "\(input) -> \(error.message)")
            }
        }
    }

    @Test func malformedBinaryIsATypedError() throws {
        let type = try #require(Self.kitchenSink.messageIndex(named: "Composite"))
        let codec = DynamicBinaryCodec(schema: Self.kitchenSink)
        // A length that runs past the end, a truncated varint, and an invalid wire type.
        for bytes in [[0x0A, 0xFF, 0x01, 0x41], [0x10, 0x80], [0x0E, 0]] as [[UInt8]] {
            #expect(throws: DynamicCodecError.self) { try codec.decode(Data(bytes), as: type) }
        }
    }
}

/// What `call` and `listen` read comes from a server, and `mock-server` reads files: the
/// schema-driven codecs must turn any bytes into a message or a typed error, never a crash.
@Suite struct DynamicCodecRobustnessTests {
    @Test func mutatedAndRandomBytesNeverCrash() throws {
        let schema = DynamicCodecAgreementTests.kitchenSink
        let binary = DynamicBinaryCodec(schema: schema)
        let json = DynamicJSONCodec(schema: schema)
        var generator = SeededGenerator(seed: 99)
        var random = RandomMessages(seed: 98)
        var decoded = 0, rejected = 0
        for iteration in 0..<600 {
            let valid = random.composite()
            var bytes = Array(valid.serializedData())
            var text = Array(try valid.jsonString().utf8)
            for _ in 0..<(1 + iteration % 4) {
                if !bytes.isEmpty { bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator) }
                if !text.isEmpty { text[Int.random(in: 0..<text.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator) }
            }
            if iteration % 5 == 0 { bytes = (0..<Int.random(in: 0...64, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) } }
            for type in schema.messages.indices {
                if (try? binary.decode(Data(bytes), as: type)) != nil { decoded += 1 } else { rejected += 1 }
                if (try? json.decode(Data(text), as: type)) != nil { decoded += 1 } else { rejected += 1 }
            }
        }
        #expect(decoded > 0 && rejected > 0, "both outcomes occur: \(decoded) decoded, \(rejected) rejected")
    }

    @Test func deepNestingIsRefusedNotRecursedForever() throws {
        let schema = DynamicCodecAgreementTests.kitchenSink
        let tree = try #require(schema.messageIndex(named: "TreeNode"))
        // TreeNode.parent (field 2) nested 5,000 deep, in binary and in JSON.
        var bytes: [UInt8] = []
        for _ in 0..<5_000 {
            var length = bytes.count, prefix: [UInt8] = [0x12]
            repeat {
                prefix.append(UInt8(length & 0x7F) | (length > 0x7F ? 0x80 : 0))
                length >>= 7
            } while length > 0
            bytes = prefix + bytes
        }
        #expect(throws: DynamicCodecError.self) { try DynamicBinaryCodec(schema: schema).decode(Data(bytes), as: tree) }
        let text = String(repeating: #"{"parent":"#, count: 5_000) + "{}" + String(repeating: "}", count: 5_000)
        #expect(throws: DynamicCodecError.self) { try DynamicJSONCodec(schema: schema).decode(Data(text.utf8), as: tree) }
    }

    /// The tools read Any as strictly as generated code (from the input review): "@type" or
    /// "value" twice, or members without "@type", are errors in both; `{}` is the empty Any.
    @Test func anyIsReadAsStrictlyAsGeneratedCode() throws {
        let schema = DynamicCodecAgreementTests.kitchenSink
        let type = try #require(schema.messageIndex(named: "WellKnown"))
        let json = DynamicJSONCodec(schema: schema)
        let duration = #""@type":"type.googleapis.com/google.protobuf.Duration""#
        for bad in [#"{"anything":{"x":1}}"#, #"{"anything":{\#(duration),\#(duration),"value":"1s"}}"#,
                    #"{"anything":{\#(duration),"value":"1s","value":"2s"}}"#] {
            #expect(throws: DynamicCodecError.self, "\(bad)") { try json.decode(Data(bad.utf8), as: type) }
            #expect(throws: JSONDecodingError.self, "\(bad)") { try WellKnown(jsonString: bad) }
        }
        for good in [#"{"anything":{}}"#, #"{"anything":{\#(duration),"value":"1s"}}"#] {
            #expect(try WellKnown(jsonString: good).jsonString().isEmpty == false)
            let decoded = try json.decode(Data(good.utf8), as: type)
            #expect(try DynamicBinaryCodec(schema: schema).encode(decoded) == WellKnown(jsonString: good).serializedData(), "\(good)")
        }
    }

    /// A Struct 45 levels deep, valid for both codecs, prints as itself: the runtime's decoder
    /// counts three levels for each where this codec counts two, and its default bound made
    /// the tools print null (from the input review).
    @Test func aDeepStructPrintsAsItself() throws {
        let schema = DynamicCodecAgreementTests.kitchenSink
        let type = try #require(schema.messageIndex(named: "WellKnown"))
        let text = #"{"object":"# + String(repeating: #"{"a":"#, count: 45) + "1" + String(repeating: "}", count: 45) + "}"
        let bytes = try WellKnown(jsonString: text).serializedData()
        let json = DynamicJSONCodec(schema: schema)
        let message = try DynamicBinaryCodec(schema: schema).decode(bytes, as: type)
        let printed = try json.encodeStrictly(message)
        #expect(printed.filter { !$0.isWhitespace } == text, "\(printed.prefix(200))")
    }

    /// The codec's `maximumDepth` is the bound, both ways: the JSON reader underneath no
    /// longer refuses at its own default of 100 what a higher setting allows (from the input
    /// review), and a lower one refuses earlier.
    @Test func theDepthSettingIsTheBound() throws {
        let schema = DynamicCodecAgreementTests.kitchenSink
        let tree = try #require(schema.messageIndex(named: "TreeNode"))
        let nested = { (depth: Int) in Data((String(repeating: #"{"parent":"#, count: depth) + "{}" + String(repeating: "}", count: depth)).utf8) }
        var deep = DynamicJSONCodec(schema: schema)
        #expect(throws: DynamicCodecError.self) { try deep.decode(nested(120), as: tree) }
        deep.maximumDepth = 150
        #expect(try deep.decode(nested(120), as: tree).type == tree)
        var shallow = DynamicJSONCodec(schema: schema)
        shallow.maximumDepth = 10
        #expect(throws: DynamicCodecError.self) { try shallow.decode(nested(12), as: tree) }
        #expect(try shallow.decode(nested(8), as: tree).type == tree)
    }
}

extension DynamicCodecRobustnessTests {
    /// 100,000 unpacked list elements and 20,000 map entries decode in one pass, not one
    /// copy or sort per element (a hostile response must not hang `call`).
    @Test func manyElementsDecodeInLinearTime() throws {
        let schema = DynamicCodecAgreementTests.kitchenSink
        let lists = try #require(schema.messageIndex(named: "Lists"))
        let maps = try #require(schema.messageIndex(named: "Maps"))
        // Lists.strings (field 14) one element at a time: tag 0x72, length 1, "a".
        let listBytes = Data([UInt8](repeating: 0, count: 100_000).indices.flatMap { _ in [0x72, 0x01, 0x61] as [UInt8] })
        let decoded = try DynamicBinaryCodec(schema: schema).decode(listBytes, as: lists)
        guard case let .list(items)? = decoded.fields[14] else {
            Issue.record("strings must decode as a list")
            return
        }
        #expect(items.count == 100_000)
        // Maps.int32ToInt64 (field 2): entries {1: key, 2: 1}.
        var mapBytes: [UInt8] = []
        for key in 0..<20_000 {
            var entry: [UInt8] = [0x08]
            var value = UInt64(key)
            repeat {
                entry.append(UInt8(value & 0x7F) | (value > 0x7F ? 0x80 : 0))
                value >>= 7
            } while value > 0
            entry += [0x10, 0x01]
            mapBytes += [0x12, UInt8(entry.count)] + entry
        }
        let map = try DynamicBinaryCodec(schema: schema).decode(Data(mapBytes), as: maps)
        guard case let .map(entries)? = map.fields[2] else {
            Issue.record("int32ToInt64 must decode as a map")
            return
        }
        #expect(entries.count == 20_000)
        #expect(entries.first?.key == .int(0) && entries.last?.key == .int(19_999))
    }
}
