import Foundation
import KitchenSink
import PeerSupport
import SwitchboardDynamic
import SwitchboardRuntime
import SwitchboardSchema
import TestMessagesProto3
import Testing

/// Random messages of the kitchen-sink schema through Python protobuf, both codecs, both
/// directions: Python re-serializes our bytes to the same bytes, reads our JSON as the same
/// message, and writes JSON we read back as the same message.
@Suite(.timeLimit(.minutes(4)))
struct PythonDifferentialTests {
    /// The kitchen-sink descriptors, compiled by protoc from the exported .proto the fixtures
    /// keep current (scripts/make-fixtures.sh --check).
    static func descriptorSet() throws -> URL {
        let protos = Fixtures.directory.appendingPathComponent("protos")
        let output = try ScratchDirectory.make("switchboard-differential").appendingPathComponent("kitchen_sink.pb")
        let protoc = Process()
        protoc.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        protoc.arguments = ["protoc", "-I", protos.path, "-I", "/usr/include", "--include_imports",
                            "--descriptor_set_out=\(output.path)", "kitchen_sink.proto", "test_messages_proto3.proto"]
        try protoc.run()
        protoc.waitUntilExit()
        try #require(protoc.terminationStatus == 0, "protoc failed")
        return output
    }

    struct Case {
        let name: String
        let binary: Data
        let json: Data
        /// Decodes JSON with our codec and encodes the result as binary.
        let jsonToBinary: (Data) throws -> Data
        /// Whether Python's bytes must equal ours exactly: not with maps, whose deterministic
        /// order differs between protobuf implementations (upb sorts string keys by length first).
        let exactBytes: Bool
        /// What two encodings of one message share: our re-encoding, or for messages holding
        /// an Any our JSON (an Any keeps the packed bytes as they came, so a map inside one
        /// keeps Python's order; JSON unpacks it).
        let canonical: (Data) throws -> Data
    }

    /// When Python's bytes must equal ours exactly (``Case/exactBytes``).
    enum ExactBytes<M> {
        case always
        /// Never: the messages hold maps of several entries.
        case never
        /// For each message that passes the test (one whose maps have at most one entry).
        case when((M) -> Bool)
    }

