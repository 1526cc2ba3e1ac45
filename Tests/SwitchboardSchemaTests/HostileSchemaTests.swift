import Foundation
import SwitchboardSchema
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Schema text written to break out of the generated code, to crash the compiler, or to make
/// it work without bound: each is a clear error (or a bounded cost), never a crash.
@Suite struct HostileSchemaTests {
    func compile(_ text: String) -> SchemaCompiler.Output {
        SchemaCompiler.compile(files: [SourceFile(path: "hostile.sb", text: text)])
    }

    func codes(_ output: SchemaCompiler.Output) -> [String] {
        output.diagnostics.filter { $0.severity == .error }.map(\.code.rawValue)
    }

    static func service(route: String, rpcName: String? = nil) -> String {
        """
        package hostile
        message Request { 1 id: string }
        message Response { 1 id: string }
        service Things {
          auth none
          rpc get(Request) -> Response {
            POST "\(route)"
            \(rpcName.map { "rpcName \"\($0)\"" } ?? "")
          }
        }
        """
    }

    @Test func pathsThatWouldBreakTheGeneratedStringLiteralAreRefused() {
        // Swift interpolation, a closing quote, a backslash, a control character, non-ASCII.
        for route in [#"/v1/\\(fatalError())"#, #"/v1/\"+x+\""#, "/v1/a\\\\b", "/v1/a\u{7}b", "/v1/é", "/v1/a b"] {
            let output = compile(Self.service(route: route))
            #expect(output.schema == nil, "\(route)")
            #expect(codes(output).contains("invalid-path-template"), "\(route): \(output.renderedDiagnostics)")
        }
        #expect(compile(Self.service(route: "/v1/things/{id}")).schema != nil)
        #expect(compile(Self.service(route: "/v1/~user/a-b_c.d!$&'()*+,;=:@")).schema != nil)
    }

    /// Names that pass the lowercase rule but would not compile where they land: an error
    /// case that is a Swift keyword, a key that is a keyword or one of the generated call's
    /// own parameters and locals, or a key named like a field of the request it rides with
    /// (from the emitter review).
    @Test func keyAndErrorNamesThatWouldNotCompileAreRefused() {
        func schema(key: String = "apiKey", error: String = "notFound") -> String {
            """
            package hostile
            message Request { 1 id: string }
            message Response { 1 id: string }
            key \(key): header "X-Key" string
            service Things {
              auth none
              rpc get(Request) -> Response {
                POST "/v1/things"
                keys \(key)
                error 404 \(error)
              }
            }
            """
        }
        #expect(compile(schema()).schema != nil, "\(compile(schema()).renderedDiagnostics)")
        for name in ["internal", "default", "in", "self"] {
            #expect(compile(schema(error: name)).schema == nil, "error \(name)")
            #expect(compile(schema(key: name)).schema == nil, "key \(name)")
        }
        for local in ["options", "request", "transport", "headers", "path"] {
            let output = compile(schema(key: local))
            #expect(output.schema == nil, "key \(local)")
            #expect(output.renderedDiagnostics.contains("taken by the generated calls"), "\(output.renderedDiagnostics)")
        }
        let clash = compile(schema(key: "id"))
        #expect(clash.schema == nil)
        #expect(clash.renderedDiagnostics.contains("has the name of a field or oneof of the request"), "\(clash.renderedDiagnostics)")
    }

    /// A header that is an HTTP token but no gRPC metadata key compiles with a warning: calls
    /// that carry it work over the WebSocket and fail over gRPC.
    @Test func headerNamesGRPCCannotSpellAreWarnedAbout() {
        func schema(key: String, bound: String) -> String {
            """
            package hostile
            message Request { 1 id: string }
            message Response { 1 id: string }
            key apiKey: header "\(key)" string
            service Things {
              auth none
              rpc get(Request) -> Response {
                POST "/v1/things"
                keys apiKey
                header "\(bound)" id
              }
            }
            """
        }
        let fine = compile(schema(key: "X-Api_Key.1", bound: "Idempotency-Key"))
        #expect(fine.schema != nil)
        #expect(!fine.diagnostics.contains { $0.code == .headerNotGRPCMetadata }, "\(fine.renderedDiagnostics)")
        let warned = compile(schema(key: "X-Key!", bound: "X~Id"))
        #expect(warned.schema != nil, "a warning, not an error: \(warned.renderedDiagnostics)")
        let warnings = warned.diagnostics.filter { $0.code == .headerNotGRPCMetadata && $0.severity == .warning }
        #expect(warnings.count == 2, "\(warned.renderedDiagnostics)")
    }

