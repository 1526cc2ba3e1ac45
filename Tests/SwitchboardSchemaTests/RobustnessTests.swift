import Foundation
import SwitchboardSchema
import Testing

/// No input may crash or hang the front end. Every loop here is bounded.
@Suite struct RobustnessTests {
    struct Generator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state ^ (state >> 29)
        }
    }

    static var schemaDirectory: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("schema")
    }

    /// Every sample schema file, concatenated with the package line kept only once.
    static var sampleSchema: String {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: schemaDirectory.path)) ?? []
        let texts = files.sorted().compactMap { try? String(contentsOf: schemaDirectory.appendingPathComponent($0), encoding: .utf8) }
        return "package signal.chat\n" + texts.map { $0.replacingOccurrences(of: "package signal.chat", with: "") }.joined(separator: "\n")
    }

    @Test func sampleSchemaCompilesWithoutErrors() {
        let output = SchemaCompiler.compile(files: [SourceFile(path: "all.sb", text: Self.sampleSchema)])
        #expect(output.schema != nil, "\(output.renderedDiagnostics)")
        let fromDirectory = SchemaCompiler.compile(directory: Self.schemaDirectory)
        #expect(fromDirectory.schema?.messages.count == output.schema?.messages.count)
        #expect(fromDirectory.diagnostics.allSatisfy { $0.severity == .warning })
    }

    // The two random tests are long CPU loops; they yield between inputs so that they never
    // hold one of the (few) cooperative threads that every other test's I/O resumes on.

    @Test func randomMutationsNeverCrash() async {
        let original = Array(Self.sampleSchema.utf8)
        #expect(original.count > 1000)
        let pieces: [[UInt8]] = ["{", "}", "[", "]", ":", "?", "@", "message ", "enum ", "oneof ", "reserved ", "1 ", "-", "\"", "/*", "///", "\n", "to max", "{string:", "0x", "é", "\u{0}"].map { Array($0.utf8) }
        var random = Generator(state: 7)
        for _ in 0..<250 {
            await Task.yield()
            var bytes = original
            for _ in 0..<Int.random(in: 1...12, using: &random) {
                let position = Int.random(in: 0..<bytes.count, using: &random)
                switch Int.random(in: 0..<3, using: &random) {
                case 0: bytes.removeSubrange(position..<min(bytes.count, position + Int.random(in: 1...30, using: &random)))
                case 1: bytes.insert(contentsOf: pieces.randomElement(using: &random)!, at: position)
                default: bytes[position] = UInt8.random(in: 0...255, using: &random)
                }
                if bytes.isEmpty { bytes = [0x20] }
            }
            let output = SchemaCompiler.compile(files: [SourceFile(path: "fuzz.sb", text: String(decoding: bytes, as: UTF8.self))])
            _ = output.renderedDiagnostics
        }
    }

    @Test func randomTokenSoupNeverCrashes() async {
        let words = ["package", "demo", "message", "enum", "oneof", "reserved", "to", "max", "A", "b", "{", "}", "[", "]", "(", ")",
                     ":", "?", "=", ",", ".", "@", "-", "->", "1", "0", "19000", "\"s\"", "string", "timestamp", "int32", "///doc\n"]
        var random = Generator(state: 11)
        for _ in 0..<500 {
            await Task.yield()
            let text = (0..<Int.random(in: 0...80, using: &random)).map { _ in words.randomElement(using: &random)! }.joined(separator: " ")
            let output = SchemaCompiler.compile(files: [SourceFile(path: "soup.sb", text: text)])
            // Either a schema or a reason: never silence.
            #expect(output.schema != nil || output.diagnostics.contains { $0.severity == .error })
            _ = output.renderedDiagnostics
        }
    }

    @Test func pathologicalNestingIsReportedNotRecursedInto() {
        let deepTypes = "package demo\nmessage A { 1 x: " + String(repeating: "[", count: 50_000) + "int32" + String(repeating: "]", count: 50_000) + " }"
        let output = SchemaCompiler.compile(files: [SourceFile(path: "deep.sb", text: deepTypes)])
        #expect(output.diagnostics.contains { $0.code == .nestingTooDeep })
        let deepMessages = "package demo\n" + String(repeating: "message M {", count: 20_000) + String(repeating: "}", count: 20_000)
        let messages = SchemaCompiler.compile(files: [SourceFile(path: "deep.sb", text: deepMessages)])
        #expect(messages.diagnostics.contains { $0.code == .nestingTooDeep })
        let braces = "package demo\n" + String(repeating: "{", count: 100_000)
        _ = SchemaCompiler.compile(files: [SourceFile(path: "braces.sb", text: braces)]).renderedDiagnostics
    }

    @Test func longRecursiveChainsDoNotOverflow() {
        var text = "package demo\n"
        for index in 0..<3000 { text += "message M\(index) { 1 next: M\(index + 1)? }\n" }
        text += "message M3000 { 1 first: M0 }\n"
        let output = SchemaCompiler.compile(files: [SourceFile(path: "chain.sb", text: text)])
        #expect(output.schema != nil, "\(output.renderedDiagnostics.prefix(500))")
        #expect(output.schema?.messages.last?.fields.first?.isIndirect == true)
    }
}