    static func cases() -> [Case] {
        var random = RandomMessages(seed: 2026)
        var cases: [Case] = []
        func add<M: ProtoMessage>(_ name: String, exactBytes: ExactBytes<M> = .always, comparesJSON: Bool = false, _ make: (inout RandomMessages) -> M) {
            for _ in 0..<60 {
                let message = make(&random)
                // The generators draw values JSON can carry: a failure here is a bug, not a skip.
                guard let json = try? message.jsonUTF8Bytes() else {
                    Issue.record("\(name): a random message did not encode as JSON")
                    continue
                }
                let exact: Bool
                switch exactBytes {
                case .always: exact = true
                case .never: exact = false
                case let .when(test): exact = test(message)
                }
                cases.append(Case(name: name.contains(".") ? name : "switchboard.test." + name, binary: message.serializedData(), json: Data(json),
                                  jsonToBinary: { try M(jsonUTF8Bytes: $0).serializedData() },
                                  exactBytes: exact,
                                  canonical: comparesJSON ? { Data(try M(serializedData: $0).jsonUTF8Bytes()) } : { try M(serializedData: $0).serializedData() }))
            }
        }
        add("Scalars") { $0.scalars() }
        add("Lists") { $0.lists() }
        add("Maps", exactBytes: .never) { $0.maps() }
        add("Composite") { $0.composite() }
        add("TreeNode") { $0.tree(depth: 4) }
        add("Chain") { $0.chain(depth: 6) }
        // Chosen JSON names (protobuf's json_name), lists written one element at a time, enum
        // aliases (Python writes a value's first name, as we do) and protobuf's JSON names for
        // odd spellings.
        add("Renamed") { $0.renamed() }
        add("UnpackedLists") { $0.unpackedLists() }
        add("Feelings", exactBytes: .when({ (feelings: Feelings) in feelings.byName.count <= 1 })) { $0.feelings() }
        add("Spellings") { $0.spellings() }
        // Any's JSON spells the packed message: Point must be known to both sides.
        AnyTypeRegistry.shared.register(Point.self)
        add("WellKnown", exactBytes: .never, comparesJSON: true) { $0.wellKnown() }
        // Protobuf's conformance message, every field drawn at random from its schema.
        AnyTypeRegistry.shared.register(ForeignMessage.self)
        let conformance = try! #require(SchemaCompiler.compile(
            directory: DynamicCodecAgreementTests.schemas.appendingPathComponent("Schemas/test_messages_proto3")).schema)
        let type = conformance.messageIndex(named: "protobuf_test_messages.proto3.TestAllTypesProto3")!
        var dynamic = RandomDynamicMessages(schema: conformance, seed: 2027, anyPayload: "protobuf_test_messages.proto3.ForeignMessage")
        let binary = DynamicBinaryCodec(schema: conformance)
        add("protobuf_test_messages.proto3.TestAllTypesProto3", exactBytes: .never, comparesJSON: true) { _ in
            try! TestAllTypesProto3(serializedData: binary.encode(dynamic.message(type, depth: 3)))
        }
        // The same with every map (a Struct's too, at any depth) cut to one entry: without the
        // order of map entries to differ in, Python's bytes must equal ours.
        add("protobuf_test_messages.proto3.TestAllTypesProto3", comparesJSON: true) { _ in
            try! TestAllTypesProto3(serializedData: binary.encode(Self.withOneEntryMaps(dynamic.message(type, depth: 3))))
        }
        return cases
    }

    /// `message` with every map, at every depth, cut to its first entry.
    static func withOneEntryMaps(_ message: DynamicMessage) -> DynamicMessage {
        var trimmed = message
        for (number, field) in message.fields {
            switch field {
            case let .single(value):
                trimmed.fields[number] = .single(Self.withOneEntryMaps(in: value))
            case let .list(items):
                trimmed.fields[number] = .list(items.map { Self.withOneEntryMaps(in: $0) })
            case let .map(entries):
                trimmed.fields[number] = .map(entries.prefix(1).map { DynamicMapEntry(key: $0.key, value: Self.withOneEntryMaps(in: $0.value)) })
            }
        }
        return trimmed
    }

    /// `value`, its maps cut to one entry if it is a message.
    static func withOneEntryMaps(in value: DynamicValue) -> DynamicValue {
        guard case let .message(message) = value else { return value }
        return .message(Self.withOneEntryMaps(message))
    }

    @Test func pythonProtobufAgreesOnRandomMessages() async throws {
        let descriptors = try Self.descriptorSet()
        let peer = try PythonPeer(script: "protobuf_differential.py", arguments: [descriptors.path])
        #expect(await peer.firstLineAsync() == "ready")
        let cases = Self.cases()
        // "-" stands for no bytes, so every line has three words.
        let hex = { (data: Data) in data.isEmpty ? "-" : data.map { String(format: "%02x", $0) }.joined() }
        var input = ""
        for item in cases { input += "\(item.name) \(hex(item.binary)) \(item.json.base64EncodedString())\n" }
        peer.writeInBackground(Data(input.utf8))
        let (status, output) = await peer.finishAsync()
        #expect(status == 0, "\(output.prefix(500))")
        let lines = output.split(separator: "\n").map(String.init)
        try #require(lines.count == cases.count, "Python answered \(lines.count) of \(cases.count): \(output.prefix(500))")
        for (item, line) in zip(cases, lines) {
            let fields = line.split(separator: " ").map(String.init)
            guard fields.count == 3, fields[0] != "error" else {
                Issue.record("\(item.name): Python refused our output: \(line)")
                continue
            }
            let ours = hex(item.binary)
            let theirs = (Data(hex: fields[0]), Data(hex: fields[1]))
            if item.exactBytes { #expect(fields[0] == ours, "\(item.name): Python re-serializes our bytes differently") }
            let expected = try item.canonical(item.binary)
            #expect(try item.canonical(theirs.0) == expected, "\(item.name): Python reads our bytes as another message")
            let fromOurJSON = try item.canonical(theirs.1)
            #expect(fromOurJSON == expected, "\(item.name): Python reads our JSON \(String(decoding: item.json, as: UTF8.self)) differently; canonical \(String(decoding: expected, as: UTF8.self)) versus \(String(decoding: fromOurJSON, as: UTF8.self))")
            let theirJSON = try #require(Data(base64Encoded: fields[2]))
            #expect(try item.canonical(item.jsonToBinary(theirJSON)) == expected, "\(item.name): we read Python's JSON \(String(decoding: theirJSON, as: UTF8.self)) differently")
        }
    }
}

/// Generators for the kitchen-sink messages only this test draws.
private extension RandomMessages {
    /// Named values, an alias's value and unnamed ones (the enum is open).
    mutating func mood() -> Mood {
        Mood(rawValue: [0, 1, 2, 77, -3].randomElement(using: &rng)!)
    }

    mutating func renamed() -> Renamed {
        Renamed(plain: string(), lower: integer(), usualName: string())
    }

    mutating func unpackedLists() -> UnpackedLists {
        var m = UnpackedLists()
        m.int32s = list { $0.integer() }
        m.doubles = list { $0.double() }
        m.colors = list { $0.color() }
        m.flags = list { $0.chance(50) }
        m.packedInt32s = list { $0.integer() }
        return m
    }

    mutating func feelings() -> Feelings {
        var m = Feelings()
        m.mood = mood()
        m.moods = list { $0.mood() }
        m.byName = Dictionary(list { ($0.string(), $0.mood()) }, uniquingKeysWith: { a, _ in a })
        return m
    }

    mutating func spellings() -> Spellings {
        var m = Spellings()
        m.leadingCapital = string()
        m.doubleUnderscore = integer()
        m.trailing = chance(50)
        m.leading = string()
        m.fieldName5 = integer()
        m.urlPath = string()
        return m
    }
}

private extension Data {
    /// Bytes from hex digits; "-" is none.
    init(hex: String) {
        let digits = Array(hex.utf8)
        self.init(hex == "-" ? [] : stride(from: 0, to: digits.count - 1, by: 2).compactMap {
            UInt8(String(decoding: digits[$0...$0 + 1], as: UTF8.self), radix: 16)
        })
    }
}