    @Test func rpcNamesMustBeDottedIdentifiers() {
        for name in [#"a.S/M\"+evil()+\""#, "a.S/M/N", "a..S/M", "/M", "a.S/", "a.S/M x"] {
            let output = compile(Self.service(route: "/v1/x", rpcName: name))
            #expect(output.schema == nil, "\(name)")
            #expect(codes(output).contains("invalid-service-setting"), "\(name): \(output.renderedDiagnostics)")
        }
        #expect(compile(Self.service(route: "/v1/x", rpcName: "acme.v2.Things/Get_2")).schema != nil)
    }

    @Test func eventPathsAreCheckedToo() {
        let text = """
        package hostile
        message Payload { 1 id: string }
        service Things {
          auth account
          event pushed(Payload) { PUT "/api/\\\\(x)" }
        }
        """
        let output = compile(text)
        #expect(output.schema == nil)
        #expect(codes(output).contains("invalid-event"), "\(output.renderedDiagnostics)")
    }

    @Test func anImportPathCannotReplaceTheWellKnownTypes() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("hostile-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let fake = root.appendingPathComponent("wkt"), main = root.appendingPathComponent("main")
        try FileManager.default.createDirectory(at: fake, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: main, withIntermediateDirectories: true)
        try "package google.protobuf\nmessage Foo {}\n".write(to: fake.appendingPathComponent("x.sb"), atomically: true, encoding: .utf8)
        try "package app\nmessage M { 1 t: timestamp }\n".write(to: main.appendingPathComponent("m.sb"), atomically: true, encoding: .utf8)
        // Before, this stopped the process (a precondition on the missing Timestamp).
        let output = SchemaCompiler.compile(directory: main, importPaths: [SchemaCompiler.ImportPath(directory: fake)])
        #expect(output.schema == nil)
        #expect(output.renderedDiagnostics.contains("built in"), "\(output.renderedDiagnostics)")
    }

    @Test func onlyRegularSchemaFilesOfBoundedSizeAreRead() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("hostile-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        try "package app\nmessage M { 1 a: string }\n".write(to: root.appendingPathComponent("good.sb"), atomically: true, encoding: .utf8)
        // A link to a file outside (whose lines diagnostics would print), a FIFO (which would
        // block the reader), and a file past the size limit.
        let secret = root.appendingPathComponent("secret.txt")
        try "not a schema\n".write(to: secret, atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: root.appendingPathComponent("link.sb").path, withDestinationPath: secret.path)
        #expect(mkfifo(root.appendingPathComponent("pipe.sb").path, 0o600) == 0)
        let big = root.appendingPathComponent("big.sb")
        #expect(FileManager.default.createFile(atPath: big.path, contents: nil))
        #expect(truncate(big.path, off_t(SchemaCompiler.maximumFileSize + 1)) == 0)
        let output = SchemaCompiler.compile(directory: root)
        #expect(output.schema == nil)
        let rendered = output.renderedDiagnostics
        #expect(rendered.contains("link.sb: it is a symbolic link"), "\(rendered)")
        #expect(rendered.contains("pipe.sb: it is not a regular file"), "\(rendered)")
        #expect(rendered.contains("big.sb: it is \(SchemaCompiler.maximumFileSize + 1) bytes"), "\(rendered)")
        #expect(!rendered.contains("not a schema"))
    }

    @Test func diagnosticsStopAtTheirLimitAndLongLinesAreShownAroundTheCaret() {
        // One line of 5,000 errors: before, each printed the whole 10,000-character line.
        let text = "package hostile " + String(repeating: "# ", count: 5000)
        let output = compile(text)
        #expect(output.schema == nil)
        #expect(output.diagnostics.count == DiagnosticCollector.maximumCount)
        #expect(output.diagnostics.contains { $0.code == .tooManyDiagnostics })
        let rendered = output.renderedDiagnostics
        #expect(rendered.count < DiagnosticCollector.maximumCount * 600, "\(rendered.count) characters")
        #expect(rendered.contains("…"))
    }

