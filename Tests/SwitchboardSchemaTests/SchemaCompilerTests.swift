import Foundation
import SwitchboardSchema
import Testing

@Suite struct SchemaCompilerTests {
    static let sketch = """
        package signal.chat

        /// One attachment of a chat message.
        message Attachment {
          1 id: string
          2 contentType: string
          3 size: uint64
          4 digest: bytes
        }
        enum MessageStatus { sending = 0  sent = 1  failed = 2  read = 3 }
        message ChatMessage {
          1 id: string
          2 senderId: uint64
          3 text: string
          4 status: MessageStatus
          5 createdAt: timestamp
          6 attachments: [Attachment]
          7 extras: {string: string}
          8 replyTo: string?
          reserved 9, 10
        }
        """

    func compile(_ text: String, path: String = "test.sb") -> SchemaCompiler.Output {
        SchemaCompiler.compile(files: [SourceFile(path: path, text: text)])
    }

    @Test func theIssueSketchCompilesToTheExpectedModel() throws {
        let output = compile(Self.sketch)
        #expect(output.diagnostics.isEmpty, "\(output.renderedDiagnostics)")
        let schema = try #require(output.schema)
        #expect(schema.packageName == "signal.chat")
        #expect(schema.messages.filter { $0.importedFrom == nil }.map(\.name) == ["Attachment", "ChatMessage"])
        let attachment = schema.messages[0]
        #expect(attachment.documentation == ["One attachment of a chat message."])
        #expect(attachment.fullName == "signal.chat.Attachment")
        let message = schema.messages[1]
        #expect(message.fields.map(\.number) == [1, 2, 3, 4, 5, 6, 7, 8])
        #expect(message.fields[3].shape == .singular(.enumeration(0)))
        // `timestamp` is google.protobuf.Timestamp, linked in from the built-in package.
        guard case let .singular(.message(timestamp)) = message.fields[4].shape else {
            Issue.record("timestamp is not a message: \(message.fields[4].shape)")
            return
        }
        #expect(schema.messages[timestamp].fullName == "google.protobuf.Timestamp")
        #expect(schema.messages[timestamp].swiftPath == "ProtoTimestamp")
        #expect(schema.importedPackages == [ImportedPackage(name: "google.protobuf", swiftModule: "SwitchboardRuntime")])
        #expect(schema.messages[timestamp].importedFrom == 0)
        #expect(message.fields[5].shape == .list(.message(0)))
        #expect(message.fields[6].shape == .map(key: .string, value: .scalar(.string)))
        #expect(message.fields[7].shape == .optional(.scalar(.string)))
        #expect(message.reservedNumbers == [9...9, 10...10])
        let status = schema.enums[0]
        #expect(status.cases.map(\.name) == ["sending", "sent", "failed", "read"])
        #expect(status.cases.map(\.value) == [0, 1, 2, 3])
    }

    @Test func keywordsAreContextual() throws {
        let output = compile("""
            package demo
            message message { }
            """)
        // A lowercase type name is protobuf's (protoc takes it); its Swift type starts uppercase.
        #expect(output.diagnostics.isEmpty, "\(output.renderedDiagnostics)")
        #expect(output.schema?.messages.first?.swiftName == "Message")
        let fields = compile("""
            package demo
            message Words {
              1 message: string  2 enum: int32  3 reserved: bool  4 oneof: bytes  5 package: string
            }
            """)
        #expect(fields.diagnostics.allSatisfy { $0.severity == .warning }, "\(fields.renderedDiagnostics)")
        #expect(fields.schema?.messages[0].fields.map(\.name) == ["message", "enum", "reserved", "oneof", "package"])
    }

    @Test func namesResolveFromTheInnermostScope() throws {
        let output = compile("""
            package demo
            message Kind {}
            message Outer {
              message Kind { 1 x: int32 }
              1 inner: Kind
              2 outer: demo.Kind
              3 explicit: Outer.Kind
            }
            """)
        let schema = try #require(output.schema, "\(output.renderedDiagnostics)")
        let outer = schema.messages.first { $0.name == "Outer" }!
        let innerKind = schema.messages.firstIndex { $0.fullName == "demo.Outer.Kind" }!
        let outerKind = schema.messages.firstIndex { $0.fullName == "demo.Kind" }!
        #expect(outer.fields.map(\.shape) == [.singular(.message(innerKind)), .singular(.message(outerKind)), .singular(.message(innerKind))])
    }

