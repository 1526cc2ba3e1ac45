import Foundation
import KitchenSink
import SignalChat
import SwitchboardRuntime
import TestMessagesProto3

/// Access to the committed fixtures made by scripts/make-fixtures.sh.
enum Fixtures {
    static var directory: URL {
        Bundle.module.url(forResource: "Fixtures", withExtension: nil)!
    }

    /// Case names: `<case>.<full.message.Name>`, one per text-format source.
    static var names: [String] {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("binary").path)) ?? []
        return files.filter { $0.hasSuffix(".binpb") }.map { String($0.dropLast(".binpb".count)) }.sorted()
    }

    static func binary(_ name: String) throws -> Data {
        try Data(contentsOf: directory.appendingPathComponent("binary/\(name).binpb"))
    }

    static func json(_ name: String) throws -> Data {
        try Data(contentsOf: directory.appendingPathComponent("json/\(name).json"))
    }

    /// Hand-written inputs (`input/<case>.<Message>.hex`) that Python protobuf parsed and
    /// serialized back (`reserialized/`).
    static var inputNames: [String] {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("input").path)) ?? []
        return files.filter { $0.hasSuffix(".hex") }.map { String($0.dropLast(".hex".count)) }.sorted()
    }

    static func input(_ name: String) throws -> Data {
        let text = try String(contentsOf: directory.appendingPathComponent("input/\(name).hex"), encoding: .utf8)
        let digits = Array(text.unicodeScalars.filter { !$0.properties.isWhitespace })
        return Data(stride(from: 0, to: digits.count - 1, by: 2).compactMap { UInt8(String(digits[$0]) + String(digits[$0 + 1]), radix: 16) })
    }

    static func reserialized(_ name: String) throws -> Data {
        try Data(contentsOf: directory.appendingPathComponent("reserialized/\(name).binpb"))
    }

    static func messageName(of name: String) -> String {
        String(name.split(separator: ".", maxSplits: 1)[1])
    }
}

/// Type-erased codec operations for one generated message type, so fixture tests can
/// be driven by the message name in the file name.
struct MessageCodecs: Sendable {
    let reencode: @Sendable (Data) throws -> Data
    let decodeAlike: @Sendable (Data, Data) throws -> Bool
    let binaryRoundTrip: @Sendable (Data) throws -> (reencoded: Data, viaJSON: Bool)
    let decodeBoth: @Sendable (_ binary: Data, _ json: Data) throws -> (binaryEqualsJSON: Bool, ourJSON: Data)

    static func of<M: ProtoMessage>(_ type: M.Type) -> MessageCodecs {
        MessageCodecs(
            reencode: { data in try M(serializedBytes: data).serializedData() },
            decodeAlike: { first, second in try M(serializedBytes: first) == M(serializedBytes: second) },
            binaryRoundTrip: { data in
                let message = try M(serializedBytes: data)
                let viaJSON = try M(jsonUTF8Bytes: try message.jsonUTF8Bytes())
                return (message.serializedData(), viaJSON == message)
            },
            decodeBoth: { binary, json in
                let fromBinary = try M(serializedBytes: binary)
                let fromJSON = try M(jsonUTF8Bytes: json)
                return (fromBinary == fromJSON, Data(try fromBinary.jsonUTF8Bytes()))
            })
    }

    /// Codecs by full message name. The Any fixtures pack these types, so JSON must know them.
    static let byName: [String: MessageCodecs] = {
        AnyTypeRegistry.shared.register(ForeignMessage.self)
        AnyTypeRegistry.shared.register(TestAllTypesProto3.self)
        return table
    }()

    private static let table: [String: MessageCodecs] = [
        "protobuf_test_messages.proto3.TestAllTypesProto3": .of(TestAllTypesProto3.self),
        "switchboard.test.Scalars": .of(Scalars.self),
        "switchboard.test.Lists": .of(Lists.self),
        "switchboard.test.Maps": .of(Maps.self),
        "switchboard.test.Composite": .of(Composite.self),
        "switchboard.test.TreeNode": .of(TreeNode.self),
        "switchboard.test.Owner": .of(Owner.self),
        "switchboard.test.Point": .of(Point.self),
        "switchboard.test.UnpackedLists": .of(UnpackedLists.self),
        "switchboard.test.Renamed": .of(Renamed.self),
        "switchboard.test.Feelings": .of(Feelings.self),
        "switchboard.test.Spellings": .of(Spellings.self),
        "signal.chat.WebSocketMessage": .of(WebSocketMessage.self),
        "signal.chat.Envelope": .of(Envelope.self),
        "signal.chat.ChatMessage": .of(ChatMessage.self),
    ]
}