    /// A byte order mark is skipped, and a file with old Mac line endings (CR alone) reads as
    /// lines: its first `//` comment no longer swallows the rest of the file, and a diagnostic
    /// names the right line (from the front-end review: such a file generated nothing, exit 0).
    @Test func aByteOrderMarkAndLoneCarriageReturnsAreText() throws {
        let bom = compile("\u{FEFF}package hostile\nmessage A { 1 x: string }\n")
        #expect(bom.schema?.messages.map(\.name) == ["A"], "\(bom.renderedDiagnostics)")
        let oldMac = compile("// a comment\rpackage hostile\r// another\rmessage A { 1 x: string }\rmessage B { 1 y: Nope }\r")
        #expect(oldMac.schema == nil)
        let rendered = oldMac.renderedDiagnostics
        #expect(rendered.hasPrefix("hostile.sb:5:18: error: unknown type 'Nope'"), "\(rendered)")
        let clean = compile("// a comment\rpackage hostile\r// another\rmessage A { 1 x: string }\r")
        #expect(clean.schema?.messages.map(\.name) == ["A"])
    }

    /// A diagnostic on the first line of a file that starts with a byte order mark counts
    /// columns from after the mark, as an editor shows the line.
    @Test func aByteOrderMarkIsNotAColumn() {
        let output = compile("\u{FEFF}pakage hostile\nmessage A { 1 x: string }\n")
        #expect(output.renderedDiagnostics.hasPrefix("hostile.sb:1:1: error:"), "\(output.renderedDiagnostics)")
    }

