import Foundation
import PeerSupport
import SignalChat
import SwitchboardDynamic
import SwitchboardEmitter
import SwitchboardRuntime
import SwitchboardSchema
import TestMessagesProto3
import Testing

/// The catalogue's JSON Type Definitions (RFC 8927) accept what the generated codecs write:
/// random messages of protobuf's conformance message and of the sample schema's catalogue
/// types, encoded by the generated code, validated by the reference Python `jtd`.
@Suite(.serialized) struct JSONTypeDefinitionTests {
    static func definitionFile(_ schema: Schema, _ name: String, in folder: URL) throws -> URL {
        let index = try #require(schema.messageIndex(named: name))
        let url = folder.appendingPathComponent(name + ".jtd.json")
        try Data(JSONTypeDefinition(schema: schema).document(for: index).utf8).write(to: url)
        return url
    }

    @Test func generatedJSONValidatesAgainstTheExportedDefinitions() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("jtd-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        AnyTypeRegistry.shared.register(ForeignMessage.self)
        let conformance = try #require(SchemaCompiler.compile(
            directory: DynamicCodecAgreementTests.schemas.appendingPathComponent("Schemas/test_messages_proto3")).schema)
        let allTypes = try Self.definitionFile(conformance, "protobuf_test_messages.proto3.TestAllTypesProto3", in: folder)
        var random = RandomDynamicMessages(schema: conformance, seed: 8927, anyPayload: "protobuf_test_messages.proto3.ForeignMessage")
        random.describableOnly = true
        let binary = DynamicBinaryCodec(schema: conformance)
        let type = try #require(conformance.messageIndex(named: "protobuf_test_messages.proto3.TestAllTypesProto3"))
        var documents: [(URL, Data)] = []
        for _ in 0..<60 {
            let message = try TestAllTypesProto3(serializedData: binary.encode(random.message(type, depth: 3)))
            documents.append((allTypes, Data(try message.jsonUTF8Bytes())))
        }
        // The sample schema's history page: nested messages, lists, maps, timestamps, enums.
        let sample = try #require(SchemaCompiler.compile(directory: DynamicCodecAgreementTests.schemas.deletingLastPathComponent().appendingPathComponent("schema")).schema)
        let history = try Self.definitionFile(sample, "signal.chat.ChatHistoryResponse", in: folder)
        let page = ChatHistoryResponse(messages: [
            ChatMessage(id: "m1", senderId: 9, text: "hi", status: .read, createdAt: ProtoTimestamp(seconds: 1_700_000_000, nanos: 5),
                        attachments: [Attachment(id: "a", size: 3, digest: Data([1, 2]))], extras: ["k": "v"], replyTo: "m0",
                        reactions: [ChatMessage.Reaction(emoji: "👍", userIds: [1, UInt64.max])]),
        ], hasMore: true)
        documents.append((history, Data(try page.jsonUTF8Bytes())))
        // Well-known types as whole documents (a Struct response, an Empty request) have their
        // JSON forms, not their message shapes (from the catalogue review).
        let timestamp = try Self.definitionFile(conformance, "google.protobuf.Timestamp", in: folder)
        documents.append((timestamp, Data(try ProtoTimestamp(seconds: 1_700_000_000, nanos: 0).jsonUTF8Bytes())))
        let structure = try Self.definitionFile(conformance, "google.protobuf.Struct", in: folder)
        documents.append((structure, Data(try ProtoStruct(jsonString: #"{"a": 1, "b": [true, "x"], "c": {"d": null}}"#).jsonUTF8Bytes())))
        let value = try Self.definitionFile(conformance, "google.protobuf.Value", in: folder)
        documents.append((value, Data(try ProtoValue(jsonString: "3").jsonUTF8Bytes())))
        let empty = try Self.definitionFile(conformance, "google.protobuf.Empty", in: folder)
        documents.append((empty, Data(try ProtoEmpty().jsonUTF8Bytes())))
        // And a document that breaks its definition must be refused: the check can fail.
        documents.append((history, Data(#"{"messages": [{"id": 5}]}"#.utf8)))

        let peer = try PythonPeer(script: "jtd_validate.py")
        #expect(await peer.firstLineAsync() == "ready")
        var input = ""
        for (definition, document) in documents { input += "\(definition.path) \(document.base64EncodedString())\n" }
        peer.writeInBackground(Data(input.utf8))
        let (status, output) = await peer.finishAsync()
        #expect(status == 0, "\(output.prefix(500))")
        let lines = output.split(separator: "\n").map(String.init)
        try #require(lines.count == documents.count, "\(output.prefix(500))")
        for (index, line) in lines.dropLast().enumerated() {
            #expect(line == "ok", "document \(index) \(String(decoding: documents[index].1, as: UTF8.self).prefix(300)): \(line)")
        }
        #expect(lines.last?.hasPrefix("invalid messages/0/id") == true)
    }

    /// An enum is one definition its fields refer to: a message of 1,000 fields of a
    /// 1,000-case enum makes a document of fields plus cases, not a million names inline.
    @Test func anEnumIsDefinedOnceWhateverItsFields() throws {
        let cases = (0..<1000).map { "  CASE_\($0) = \($0)\n" }.joined()
        let fields = (1...1000).map { "  \($0) f\($0): E\n" }.joined()
        let text = "package big\nenum E {\n" + cases + "}\nmessage M {\n" + fields + "}\n"
        let output = SchemaCompiler.compile(files: [SourceFile(path: "big.sb", text: text)])
        let schema = try #require(output.schema, "\(output.renderedDiagnostics.prefix(300))")
        let document = JSONTypeDefinition(schema: schema).document(for: try #require(schema.messageIndex(named: "big.M")))
        #expect(document.utf8.count < 200_000, "\(document.utf8.count) bytes")
        #expect(document.components(separatedBy: "\"CASE_999\"").count == 2, "the enum's names are written once")
        #expect(document.components(separatedBy: "\"ref\": \"big.E\"").count == 1001, "each field refers to it")
    }
}
