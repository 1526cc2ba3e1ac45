import Foundation
import SwitchboardDynamic
import SwitchboardRuntime
import SwitchboardSchema
import Testing

/// A schema that imports another schema's package, against real protobuf: protoc encoded
/// messages of `acme.app` holding `acme.common` types (and the well-known types `acme.common`
/// imports) from the two exported .proto files, and Python protobuf wrote their JSON
/// (`Fixtures/imports`, scripts/make-fixtures.sh). No test target compiles acme's generated
/// code, so the schema-at-run-time codecs read them, with `acme.common` on the import path as
/// `switchboard call --import-path` has it.
@Suite struct ImportedPackageFixtureTests {
    static let imports = DynamicCodecAgreementTests.schemas.appendingPathComponent("Schemas/imports")
    static let schema: Schema? = SchemaCompiler.compile(directory: imports.appendingPathComponent("app"),
                                                        importPaths: [.init(directory: imports.appendingPathComponent("common"))]).schema
    static var fixtures: URL { Fixtures.directory.appendingPathComponent("imports") }

    /// Case names: `<case>.<full.message.Name>`, one per text-format source.
    static var names: [String] {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: fixtures.appendingPathComponent("binary").path)) ?? []
        return files.filter { $0.hasSuffix(".binpb") }.map { String($0.dropLast(".binpb".count)) }.sorted()
    }

    static func binary(_ name: String) throws -> Data {
        try Data(contentsOf: fixtures.appendingPathComponent("binary/\(name).binpb"))
    }

    static func json(_ name: String) throws -> Data {
        try Data(contentsOf: fixtures.appendingPathComponent("json/\(name).json"))
    }

    /// A Timestamp or Duration (`type`) as the binary codec reads it: defaults absent.
    static func time(_ type: Int, seconds: Int64, nanos: Int64) -> DynamicValue {
        var fields: [Int: DynamicField] = [:]
        if seconds != 0 { fields[1] = .single(.int(seconds)) }
        if nanos != 0 { fields[2] = .single(.int(nanos)) }
        return .message(DynamicMessage(type: type, fields: fields))
    }

    /// Whether `message` or any message it holds kept bytes the schema does not know.
    static func hasUnknownFields(_ message: DynamicMessage) -> Bool {
        if !message.unknownFields.isEmpty { return true }
        let inValue = { (value: DynamicValue) -> Bool in
            if case let .message(nested) = value { return Self.hasUnknownFields(nested) }
            return false
        }
        for field in message.fields.values {
            switch field {
            case let .single(value): if inValue(value) { return true }
            case let .list(items): if items.contains(where: inValue) { return true }
            case let .map(entries): if entries.contains(where: { inValue($0.value) }) { return true }
            }
        }
        return false
    }

    @Test func everyCaseWasMade() throws {
        _ = try #require(Self.schema, "the imports schema does not compile")
        #expect(Self.names == ["profile.acme.app.Profile", "update_moved.acme.app.Update", "update_renamed.acme.app.Update"])
        for name in Self.names {
            #expect(FileManager.default.fileExists(atPath: Self.fixtures.appendingPathComponent("json/\(name).json").path), "no JSON for \(name)")
        }
    }

    /// protoc's bytes decode with every field known, at every depth (an imported type read
    /// with the wrong shape would leave unknown fields), and re-encode byte for byte.
    @Test(arguments: ImportedPackageFixtureTests.names)
    func protocBytesDecodeAndReencodeIdentically(name: String) throws {
        let schema = try #require(Self.schema)
        let type = try #require(schema.messageIndex(named: Fixtures.messageName(of: name)))
        let codec = DynamicBinaryCodec(schema: schema)
        let bytes = try Self.binary(name)
        let message = try codec.decode(bytes, as: type)
        #expect(!Self.hasUnknownFields(message), "\(name): fields left unknown")
        #expect(codec.encode(message) == bytes, "\(name): re-encoding differs from protoc")
    }

    /// Python protobuf's JSON reads as the same message as protoc's bytes, and our JSON means
    /// the same as Python's (compared as parsed JSON values, not text).
    @Test(arguments: ImportedPackageFixtureTests.names)
    func pythonJSONAgreesWithOurs(name: String) throws {
        let schema = try #require(Self.schema)
        let type = try #require(schema.messageIndex(named: Fixtures.messageName(of: name)))
        let binary = DynamicBinaryCodec(schema: schema), json = DynamicJSONCodec(schema: schema)
        let bytes = try Self.binary(name), theirs = try Self.json(name)
        let fromBinary = try binary.decode(bytes, as: type)
        let fromJSON = try json.decode(theirs, as: type)
        #expect(fromJSON == fromBinary, "\(name): Python's JSON reads differently from protoc's bytes")
        #expect(binary.encode(fromJSON) == bytes, "\(name): Python's JSON encodes to other bytes than protoc's")
        let ours = try json.encodeStrictly(fromBinary)
        let theirValue = try JSONSerialization.jsonObject(with: theirs, options: [.fragmentsAllowed]) as? NSDictionary
        let ourValue = try JSONSerialization.jsonObject(with: Data(ours.utf8), options: [.fragmentsAllowed]) as? NSDictionary
        #expect(theirValue != nil && theirValue == ourValue, "\(name): our JSON \(ours)")
    }

    /// The values protoc wrote, field by field: an imported message (holding well-known
    /// types), a list of an imported open enum with a number it does not name, and a map of
    /// imported messages, one holding only an empty Timestamp.
    @Test func profileHoldsTheImportedValues() throws {
        let schema = try #require(Self.schema)
        let profile = try #require(schema.messageIndex(named: "acme.app.Profile"))
        let address = try #require(schema.messageIndex(named: "acme.common.Address"))
        let timestamp = try #require(schema.messageIndex(named: "google.protobuf.Timestamp"))
        let duration = try #require(schema.messageIndex(named: "google.protobuf.Duration"))
        #expect(schema.messages[address].importedFrom != nil && schema.messages[profile].importedFrom == nil)
        // The app's own Address is another type.
        #expect(schema.messageIndex(named: "acme.app.Address") != address)
        let home = DynamicMessage(type: address, fields: [
            1: .single(.string("1 Main St")),
            2: .single(Self.time(timestamp, seconds: 1_764_151_200, nanos: 1)),
            3: .single(Self.time(duration, seconds: -1, nanos: -500_000_000)),
            4: .single(.enumeration(1)),
        ])
        let expected = DynamicMessage(type: profile, fields: [
            1: .single(.message(home)),
            2: .single(Self.time(timestamp, seconds: 1_700_000_000, nanos: 250_000_000)),
            3: .list([.enumeration(1), .enumeration(0), .enumeration(7)]),
            4: .map([
                DynamicMapEntry(key: .string("home"), value: .message(DynamicMessage(type: address, fields: [
                    1: .single(.string("Hauptstraße 5")),
                    4: .single(.enumeration(1)),
                ]))),
                DynamicMapEntry(key: .string("office"), value: .message(DynamicMessage(type: address, fields: [
                    2: .single(Self.time(timestamp, seconds: 0, nanos: 0)),
                ]))),
            ]),
        ])
        let codec = DynamicBinaryCodec(schema: schema)
        let bytes = try Self.binary("profile.acme.app.Profile")
        #expect(try codec.decode(bytes, as: profile) == expected)
        #expect(codec.encode(expected) == bytes, "the message built here encodes to other bytes than protoc's")
    }

    /// An imported message as an optional field present with no fields (explicit presence
    /// keeps it), as the chosen oneof member, and the oneof's other member with the optional
    /// field absent.
    @Test func updateHoldsTheImportedValues() throws {
        let schema = try #require(Self.schema)
        let update = try #require(schema.messageIndex(named: "acme.app.Update"))
        let address = try #require(schema.messageIndex(named: "acme.common.Address"))
        let duration = try #require(schema.messageIndex(named: "google.protobuf.Duration"))
        let codec = DynamicBinaryCodec(schema: schema)
        let moved = DynamicMessage(type: update, fields: [
            1: .single(.message(DynamicMessage(type: address))),
            2: .single(.message(DynamicMessage(type: address, fields: [
                1: .single(.string("2 Side St")),
                3: .single(Self.time(duration, seconds: 86_400, nanos: 0)),
                4: .single(.enumeration(1)),
            ]))),
        ])
        let movedBytes = try Self.binary("update_moved.acme.app.Update")
        #expect(try codec.decode(movedBytes, as: update) == moved)
        #expect(codec.encode(moved) == movedBytes)
        let renamed = DynamicMessage(type: update, fields: [3: .single(.string("Flat 3"))])
        let renamedBytes = try Self.binary("update_renamed.acme.app.Update")
        #expect(try codec.decode(renamedBytes, as: update) == renamed)
        #expect(codec.encode(renamed) == renamedBytes)
    }
}