    /// A backslash before a line end ends the string there, whichever line end the file uses
    /// (a CR was read as an escape: a misleading 'invalid escape', and in a CR-only file the
    /// string went on and swallowed the next line); a non-ASCII character after a backslash
    /// is named whole.
    @Test func aBackslashBeforeALineEndEndsTheString() {
        for ending in ["\n", "\r\n", "\r"] {
            let text = ["package hostile", "message M {", "  @jsonName(\"a\\", "  1 x: string", "}", ""].joined(separator: ending)
            let output = compile(text)
            let errors = output.diagnostics.filter { $0.severity == .error }
            #expect(errors.first?.code == .unterminatedString, "\(output.renderedDiagnostics)")
            #expect(output.renderedDiagnostics.hasPrefix("hostile.sb:3:13: error: unterminated string literal"), "\(output.renderedDiagnostics)")
            #expect(!errors.contains { $0.code == .invalidEscape }, "\(output.renderedDiagnostics)")
        }
        let accented = compile("package hostile\nmessage M {\n  @jsonName(\"a\\é\") 1 x: string\n}\n")
        #expect(accented.diagnostics.contains { $0.code == .invalidEscape && $0.message == "invalid escape sequence '\\é' in string literal" },
                "\(accented.renderedDiagnostics)")
        let tab = compile("package hostile\nmessage M {\n  @jsonName(\"a\\\t\") 1 x: string\n}\n")
        #expect(tab.diagnostics.contains { $0.code == .invalidEscape && $0.message == "invalid escape sequence '\\' followed by U+9 in string literal" },
                "\(tab.renderedDiagnostics)")
    }

    /// Attributes before a nested declaration are read once: a bad one is reported once.
    @Test func aBadAttributeInAMessageIsReportedOnce() {
        for text in ["package hostile\nmessage M { @ }\n", "package hostile\nmessage M { @a(x }\n", "package hostile\nmessage M { @ message N {} }\n"] {
            let output = compile(text)
            let messages = output.diagnostics.filter { $0.severity == .error }.map(\.message)
            #expect(Set(messages).count == messages.count, "\(output.renderedDiagnostics)")
            #expect(!messages.isEmpty)
        }
    }

    /// A message quoting schema text keeps to one line: a decoded newline is shown escaped.
    @Test func aDiagnosticQuotingANewlineStaysOnOneLine() {
        let output = compile("package hostile\nmessage M {\n  @jsonName(\"x\\ny z\")\n  1 a: int32\n}\n")
        let lines = output.renderedDiagnostics.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.first?.contains("JSON name 'x\\ny z' holds a space or a tab") == true, "\(lines)")
        #expect(lines.count == 4, "head, source line, caret: \(lines)")
    }

    /// Past the cap, warnings are still warnings: a large schema with many of them compiles
    /// (the cap's own entry is a note; before, it counted as an error and nothing was generated).
    @Test func manyWarningsAreNoError() {
        var text = "package hostile\n"
        for index in 0..<1200 { text += "message M\(index) { 1 description: string }\n" }
        let output = compile(text)
        #expect(output.schema != nil, "1,200 warnings refused the schema")
        #expect(output.diagnostics.count == DiagnosticCollector.maximumCount)
        #expect(output.diagnostics.allSatisfy { $0.severity != .error })
        #expect(output.diagnostics.contains { $0.code == .tooManyDiagnostics && $0.severity == .note })
    }

    @Test func manyUnknownNamesAndReservedEntriesStayBounded() {
        // 3,000 unknown types among 3,000 declared: hints for the first ones only.
        var text = "package hostile\n"
        for index in 0..<3000 { text += "message M\(index) { 1 a: X\(index) }\n" }
        let output = compile(text)
        #expect(output.schema == nil)
        #expect(output.diagnostics.filter { $0.message.contains("did you mean") }.count <= 100)
        // A reserved list past the limit is refused, not checked pair by pair.
        let reserved = "package hostile\nmessage R { 1 a: string reserved " + (2...1500).map(String.init).joined(separator: ", ") + " }\n"
        let refused = compile(reserved)
        #expect(refused.schema == nil)
        #expect(refused.renderedDiagnostics.contains("more than 1000 reserved entries"), "\(refused.renderedDiagnostics.prefix(500))")
    }

    /// A package (or type) name of thousands of dotted parts is refused with one diagnostic:
    /// every declaration carries its package's full name (found by review).
    @Test func dottedNamesHaveABoundedNumberOfParts() {
        let longest = (0..<Parser.maximumNameComponents).map { _ in "a" }.joined(separator: ".")
        #expect(compile("package \(longest)\nmessage A { 1 x: string }\n").schema != nil)
        let endless = (0..<50_000).map { _ in "a" }.joined(separator: ".")
        let output = compile("package \(endless)\n" + String(repeating: "message A { 1 x: string }\n", count: 100))
        #expect(output.schema == nil)
        #expect(codes(output).filter { $0 == "identifier-too-long" }.count == 1, "\(codes(output).prefix(3))")
        #expect(output.renderedDiagnostics.contains("50000 dotted parts"))
        let typeName = compile("package hostile\nmessage A { 1 x: \(endless).B }\n")
        #expect(codes(typeName).contains("identifier-too-long"))
    }

    /// Duplicate declarations on one line of megabytes: each "already declared at" names a
    /// line and column, counted from checkpoints rather than from the line's start (found by
    /// review: 600,000 duplicates after 8 MB of blanks scanned 8 MB each).
    @Test func positionsOnAHugeLineAreCountedFromCheckpoints() {
        let padding = String(repeating: " ", count: 2_000_000)
        let text = "package hostile" + padding + String(repeating: "message A{} ", count: 3_000)
        let output = compile(text)
        #expect(output.schema == nil)
        #expect(codes(output).contains("duplicate-type-name"))
        #expect(output.diagnostics.contains { $0.message.contains("already declared at hostile.sb:1:\(15 + padding.count + 8 + 1)") },
                "\(output.diagnostics.first?.message ?? "")")
    }

    /// Each limit is an option: lowered, it refuses what the defaults take, with the same
    /// diagnostic; the defaults are unchanged.
    @Test func schemaLimitsAreOptions() throws {
        let text = """
            package a.b.c
            message Outer { message Inner { 1 x: [string] } 1 y: string reserved 5, 6, 7 }
            message LongName\(String(repeating: "x", count: 30)) { 1 z: int32 }
            """
        func errors(_ limits: SchemaLimits) -> [String] {
            codes(SchemaCompiler.compile(files: [SourceFile(path: "l.sb", text: text)], limits: limits))
        }
        #expect(errors(SchemaLimits()).isEmpty)
        #expect(errors(SchemaLimits(maximumNameComponents: 2)).contains("identifier-too-long"))
        #expect(errors(SchemaLimits(maximumIdentifierLength: 20)).contains("identifier-too-long"))
        #expect(errors(SchemaLimits(maximumNesting: 1)).contains("nesting-too-deep"))
        #expect(errors(SchemaLimits(maximumReservedEntries: 2)).contains("invalid-reserved-range"))
        #expect(SchemaLimits(maximumNesting: 100_000).maximumNesting == 256, "capped: the parser recurses per level")
        // The file size, read from a directory.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("limits-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data(text.utf8).write(to: directory.appendingPathComponent("l.sb"))
        #expect(SchemaCompiler.compile(directory: directory).schema != nil)
        let small = SchemaCompiler.compile(directory: directory, limits: SchemaLimits(maximumFileSize: 64))
        #expect(small.schema == nil)
        #expect(small.renderedDiagnostics.contains("more than the 64 a schema file may have"), "\(small.renderedDiagnostics)")
    }

    /// Line and column against a plain count, over text with multi-byte characters, long
    /// and short lines and every line ending, at offsets around the checkpoints.
    @Test func lineAndColumnAgreeWithAPlainCount() {
        var generator = SystemRandomNumberGenerator()
        let pieces = ["a", "é", "日本", "🙂", " ", "\n", "\r\n", "\r", String(repeating: "x", count: 5_000), String(repeating: "ü", count: 3_000)]
        // Fixed texts whose length is a multiple of the checkpoint stride (an end checkpoint),
        // then random ones.
        var texts = ["", String(repeating: "a", count: 4096), String(repeating: "é", count: 2048) + "\n" + String(repeating: "b", count: 4095)]
        for _ in 0..<4 {
            var text = ""
            for _ in 0..<60 { text += pieces.randomElement(using: &generator)! }
            texts.append(text)
        }
        for text in texts {
            let file = SourceFile(path: "t.sb", text: text)
            let bytes = Array(text.utf8)
            var offsets = Array(stride(from: 0, through: bytes.count, by: 997))
            for checkpoint in stride(from: 0, through: bytes.count, by: 4096) {
                offsets += [checkpoint - 1, checkpoint, checkpoint + 1].filter { (0...bytes.count).contains($0) }
            }
            for offset in offsets + [bytes.count] {
                // The plain count: lines and scalars from the start of the text.
                var line = 1, column = 1, index = 0
                while index < offset {
                    let byte = bytes[index]
                    if byte == 0x0A || (byte == 0x0D && (index + 1 == bytes.count || bytes[index + 1] != 0x0A)) {
                        line += 1
                        column = 1
                    } else if byte & 0xC0 != 0x80 {
                        column += 1
                    }
                    index += 1
                }
                let found = file.lineAndColumn(of: offset)
                #expect(found.line == line && found.column == column, "offset \(offset) of \(bytes.count)")
            }
        }
    }

    @Test func renamedTypesAndGeneratedMembersDoNotCollide() {
        // `Data` becomes `DataMessage`, which the schema also declares.
        let clash = compile("package hostile\nmessage Data { 1 a: string }\nmessage DataMessage { 1 b: string }\n")
        #expect(clash.schema == nil)
        #expect(codes(clash).contains("duplicate-type-name"), "\(clash.renderedDiagnostics)")
        // So may a oneof's enum: `Type` is generated as `TypeMessage`, as is `oneof typeMessage`.
        let oneof = compile("package hostile\nmessage M {\n  oneof typeMessage { 1 a: string 2 b: int32 }\n  message Type { 1 c: string }\n}\n")
        #expect(oneof.schema == nil)
        #expect(oneof.renderedDiagnostics.contains("is generated as the Swift type 'M.TypeMessage'"), "\(oneof.renderedDiagnostics)")
        // A field named like a generated member is renamed.
        let member = compile("package hostile\nmessage M { @sensitive 1 s: string 2 customMirror: int32 3 recipientID: string }\n")
        let fields = member.schema?.messages.first?.fields.map(\.swiftName) ?? []
        #expect(fields.count == 3)
        #expect(!fields.contains("customMirror") && !fields.contains("recipientID"), "\(fields)")
    }

    /// Thousands of top-level types one name up to case (`aaaa…`, `aAaa…`, …): each is renamed
    /// going on from the last renaming of that name, not by walking every earlier one's
    /// underscores again (found by review: cubic work, the compile did not end).
    @Test func typesOneNameUpToCaseCostLinearWork() throws {
        let stem = 12
        var names: [String] = []
        for bits in 0..<(1 << stem) {
            names.append("a" + String((0..<stem).map { bits & (1 << $0) != 0 ? "A" : "a" }))
        }
        let text = "package hostile\n" + names.map { "message \($0) { 1 x: int32 }\n" }.joined()
        let start = ContinuousClock.now
        let result = compile(text)
        #expect(ContinuousClock.now - start < .seconds(20), "\(names.count) types one name up to case")
        let schema = try #require(result.schema, "\(result.renderedDiagnostics.prefix(500))")
        let swiftNames = schema.messages.map(\.swiftName)
        #expect(swiftNames.count == names.count)
        // Distinct even up to case: their files sit side by side on case-insensitive disks.
        #expect(Set(swiftNames.map { $0.lowercased() }).count == names.count)
    }

    /// Thousands of fields of one name, and thousands of enum cases that all become one Swift
    /// case: a repeated name is reported and gets no Swift name, and each renaming goes on
    /// from the last one of its name (found by review: each walked the underscores of every
    /// earlier one, cubic work, minutes).
    @Test func collidingSwiftNamesCostLinearWork() throws {
        let fields = "package hostile\nmessage M {\n" + (1...6000).map { "  \($0) a: bool\n" }.joined() + "}\n"
        var start = ContinuousClock.now
        let duplicates = compile(fields)
        #expect(ContinuousClock.now - start < .seconds(10), "6,000 fields named 'a'")
        #expect(duplicates.schema == nil)
        #expect(Set(codes(duplicates)) == ["duplicate-field-name"])
        // 8,001 case names of at most 128 characters, `A_B` to `A_…_B_…_`: all `aB` in Swift.
        var names: [String] = []
        for gap in 1...126 {
            for tail in 0...(126 - gap) {
                names.append("A" + String(repeating: "_", count: gap) + "B" + String(repeating: "_", count: tail))
            }
        }
        let text = "package hostile\n@allowAlias\nenum E {\n" + names.map { "  \($0) = 0\n" }.joined() + "}\n"
        start = ContinuousClock.now
        let aliases = compile(text)
        #expect(ContinuousClock.now - start < .seconds(10), "\(names.count) cases named 'aB' in Swift")
        let schema = try #require(aliases.schema, "\(aliases.renderedDiagnostics.prefix(500))")
        let cases = try #require(schema.enums.first { $0.name == "E" }).cases.map(\.swiftName)
        // The names the walk from the start gave: `aB`, `aB_`, `aB__`, … in declaration order.
        #expect(cases.count == names.count)
        let wrong = cases.indices.first { cases[$0] != "aB" + String(repeating: "_", count: $0) }
        #expect(wrong == nil, "case \(wrong ?? 0) has another name")
    }

    /// Routes of thousands of placeholders, in many rpcs: each binds through a table of the
    /// request's fields (found by review: each scanned every field and every earlier
    /// placeholder), and unknown ones get "did you mean" hints for the first ones only.
    @Test func longRoutesBindInLinearTime() {
        let count = 8000
        var text = "package hostile\nmessage Request {\n" + (0..<count).map { "  \($0 + 1) f\($0): string\n" }.joined() + "}\n"
        text += "message Response { 1 id: string }\nservice Things {\n  auth none\n"
        let path = (0..<count).map { "{f\($0)}" }.joined(separator: "/")
        for rpc in 0..<24 { text += "  rpc get\(rpc)(Request) -> Response { GET \"/r\(rpc)/\(path)\" }\n" }
        text += "}\n"
        let start = ContinuousClock.now
        let output = compile(text)
        #expect(ContinuousClock.now - start < .seconds(10), "24 routes of \(count) placeholders")
        #expect(output.schema != nil, "\(output.renderedDiagnostics.prefix(500))")
        #expect(output.schema?.services.first?.endpoints.allSatisfy { $0.pathParameters.map(\.field) == Array(0..<count) } == true)

        let typos = "package hostile\nmessage Request {\n" + (0..<300).map { "  \($0 + 1) f\($0): string\n" }.joined() + "}\n"
            + "service Things {\n  auth none\n  rpc get(Request) { GET \"/v1/" + (0..<300).map { "{g\($0)}" }.joined(separator: "/") + "\" }\n}\n"
        let hinted = compile(typos)
        #expect(hinted.schema == nil)
        #expect(hinted.diagnostics.filter { $0.code == .unknownPathParameter }.count == 300)
        #expect(hinted.diagnostics.filter { $0.message.contains("did you mean") }.count <= 100)
    }

    /// A string literal is at most 64 KiB by default (an option, ``SchemaLimits``): a route of
    /// megabytes is refused with one error, and its text is not kept whole.
    @Test func stringLiteralsHaveABoundedLength() {
        let longest = "/" + String(repeating: "a", count: Lexer.maximumStringLength - 1)
        #expect(compile(Self.service(route: longest)).schema != nil)
        let output = compile(Self.service(route: longest + "a"))
        #expect(codes(output) == ["string-too-long"], "\(output.renderedDiagnostics.prefix(500))")
        #expect(output.diagnostics.first?.message == "this string is \(Lexer.maximumStringLength + 1) bytes long; strings have at most \(Lexer.maximumStringLength)")
        let huge = compile(Self.service(route: "/" + String(repeating: "a", count: 4 << 20)))
        #expect(codes(huge) == ["string-too-long"])
        // Escapes count as the text they stand for: 64 KiB of `\\` is 32 KiB of text.
        let escaped = compile(Self.service(route: "/v1/" + String(repeating: "\\\\", count: Lexer.maximumStringLength / 2)))
        #expect(!escaped.diagnostics.contains { $0.code == .stringTooLong }, "\(escaped.renderedDiagnostics.prefix(500))")
        let lowered = SchemaCompiler.compile(files: [SourceFile(path: "l.sb", text: Self.service(route: "/v1/things"))], limits: SchemaLimits(maximumStringLength: 8))
        #expect(codes(lowered) == ["string-too-long"], "\(lowered.renderedDiagnostics)")
        #expect(SchemaLimits().maximumStringLength == 64 << 10)
    }

    /// An error set of thousands of cases listed thousands of times by one rpc: the set's own
    /// repeats are reported once, where it is declared, and each listing after the first once
    /// (found by review: every listing added every case again, each against every case so far).
    @Test func anErrorSetIsExpandedOncePerRPC() {
        let count = 6000
        let text = "package hostile\nerrors E {\n" + String(repeating: "  404 notFound\n", count: count) + "}\n"
            + "service Things {\n  auth none\n  rpc get() {\n    GET \"/v1/get\"\n    errors "
            + Array(repeating: "E", count: count).joined(separator: ", ") + "\n  }\n}\n"
        let start = ContinuousClock.now
        let output = compile(text)
        #expect(ContinuousClock.now - start < .seconds(10), "\(count) cases listed \(count) times")
        #expect(output.schema == nil)
        #expect(Set(codes(output)) == ["duplicate-error-status"])

        // Where each is reported, for a small set that two rpcs list, one of them twice.
        let small = compile("""
            package hostile
            errors E { 404 notFound 404 missing 410 notFound }
            service Things {
              auth none
              rpc a() {
                GET "/v1/a"
                errors E, E
              }
              rpc b() {
                GET "/v1/b"
                errors E
              }
            }
            """)
        let messages = small.diagnostics.map(\.message)
        #expect(messages.count == 3, "\(small.renderedDiagnostics)")
        #expect(messages.contains("status 404 is already declared in error set 'E' as 'notFound' at hostile.sb:2:12"), "\(messages)")
        #expect(messages.contains("error case 'notFound' is already declared in error set 'E' (status 404)"), "\(messages)")
        #expect(small.renderedDiagnostics.contains("hostile.sb:7:15: error: error set 'E' is already listed for rpc 'a' [duplicate-error-status]"), "\(small.renderedDiagnostics)")
    }

    /// An rpc's keys are parameters of its generated call: one listed twice, or two keys that
    /// are one parameter (`my_key` and `myKey`), would be declared twice (found by review).
    @Test func anRPCListsEachKeyParameterOnce() {
        func schema(_ keys: String) -> String {
            """
            package hostile
            key token: header "X-Token" string
            key my_key: header "X-My-Key" string
            key myKey: header "X-Other-Key" string
            service Things {
              auth none
              rpc get() {
                GET "/v1/things"
                keys \(keys)
              }
            }
            """
        }
        let valid = compile(schema("token, myKey"))
        #expect(valid.schema?.services.first?.endpoints.first?.keys.count == 2, "\(valid.renderedDiagnostics)")
        let twice = compile(schema("token, token"))
        #expect(codes(twice) == ["invalid-key"])
        #expect(twice.renderedDiagnostics.contains("hostile.sb:9:17: error: key 'token' is already listed for rpc 'get' [invalid-key]"), "\(twice.renderedDiagnostics)")
        let alike = compile(schema("my_key, myKey"))
        #expect(codes(alike) == ["invalid-key"])
        #expect(alike.diagnostics.first?.message == "keys 'my_key' and 'myKey' are both the parameter 'myKey' of rpc 'get'; list one of them", "\(alike.renderedDiagnostics)")
    }
}
