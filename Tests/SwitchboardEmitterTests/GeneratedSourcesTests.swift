import Foundation
import SwitchboardEmitter
import SwitchboardSchema
import Testing

/// The committed SDKs are golden files: regenerating them must change nothing.
/// (`switchboard generate --check` does the same from the command line.)
@Suite struct GeneratedSourcesTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    func assertUpToDate(schema: String, output: String) throws {
        let compiled = SchemaCompiler.compile(directory: Self.root.appendingPathComponent(schema))
        let schema = try #require(compiled.schema, "\(compiled.renderedDiagnostics)")
        let files = SwiftEmitter.generate(schema, options: SwiftEmitterOptions())
        let directory = Self.root.appendingPathComponent(output)
        for file in files {
            let committed = try? String(contentsOf: directory.appendingPathComponent(file.path), encoding: .utf8)
            #expect(committed == file.contents, "\(output)/\(file.path) is stale; run `switchboard generate`")
        }
        let onDisk = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".swift") }
        #expect(Set(onDisk) == Set(files.map(\.path)), "\(output) holds files the schema does not produce")
    }

    @Test func signalChatSDKIsUpToDate() throws {
        try assertUpToDate(schema: "schema", output: "Sources/SignalChat/Generated")
    }

    @Test func kitchenSinkIsUpToDate() throws {
        try assertUpToDate(schema: "Tests/Schemas/kitchen_sink", output: "Tests/KitchenSink/Generated")
    }

    /// Every type name generated code spells unqualified is one the schema generated or one
    /// the validator reserves, so no schema name can hide it: a new runtime or Swift type in
    /// the emitter's output fails here until it is reserved.
    @Test(arguments: ["schema", "Tests/Schemas/kitchen_sink", "Examples/RoomsApp/Sources/RoomsAPI"])
    func generatedCodeNamesOnlyReservedOrGeneratedTypes(schemaPath: String) throws {
        let compiled = SchemaCompiler.compile(directory: Self.root.appendingPathComponent(schemaPath))
        let schema = try #require(compiled.schema, "\(compiled.renderedDiagnostics)")
        let text = SwiftEmitter.generate(schema, options: SwiftEmitterOptions()).map(\.contents).joined(separator: "\n")
        // Code only: comments and string literals say anything.
        let code = text.split(separator: "\n").map { line -> String in
            var kept = ""
            var inString = false
            var previous: Character = " "
            for character in line {
                if !inString && character == "/" && previous == "/" { kept.removeLast(); break }
                if character == "\"" && previous != "\\" { inString.toggle(); previous = character; continue }
                if !inString { kept.append(character) }
                previous = character
            }
            return kept
        }.joined(separator: "\n")
        let identifier = /(?<before>[.\w]?)(?<name>[A-Z][A-Za-z0-9_]*)/
        var declared = Set<String>()
        for match in code.matches(of: /\b(?:struct|enum|class|protocol|typealias|case)\s+(?<name>[A-Za-z_][A-Za-z0-9_]*)/) {
            declared.insert(String(match.name))
        }
        var unknown = Set<String>()
        for match in code.matches(of: identifier) where match.before.isEmpty || match.before == " " {
            let name = String(match.name)
            if !declared.contains(name) && !SwiftNames.isReservedTypeName(name) { unknown.insert(name) }
        }
        #expect(unknown.isEmpty, "generated code names types nothing reserves: \(unknown.sorted())")
    }

    @Test func exportedProtoMatchesTheFixtureProto() throws {
        let compiled = SchemaCompiler.compile(directory: Self.root.appendingPathComponent("schema"))
        let exported = ProtoExporter.export(try #require(compiled.schema))
        let committed = try String(contentsOf: Self.root.appendingPathComponent("Tests/SwitchboardRuntimeTests/Fixtures/protos/signal_chat.proto"), encoding: .utf8)
        #expect(exported == committed)
        #expect(exported.contains("""
            message WebSocketRequestMessage {
              // The HTTP verb, such as `GET` or `PUT`.
              optional string verb = 1;
            """))
        #expect(exported.contains("  repeated string headers = 5;\n  // Chosen by the sender; the response carries it back.\n  optional uint64 id = 4;"))
    }
}
