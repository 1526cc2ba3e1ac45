import Foundation
import SwitchboardSchema
import Testing

/// The README's schema examples are what a newcomer copies first: they must compile.
@Suite struct ReadmeSchemaTests {
    /// The README's plain code blocks that hold schema text (a `package` line, or services).
    static func readmeSchemaBlocks() throws -> [String] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        var blocks: [String] = []
        // nil outside a block; a plain block collects its lines, one with a language skips them.
        var current: [Substring]?
        var isPlain = false
        for line in readme.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") {
                if let lines = current {
                    if isPlain { blocks.append(lines.joined(separator: "\n")) }
                    current = nil
                } else {
                    current = []
                    isPlain = line == "```"
                }
            } else {
                current?.append(line)
            }
        }
        return blocks.filter { $0.hasPrefix("package ") || $0.contains("\nservice ") }
    }

    /// The types the examples name without declaring them.
    static let declarationsTheExamplesAssume = """
        message LookUpUsernameHashRequest { 1 hash: bytes  2 clientMessageId: string }
        message LookUpUsernameHashResponse { 1 uuid: string }
        message ValidationError { 1 message: string }
        message ListChatsRequest { 1 beforeId: string?  2 limit: int32? }
        message ListChatsResponse { 1 chats: [ChatMessage]  2 nextBeforeId: string? }
        message Envelope { 1 content: bytes }
        """

    @Test func theReadmeSchemaExamplesCompile() throws {
        let blocks = try Self.readmeSchemaBlocks()
        try #require(blocks.count == 2, "the README's two schema blocks (messages, services) were not found")
        let text = blocks.joined(separator: "\n") + "\n" + Self.declarationsTheExamplesAssume
        let output = SchemaCompiler.compile(files: [SourceFile(path: "README.sb", text: text)])
        #expect(output.schema != nil, "\(output.renderedDiagnostics)")
        #expect(output.diagnostics.filter { $0.severity == .error }.isEmpty, "\(output.renderedDiagnostics)")
    }
}
