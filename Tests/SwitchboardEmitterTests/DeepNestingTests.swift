import Foundation
import PeerSupport
import SwitchboardEmitter
import SwitchboardSchema
import Testing

/// The schema compiler and the emitters recurse per level of nesting. A debug build spends
/// about 16 KB of stack a level in the parser alone, so 32 levels (the default limit)
/// overflowed the 512 KB stack macOS gives a secondary thread, a Dispatch worker or a Swift
/// concurrency thread: the compiler crashed. They now run on threads of their own.
@Suite struct DeepNestingTests {
    /// Messages nested `depth` deep, each with a field of the next level's type, a list and a
    /// map of it, and an enum: every recursive path of the parser, validator and emitters.
    static func nestedSchema(depth: Int) -> String {
        var text = "package deep\n"
        for level in 0..<depth {
            let indent = String(repeating: " ", count: level)
            text += "\(indent)message M\(level) {\n\(indent) 1 name: string\n\(indent) enum E\(level) { zero = 0 one = 1 }\n"
            text += "\(indent) 2 kind: E\(level)\n"
            if level + 1 < depth {
                text += "\(indent) 3 next: M\(level + 1)?\n\(indent) 4 items: [M\(level + 1)]\n\(indent) 5 byName: {string: M\(level + 1)}\n"
            }
        }
        for level in (0..<depth).reversed() { text += String(repeating: " ", count: level) + "}\n" }
        return text
    }

    @Test(arguments: [32, 256])
    func aSchemaNestedToTheLimitCompilesAndGeneratesFromASmallStack(depth: Int) {
        let text = Self.nestedSchema(depth: depth)
        let limits = SchemaLimits(maximumNesting: depth)
        let results = onThread { () -> (errors: [String], files: Int, proto: String, catalogue: Int) in
            let output = SchemaCompiler.compile(files: [SourceFile(path: "deep.sb", text: text)], limits: limits)
            guard let schema = output.schema else { return (output.diagnostics.map(\.message), 0, "", 0) }
            let files = SwiftEmitter.generate(schema, options: SwiftEmitterOptions())
            return ([], files.count, ProtoExporter.export(schema), CatalogueExporter.export(schema).count)
        }
        #expect(results.errors.isEmpty, "\(results.errors.prefix(3))")
        // Nested types are generated inside their top-level type's file.
        #expect(results.files >= 1)
        #expect(results.proto.contains("message M\(depth - 1) {"))
        #expect(results.proto.contains("enum E\(depth - 1) {"))
        #expect(results.catalogue >= 1)
    }

    /// One level more than the limit is a clear error, from a small stack too.
    @Test func oneLevelPastTheLimitIsAnError() {
        let text = Self.nestedSchema(depth: 257)
        let codes = onThread {
            SchemaCompiler.compile(files: [SourceFile(path: "deep.sb", text: text)], limits: SchemaLimits(maximumNesting: 256))
                .diagnostics.map(\.code.rawValue)
        }
        #expect(codes.contains("nesting-too-deep"))
    }
}
