import Foundation
import SwitchboardEmitter
import SwitchboardSchema
import Testing

/// The committed SDKs are golden files: regenerating them must change nothing.
/// (`switchboard generate --check` does the same from the command line.)
@Suite struct GeneratedSourcesTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    func assertUpToDate(schema: String, output: String, module: String) throws {
        let compiled = SchemaCompiler.compile(directory: Self.root.appendingPathComponent(schema))
        let schema = try #require(compiled.schema, "\(compiled.renderedDiagnostics)")
        let files = SwiftEmitter.generate(schema, options: SwiftEmitterOptions(moduleName: module))
        let directory = Self.root.appendingPathComponent(output)
        for file in files {
            let committed = try? String(contentsOf: directory.appendingPathComponent(file.path), encoding: .utf8)
            #expect(committed == file.contents, "\(output)/\(file.path) is stale; run `switchboard generate`")
        }
        let onDisk = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".swift") }
        #expect(Set(onDisk) == Set(files.map(\.path)), "\(output) holds files the schema does not produce")
    }

    @Test func signalChatSDKIsUpToDate() throws {
        try assertUpToDate(schema: "schema", output: "Sources/SignalChat/Generated", module: "SignalChat")
    }

    @Test func kitchenSinkIsUpToDate() throws {
        try assertUpToDate(schema: "Tests/Schemas/kitchen_sink", output: "Tests/KitchenSink/Generated", module: "KitchenSink")
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
