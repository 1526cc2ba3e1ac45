import Foundation
@testable import SwitchboardSchema
import Testing

/// A schema type named like a public type of the runtime would shadow it in generated code,
/// which names those types unqualified; every such name is renamed, with a warning.
@Suite struct RuntimeNameTests {
    static let runtimeSources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources/SwitchboardRuntime")

    /// Every top-level public type the runtime declares, read from its sources.
    static func runtimeTypeNames() throws -> Set<String> {
        var names: Set<String> = []
        let files = FileManager.default.enumerator(at: runtimeSources, includingPropertiesForKeys: nil)
        let pattern = try Regex(#"^public (?:final )?(?:struct|enum|class|protocol|typealias|actor) ([A-Za-z_][A-Za-z0-9_]*)"#)
        while let file = files?.nextObject() as? URL {
            guard file.pathExtension == "swift" else { continue }
            for line in try String(contentsOf: file, encoding: .utf8).split(separator: "\n") {
                if let match = line.firstMatch(of: pattern), let name = match.output[1].substring { names.insert(String(name)) }
            }
        }
        return names
    }

    @Test func everyPublicRuntimeTypeIsReserved() throws {
        let names = try Self.runtimeTypeNames()
        #expect(names.count > 60, "found \(names.count) runtime types")
        let missing = names.subtracting(SwiftNames.reservedTypeNames)
        #expect(missing.isEmpty, "not reserved: \(missing.sorted())")
    }

    @Test func aMessageNamedLikeARuntimeTypeIsRenamed() throws {
        let text = try Self.runtimeTypeNames().sorted().map { "message \($0) { 1 value: string }" }.joined(separator: "\n")
        let output = SchemaCompiler.compile(files: [SourceFile(path: "collide.sb", text: "package collide\n" + text)])
        let schema = try #require(output.schema, "\(output.diagnostics)")
        #expect(schema.messages.allSatisfy { $0.swiftName == $0.name + "Message" })
        #expect(output.diagnostics.filter { $0.code == .generatedMemberCollision }.count == schema.messages.count)
    }
}