    @Test func jsonAndSwiftNames() throws {
        let schema = try #require(compile("""
            package demo
            message A { 1 before_id: string  2 userID: string }
            enum Mood { MOOD_HAPPY = 0  MOOD_VERY_SAD = 1  calm = 2 }
            """).schema)
        #expect(schema.messages[0].fields.map(\.jsonName) == ["beforeId", "userID"])
        #expect(schema.messages[0].fields.map(\.swiftName) == ["beforeId", "userID"])
        #expect(schema.enums[0].cases.map(\.swiftName) == ["happy", "verySad", "calm"])
    }

    @Test func recursionThroughOptionalFieldsIsBoxed() throws {
        let schema = try #require(compile("""
            package demo
            message Node { 1 parent: Node?  2 children: [Node]  3 value: int32 }
            message A { 1 b: B }
            message B { 1 a: A? }
            """).schema)
        let node = schema.messages[0]
        #expect(node.fields.map(\.isIndirect) == [true, false, false])
        #expect(schema.messages[1].fields[0].isIndirect)
        #expect(schema.messages[2].fields[0].isIndirect)
    }

    /// A chain of messages embedding each other would grow structs without bound; large
    /// embedded messages are boxed so every struct stays small.
    @Test func largeEmbeddedMessagesAreBoxed() throws {
        var text = "package demo\nmessage M0 { 1 a: string  2 b: string  3 c: string  4 d: string }\n"
        for index in 1..<12 {
            text += "message M\(index) { 1 a: string  2 b: string  3 c: string  4 d: string  5 inner: M\(index - 1)? }\n"
        }
        let schema = try #require(compile(text).schema)
        let boxed = schema.messages.filter { $0.fields.contains { $0.isIndirect } }.map(\.name)
        #expect(!boxed.isEmpty)
        // Between two boxed links there are at most a few inline ones.
        #expect(boxed.count >= 2)
        #expect(schema.messages[1].fields.last?.isIndirect == false)
        // Small embedded messages stay inline.
        let small = try #require(compile("package demo\nmessage A { 1 b: B }\nmessage B { 1 x: int32 }\n").schema)
        #expect(small.messages[0].fields[0].isIndirect == false)
    }

    @Test func fileOrderDoesNotChangeTheModel() throws {
        let a = SourceFile(path: "a.sb", text: "package demo\nmessage A { 1 b: B }\n")
        let b = SourceFile(path: "b.sb", text: "package demo\nmessage B { 1 c: C }\n")
        let c = SourceFile(path: "c.sb", text: "package demo\nenum C { Z = 0 }\n")
        let first = SchemaCompiler.compile(files: [a, b, c]).schema
        let second = SchemaCompiler.compile(files: [c, a, b]).schema
        #expect(first != nil && first == second)
    }

    @Test func loadsADirectoryRecursively() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("switchboard-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("nested"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try "package demo\nmessage A { 1 b: B }\n".write(to: directory.appendingPathComponent("a.sb"), atomically: true, encoding: .utf8)
        try "package demo\nmessage B { }\n".write(to: directory.appendingPathComponent("nested/b.sb"), atomically: true, encoding: .utf8)
        try "not a schema".write(to: directory.appendingPathComponent("README.md"), atomically: true, encoding: .utf8)
        let output = SchemaCompiler.compile(directory: directory)
        #expect(output.schema?.files.map(\.path) == ["\(directory.lastPathComponent)/a.sb", "\(directory.lastPathComponent)/nested/b.sb"])
    }

    @Test func diagnosticsRenderWithCaretUnderTabsAndUnicode() {
        let output = compile("package demo\nmessage A {\n\treserved \"ü\", 10 to 5\n}\n")
        let expected = "test.sb:3:16: error: reserved range 10 to 5 is empty; its start must not exceed its end [invalid-reserved-range]\n"
            + "\treserved \"ü\", 10 to 5\n\t" + String(repeating: " ", count: 14) + "^\n"
        #expect(output.renderedDiagnostics == expected)
    }
}

/// `import`: the built-in well-known types, and the errors around importing.
@Suite struct SchemaImportTests {
    func compile(_ text: String) -> SchemaCompiler.Output {
        SchemaCompiler.compile(files: [SourceFile(path: "api/a.sb", text: text)])
    }

    @Test func importedTypesResolveByFullNameAndAreNotDeclaredHere() throws {
        let output = compile("""
            package demo
            import google.protobuf
            message Job { 1 timeout: google.protobuf.Duration  2 tags: google.protobuf.Struct? }
            """)
        let schema = try #require(output.schema, "\(output.renderedDiagnostics)")
        #expect(schema.topLevelMessages.map(\.name) == ["Job"])
        guard case let .singular(.message(duration)) = schema.messages[0].fields[0].shape else {
            Issue.record("not a message: \(schema.messages[0].fields[0].shape)")
            return
        }
        #expect(schema.messages[duration].fullName == "google.protobuf.Duration")
        #expect(schema.messages[duration].swiftPath == "ProtoDuration")
        // Struct's Value, ListValue and NullValue come along, resolved inside their package.
        #expect(schema.enums.contains { $0.fullName == "google.protobuf.NullValue" && $0.importedFrom == 0 })
    }

    @Test func aWellKnownTypeWithoutItsImportSaysWhatToAdd() {
        let output = compile("package demo\nmessage Job { 1 timeout: google.protobuf.Duration }")
        #expect(output.schema == nil)
        #expect(output.diagnostics.map(\.message) == ["'google.protobuf.Duration' is in package 'google.protobuf'; add 'import google.protobuf' to this file"])
    }

    @Test func unknownAndSelfImportsAreErrors() {
        let unknown = compile("package demo\nimport google.protobf\nmessage Job { 1 id: string }")
        #expect(unknown.diagnostics.map(\.code) == [.invalidImport])
        #expect(unknown.diagnostics.first?.message.contains("did you mean 'google.protobuf'?") == true)
        let own = compile("package demo\nimport demo\nmessage Job { 1 id: string }")
        #expect(own.diagnostics.map(\.code) == [.invalidImport])
        let unknownType = compile("package demo\nimport google.protobuf\nmessage Job { 1 t: google.protobuf.Durationn }")
        #expect(unknownType.diagnostics.map(\.code) == [.unknownType])
    }
}

/// Import paths: schema directories compiled once each, in import order.
@Suite struct SchemaImportPathTests {
    /// Writes `schemas` (directory name → schema text) under a fresh temporary directory.
    func directories(_ schemas: [String: String]) throws -> URL {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("switchboard-imports-\(UUID().uuidString)")
        for (name, text) in schemas {
            let directory = root.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try Data(text.utf8).write(to: directory.appendingPathComponent("\(name).sb"))
        }
        return root
    }

    @Test func importPathsResolveInTheOrderTheyImportEachOther() throws {
        let root = try directories([
            "a": "package pa\nimport pb\nmessage A { 1 b: pb.B }",
            "b": "package pb\nimport pc\nmessage B { 1 c: pc.C }",
            "c": "package pc\nmessage C { 1 x: string }",
            "app": "package app\nimport pa\nmessage App { 1 a: pa.A }",
        ])
        defer { try? FileManager.default.removeItem(at: root) }
        // Listed in the "wrong" order: each is still compiled after what it imports.
        let paths = ["a", "b", "c"].map { SchemaCompiler.ImportPath(directory: root.appendingPathComponent($0), swiftModule: $0.uppercased()) }
        let output = SchemaCompiler.compile(directory: root.appendingPathComponent("app"), importPaths: paths)
        let schema = try #require(output.schema, "\(output.renderedDiagnostics)")
        #expect(schema.importedPackages.map(\.name) == ["pc", "pb", "pa"])
        #expect(schema.importedPackages.map(\.swiftModule) == ["C", "B", "A"])
    }

    /// An rpc's error enum would hide an imported type that generated code names unqualified
    /// (its package generated into the same module); one in a module of its own is safe.
    @Test func anRPCErrorTypeMayNotHideAnImportedType() throws {
        let root = try directories([
            "common": "package pc\nmessage GetError { 1 x: string }",
            "app": "package app\nimport pc\nmessage Reply { 1 a: string }\nservice Things {\n  auth none\n  rpc get(pc.GetError) -> Reply { POST \"/v1/get\" }\n}",
        ])
        defer { try? FileManager.default.removeItem(at: root) }
        let sameModule = SchemaCompiler.compile(directory: root.appendingPathComponent("app"),
                                                importPaths: [SchemaCompiler.ImportPath(directory: root.appendingPathComponent("common"))])
        #expect(sameModule.schema == nil)
        #expect(sameModule.diagnostics.contains { $0.code == .generatedNameCollision && $0.message.contains("would hide message 'GetError'") }, "\(sameModule.renderedDiagnostics)")
        let ownModule = SchemaCompiler.compile(directory: root.appendingPathComponent("app"),
                                               importPaths: [SchemaCompiler.ImportPath(directory: root.appendingPathComponent("common"), swiftModule: "Common")])
        #expect(ownModule.schema != nil, "\(ownModule.renderedDiagnostics)")
    }

    /// Protobuf's type names are global: package `pa`'s nested `b.X` and package `pa.b`'s `X`
    /// are both `pa.b.X`, which protoc refuses in one build; so does the compiler (found by review).
    @Test func aFullNameTwoPackagesDeclareIsAnError() throws {
        let root = try directories([
            "inner": "package pa.b\nenum X { ZERO = 0 }\nmessage Y { 1 x: X }",
            "outer": "package pa\nimport pa.b\nmessage b {\n  message X { 1 n: int32 }\n  1 y: pa.b.Y\n}",
        ])
        defer { try? FileManager.default.removeItem(at: root) }
        let output = SchemaCompiler.compile(directory: root.appendingPathComponent("outer"),
                                            importPaths: [SchemaCompiler.ImportPath(directory: root.appendingPathComponent("inner"))])
        #expect(output.schema == nil)
        #expect(output.diagnostics.contains { $0.code == .duplicateTypeName && $0.message.contains("'pa.b.X' is declared by") },
                "\(output.renderedDiagnostics)")
        // Distinct full names across the two packages compile.
        let fine = try directories([
            "inner": "package pa.b\nenum X { ZERO = 0 }\nmessage Y { 1 x: X }",
            "outer": "package pa\nimport pa.b\nmessage Holder {\n  message X { 1 n: int32 }\n  1 y: pa.b.Y\n}",
        ])
        defer { try? FileManager.default.removeItem(at: fine) }
        let ok = SchemaCompiler.compile(directory: fine.appendingPathComponent("outer"),
                                        importPaths: [SchemaCompiler.ImportPath(directory: fine.appendingPathComponent("inner"))])
        #expect(ok.schema != nil, "\(ok.renderedDiagnostics)")
    }

    @Test func cyclesDuplicatesAndBrokenImportsAreErrors() throws {
        let root = try directories([
            "a": "package pa\nimport pb\nmessage A { 1 x: string }",
            "b": "package pb\nimport pa\nmessage B { 1 x: string }",
            "twin": "package pa\nmessage Twin { 1 x: string }",
            "broken": "package broken\nmessage Broken { 1 x: Nowhere }",
            "app": "package app\nmessage App { 1 x: string }",
            "user": "package user\nimport pa\nmessage User { 1 a: pa.A }",
        ])
        defer { try? FileManager.default.removeItem(at: root) }
        func compile(_ names: [String]) -> SchemaCompiler.Output {
            SchemaCompiler.compile(directory: root.appendingPathComponent("app"),
                                   importPaths: names.map { SchemaCompiler.ImportPath(directory: root.appendingPathComponent($0)) })
        }
        let cycle = compile(["a", "b"])
        #expect(cycle.schema == nil)
        #expect(cycle.diagnostics.contains { $0.code == .invalidImport && $0.message.contains("packages import each other: pa -> pb -> pa") })
        // Reported once (not again from pb), and a schema importing the failed package is not
        // told to pass an --import-path it passed.
        let user = SchemaCompiler.compile(directory: root.appendingPathComponent("user"),
                                          importPaths: ["a", "b"].map { SchemaCompiler.ImportPath(directory: root.appendingPathComponent($0)) })
        #expect(user.diagnostics.filter { $0.message.contains("import each other") }.count == 1, "\(user.renderedDiagnostics)")
        #expect(!user.diagnostics.contains { $0.message.contains("--import-path") }, "\(user.renderedDiagnostics)")
        let twins = compile(["a", "twin"])
        #expect(twins.diagnostics.contains { $0.code == .invalidImport && $0.message.contains("both declare package 'pa'") })
        let broken = compile(["broken"])
        #expect(broken.schema == nil)
        #expect(broken.diagnostics.contains { $0.code == .invalidImport && $0.message.contains("has errors") })
    }

    /// The module an import path names is written into `import` lines and type names: one that
    /// is not a Swift identifier, or is a keyword, is an error of the compile (found by review:
    /// it was generated as given, code that could not compile).
    @Test func anImportPathsModuleMustBeASwiftIdentifier() throws {
        let root = try directories([
            "common": "package pc\nmessage Shared { 1 x: string }",
            "app": "package app\nimport pc\nmessage App { 1 s: pc.Shared }",
        ])
        defer { try? FileManager.default.removeItem(at: root) }
        func compile(module: String) -> SchemaCompiler.Output {
            SchemaCompiler.compile(directory: root.appendingPathComponent("app"),
                                   importPaths: [SchemaCompiler.ImportPath(directory: root.appendingPathComponent("common"), swiftModule: module)])
        }
        let valid = compile(module: "Common_2")
        #expect(valid.schema != nil, "\(valid.renderedDiagnostics)")
        for module in ["Bad-Name", "class", "self", "_", "2Common", "Modül", "", "A B", "Common;"] {
            let output = compile(module: module)
            #expect(output.schema == nil, "\(module)")
            #expect(output.diagnostics.contains { $0.code == .invalidImport && $0.message.contains("names the Swift module '\(module)'") },
                    "\(output.renderedDiagnostics)")
            // The path was given: the schema importing its package is not told to pass it.
            #expect(!output.diagnostics.contains { $0.message.contains("--import-path") }, "\(output.renderedDiagnostics)")
        }
        #expect(SwiftNames.isModuleName("RoomsAPI") && SwiftNames.isModuleName("_Private"))
        #expect(!SwiftNames.isModuleName("import") && !SwiftNames.isModuleName("Any"))
    }

    /// A file of an import path that cannot be read fails that path, as it fails the main
    /// directory (found by review: the package was linked without the file's types).
    @Test func anUnreadableFileFailsItsImportPath() throws {
        let root = try directories([
            "common": "package pc\nmessage Shared { 1 x: string }",
            "app": "package app\nimport pc\nmessage App { 1 s: pc.Shared }",
        ])
        defer { try? FileManager.default.removeItem(at: root) }
        let elsewhere = root.appendingPathComponent("extra.txt")
        try Data("package pc\nmessage Extra { 1 y: string }\n".utf8).write(to: elsewhere)
        try FileManager.default.createSymbolicLink(atPath: root.appendingPathComponent("common/extra.sb").path, withDestinationPath: elsewhere.path)
        let output = SchemaCompiler.compile(directory: root.appendingPathComponent("app"),
                                            importPaths: [SchemaCompiler.ImportPath(directory: root.appendingPathComponent("common"), swiftModule: "Common")])
        #expect(output.schema == nil)
        #expect(output.diagnostics.contains { $0.code == .unreadableFile && $0.message.hasPrefix("cannot read common/extra.sb: it is a symbolic link") },
                "\(output.renderedDiagnostics)")
        #expect(!output.diagnostics.contains { $0.message.contains("--import-path") }, "\(output.renderedDiagnostics)")
    }
}
