import Foundation
import SwitchboardSchema
import Testing

/// Names protoc 3.21 takes that the validator once refused (a real `.proto` world brings them):
/// lowercase and underscored message and enum names, oneofs that start uppercase, enum cases
/// that start with `_`, a field named `_`, JSON names with quotes, backslashes, controls and
/// non-ASCII. Each keeps its spelling on the wire and in JSON, and gets a valid Swift name.
@Suite struct ProtocNameTests {
    func compile(_ text: String) -> SchemaCompiler.Output {
        SchemaCompiler.compile(files: [SourceFile(path: "names.sb", text: text)])
    }

    func message(_ schema: Schema, _ name: String) throws -> MessageDefinition {
        try #require(schema.messages.first { $0.name == name && $0.importedFrom == nil }, "no message \(name)")
    }

    func enumeration(_ schema: Schema, _ name: String) throws -> EnumDefinition {
        try #require(schema.enums.first { $0.name == name && $0.importedFrom == nil }, "no enum \(name)")
    }

    @Test func protocNamesCompileWithoutDiagnostics() throws {
        let output = compile(#"""
            package demo

            message chat_message {
              1 Text: string
              2 __2: string
              3 trailing_: int32
              @jsonName("q\"uo\\te") 4 quoted: string
              @jsonName("naïve") 5 naive: string
              @jsonName("line\nbreak") 6 control: int32
              oneof Choice { 7 word: string  8 shade: color }
              oneof KIND_ { 9 k: string }
              message inner_part { 1 x: int32 }
              10 part: inner_part
            }
            enum color { _UNKNOWN = 0  COLOR_RED = 1  GREEN = 2  _1 = 3 }
            message Foo__Bar_ { 1 x: int32 }
            enum Status_ { STATUS_UNSET = 0  STATUS_DONE = 1 }
            """#)
        #expect(output.diagnostics.isEmpty, "\(output.renderedDiagnostics)")
        let schema = try #require(output.schema)

        let chat = try message(schema, "chat_message")
        #expect(chat.swiftName == "Chat_message")
        #expect(chat.swiftPath == "Chat_message")
        #expect(chat.fullName == "demo.chat_message")
        #expect(chat.fields.map(\.name) == ["Text", "__2", "trailing_", "quoted", "naive", "control", "word", "shade", "k", "part"])
        #expect(chat.fields.map(\.swiftName) == ["text", "_2", "trailing", "quoted", "naive", "control", "word", "shade", "k", "part"])
        #expect(chat.fields.map(\.jsonName) == ["Text", "2", "trailing", "q\"uo\\te", "na\u{EF}ve", "line\nbreak", "word", "shade", "k", "part"])
        #expect(chat.oneofs.map(\.name) == ["Choice", "KIND_"])
        #expect(chat.oneofs.map(\.swiftName) == ["choice", "kind"])
        #expect(chat.oneofs.map(\.swiftTypeName) == ["Choice", "KIND_"])

        let inner = try message(schema, "inner_part")
        #expect(inner.swiftName == "Inner_part")
        #expect(inner.swiftPath == "Chat_message.Inner_part")
        #expect(inner.fullName == "demo.chat_message.inner_part")

        let odd = try message(schema, "Foo__Bar_")
        #expect(odd.swiftName == "Foo__Bar_")

        let color = try enumeration(schema, "color")
        #expect(color.swiftName == "Color")
        #expect(color.cases.map(\.name) == ["_UNKNOWN", "COLOR_RED", "GREEN", "_1"])
        #expect(color.cases.map(\.swiftName) == ["unknown", "red", "green", "_1"])

        let status = try enumeration(schema, "Status_")
        #expect(status.swiftName == "Status_")
        #expect(status.cases.map(\.swiftName) == ["unset", "done"])
    }

    /// `foo` beside `Foo` (two names to protobuf, one to Swift and to macOS's file system) is
    /// `FooMessage`; `_` is a Swift keyword, so a field, oneof or case named so is `__`; a field
    /// outside a oneof keeps its value in `_<name>`, so a name of underscores that would meet
    /// it takes one more.
    @Test func collidingProtocNamesAreRenamedWithWarnings() throws {
        let output = compile(#"""
            package demo
            message foo { 1 a: int32 }
            message Foo { 1 b: int32 }
            enum foo_kind { FOO_KIND_NONE = 0 }
            message Foo_kind { 1 c: int32 }
            message Holder {
              @jsonName("inner") 1 __: Foo
              oneof _ { 2 t: string  3 n: int32 }
              message foo { 1 d: int32 }
            }
            message M { @jsonName("underscore") 1 _: int32 }
            enum E { E_ZERO = 0  _ = 1 }
            message _internal { 1 x: int32 }
            message Shadow { 1 _1: int32 }
            message _1 { 1 z: int32 }
            message User { 1 one: _1 }
            message Odd { oneof __ { 1 p: string } }
            """#)
        let schema = try #require(output.schema, "\(output.renderedDiagnostics)")
        #expect(output.diagnostics.allSatisfy { $0.severity == .warning }, "\(output.renderedDiagnostics)")

        let upper = try message(schema, "Foo")
        #expect(upper.swiftName == "Foo")
        let foo = try #require(schema.messages.first { $0.name == "foo" && $0.parent == nil })
        #expect(foo.swiftName == "FooMessage")
        #expect(output.diagnostics.contains { $0.code == .typeNameCaseCollision && $0.message.contains("it is generated as 'FooMessage'") }, "\(output.renderedDiagnostics)")
        // Equal up to case only: their files would be one on a case-insensitive file system.
        let kindMessage = try message(schema, "Foo_kind")
        let kindEnum = try enumeration(schema, "foo_kind")
        #expect(kindMessage.swiftName == "Foo_kind")
        #expect(kindEnum.swiftName == "Foo_kindEnum")
        // Nested, the name is free: only the top level shares a folder.
        let nested = try #require(schema.messages.first { $0.name == "foo" && $0.parent != nil })
        #expect(nested.swiftName == "Foo")
        #expect(nested.swiftPath == "Holder.Foo")

        let holder = try message(schema, "Holder")
        #expect(holder.fields.map(\.swiftName) == ["__", "t", "n"])
        #expect(holder.fields[0].jsonName == "inner")
        // `___` holds `__`'s message (its presence); the oneof goes on to `____`.
        #expect(holder.oneofs.map(\.swiftName) == ["____"])
        #expect(holder.oneofs.map(\.swiftTypeName) == ["_Oneof"])

        let m = try message(schema, "M")
        #expect(m.fields.map(\.swiftName) == ["__"])
        #expect(m.fields.map(\.jsonName) == ["underscore"])
        #expect(output.diagnostics.contains { $0.code == .swiftKeyword && $0.message.contains("it is generated as '__'") })

        let e = try enumeration(schema, "E")
        #expect(e.cases.map(\.swiftName) == ["zero", "__"])

        // After underscores, a type starts uppercase, so it never meets a property (`_x` keeps
        // a field `x`'s message); one with no letter there may, and then takes its kind.
        let underscored = try message(schema, "_internal")
        #expect(underscored.swiftName == "_Internal")
        let shadow = try message(schema, "Shadow")
        #expect(shadow.fields.map(\.swiftName) == ["_1"])
        let one = try message(schema, "_1")
        #expect(one.swiftName == "_1Message")
        #expect(output.diagnostics.contains { $0.code == .generatedMemberCollision && $0.message.contains("it is generated as '_1Message'") }, "\(output.renderedDiagnostics)")
        let odd = try message(schema, "Odd")
        #expect(odd.oneofs.map(\.swiftName) == ["__"])
        #expect(odd.oneofs.map(\.swiftTypeName) == ["__Oneof"])
    }

    /// What protoc takes but generated code cannot hold stays an error: an empty JSON name
    /// (`_`'s own, or one chosen) and one with a space or tab, which separate the names in a
    /// generated message's table of JSON names; and a type named like generated aliases.
    @Test func namesGeneratedCodeCannotHoldAreRefused() {
        let cases: [(text: String, message: String)] = [
            ("message M { 1 _: int32 }", "field '_' has an empty JSON name"),
            ("message M { 1 ___: int32 }", "field '___' has an empty JSON name"),
            (#"message M { @jsonName("") 1 a: int32 }"#, "JSON name '' is empty"),
            (#"message M { @jsonName("a b") 1 a: int32 }"#, "JSON name 'a b' holds a space or a tab"),
            (#"message M { @jsonName("a\tb") 1 a: int32 }"#, "holds a space or a tab"),
            ("message _SwitchboardTopLevel_M { 1 a: int32 }", "starts with '_SwitchboardTopLevel_'"),
            // Services name Swift types as written (`lowerService`, `lowerClient`).
            ("service lower { auth none }", "service name 'lower' must start with an uppercase letter"),
        ]
        for (text, message) in cases {
            let output = compile("package demo\n" + text + "\n")
            #expect(output.schema == nil, "\(text)")
            #expect(output.diagnostics.contains { $0.severity == .error && $0.code == .invalidIdentifier && $0.message.contains(message) },
                    "\(text): \(output.renderedDiagnostics)")
        }
    }

    /// `message timestamp` is a protobuf name, but a field's type `timestamp` means the
    /// built-in: a warning says so, and the package's name reaches the message.
    @Test func aTypeNamedLikeABuiltInIsWarnedOf() throws {
        let output = compile("""
            package demo
            message timestamp { 1 s: int64 }
            message M { 1 builtIn: timestamp  2 own: demo.timestamp }
            """)
        let schema = try #require(output.schema, "\(output.renderedDiagnostics)")
        #expect(output.diagnostics.map(\.code) == [.duplicateTypeName], "\(output.renderedDiagnostics)")
        #expect(output.diagnostics.first?.severity == .warning)
        #expect(output.diagnostics.first?.message.contains("name this message 'demo.timestamp'") == true)
        let own = try message(schema, "timestamp")
        #expect(own.swiftName == "Timestamp")
        let fields = try message(schema, "M").fields
        var fullNames: [String] = []
        for field in fields {
            if case let .singular(.message(index)) = field.shape { fullNames.append(schema.messages[index].fullName) }
        }
        #expect(fullNames == ["google.protobuf.Timestamp", "demo.timestamp"])
    }

    /// JSON names are compared as protoc and the codecs compare them, by their UTF-8 bytes:
    /// `é` (U+00E9) and `e` + U+0301 are one Swift `String` but two JSON names (found by review).
    @Test func jsonNamesEqualOnlyAsStringsAreDistinct() throws {
        let output = compile("package demo\nmessage M {\n  @jsonName(\"\u{E9}\") 1 a: int32\n  @jsonName(\"e\u{301}\") 2 b: int32\n}\n")
        let schema = try #require(output.schema, "\(output.renderedDiagnostics)")
        #expect(output.diagnostics.isEmpty, "\(output.renderedDiagnostics)")
        let names = try message(schema, "M").fields.map { Array($0.jsonName.utf8) }
        #expect(names == [[0xC3, 0xA9], [0x65, 0xCC, 0x81]])
        // The same bytes twice is still a collision.
        let twice = compile("package demo\nmessage M {\n  @jsonName(\"\u{E9}\") 1 a: int32\n  @jsonName(\"\u{E9}\") 2 b: int32\n}\n")
        #expect(twice.diagnostics.contains { $0.code == .jsonNameCollision }, "\(twice.renderedDiagnostics)")
    }
}
