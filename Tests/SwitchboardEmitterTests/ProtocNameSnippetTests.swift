import Foundation
import SwitchboardEmitter
import SwitchboardSchema
import Testing

/// Names protoc takes, in generated Swift and in `export-proto`: types start uppercase, and a
/// JSON name with quotes, backslashes, controls or non-ASCII is escaped in each literal it
/// lands in (the key `writeKeyLiteral` writes as JSON, the names `JSONFieldNames` reads, the
/// `json_name` protoc reads).
@Suite struct ProtocNameSnippetTests {
    func compile(_ schemaText: String) throws -> Schema {
        let output = SchemaCompiler.compile(files: [SourceFile(path: "snippet.sb", text: "package demo\n" + schemaText)])
        return try #require(output.schema, "\(output.renderedDiagnostics)")
    }

    func generate(_ schemaText: String) throws -> [String: String] {
        let schema = try compile(schemaText)
        let files = SwiftEmitter.generate(schema, options: SwiftEmitterOptions())
        return Dictionary(uniqueKeysWithValues: files.map { ($0.path, $0.contents) })
    }

    static let names = #"""
        message Names {
          @jsonName("q\"uo\\te") 1 quoted: string
          @jsonName("naïve") 2 naive: string
          @jsonName("line\nbreak") 3 control: int32
          4 plain: bool
        }
        """#

    @Test func customJSONNamesAreEscapedInGeneratedLiterals() throws {
        let file = try #require(try generate(Self.names)["Names.swift"])
        // JSON text `"q\"uo\\te":`, as a Swift literal.
        #expect(file.contains(#"try StringCodec.writeJSONMember(self.quoted, key: "\"q\\\"uo\\\\te\":", to: &writer)"#), "\(file)")
        // Non-ASCII stays as it is in JSON; the Swift literal spells it as an escape.
        #expect(file.contains(#"try StringCodec.writeJSONMember(self.naive, key: "\"na\u{EF}ve\":", to: &writer)"#))
        // A newline is `\n` in JSON, and that backslash is escaped in Swift.
        #expect(file.contains(#"try Int32Codec.writeJSONMember(self.control, key: "\"line\\nbreak\":", to: &writer)"#))
        #expect(file.contains(#"try BoolCodec.writeJSONMember(self.plain, key: "\"plain\":", to: &writer)"#))
        // The names decoding looks up are the names themselves (a real newline, here).
        #expect(file.contains(#"JSONFieldNames(message: protoMessageName, fields: "q\"uo\\te\tquoted na\u{EF}ve\tnaive line\nbreak\tcontrol plain")"#), "\(file)")
    }

    @Test func customJSONNamesAreEscapedInTheExportedProto() throws {
        let schema = try compile(Self.names)
        let proto = ProtoExporter.export(schema)
        #expect(proto.contains(#"string quoted = 1 [json_name = "q\"uo\\te"];"#), "\(proto)")
        #expect(proto.contains(#"string naive = 2 [json_name = "naïve"];"#))
        #expect(proto.contains(#"int32 control = 3 [json_name = "line\nbreak"];"#))
        #expect(proto.contains("bool plain = 4;"))
    }

    @Test func protocTypeAndMemberNamesBecomeSwiftNames() throws {
        let files = try generate("""
            message chat_message {
              @jsonName("underscore") 1 _: int32
              2 __2: string
              oneof Choice { 3 word: string  4 shade: color }
            }
            message Chat_message_ { 1 x: int32 }
            enum color { _UNKNOWN = 0  COLOR_RED = 1 }
            message foo { 1 a: int32 }
            message Foo { 1 b: foo }
            """)
        #expect(files.keys.sorted() == ["Chat_message.swift", "Chat_message_.swift", "Color.swift", "Foo.swift", "FooMessage.swift"])
        let chat = try #require(files["Chat_message.swift"])
        #expect(chat.contains("public struct Chat_message: Sendable, Hashable {"))
        #expect(chat.contains("public var __: Int32 = 0"))
        #expect(chat.contains("public var _2: String = \"\""))
        #expect(chat.contains("public var choice: Choice? = nil"))
        #expect(chat.contains("public enum Choice: Sendable, Hashable {"))
        #expect(chat.contains("case shade(Color)"))
        #expect(chat.contains(#"public static let protoMessageName = "demo.chat_message""#))
        #expect(chat.contains(#"try Int32Codec.writeJSONMember(self.__, key: "\"underscore\":", to: &writer)"#))
        #expect(chat.contains(#"JSONFieldNames(message: protoMessageName, fields: "underscore\t_ 2\t__2 word shade")"#), "\(chat)")
        let color = try #require(files["Color.swift"])
        #expect(color.contains("public enum Color: ProtoEnum, CaseIterable {"))
        #expect(color.contains("case unknown"))
        #expect(color.contains(#"case .unknown: return "_UNKNOWN""#))
        #expect(color.contains("case .red: return \"COLOR_RED\""))
        // `foo` beside `Foo` is `FooMessage`, and fields of type `foo` name it so.
        let upper = try #require(files["Foo.swift"])
        #expect(upper.contains("public var b: FooMessage {"))
        #expect(files["FooMessage.swift"]?.contains("public struct FooMessage: Sendable, Hashable {") == true)
    }
}
