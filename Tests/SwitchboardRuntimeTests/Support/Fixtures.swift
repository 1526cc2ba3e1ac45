import Foundation
import KitchenSink
import SignalChat
import SwitchboardRuntime

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

    static func messageName(of name: String) -> String {
        String(name.split(separator: ".", maxSplits: 1)[1])
    }
}

/// Type-erased codec operations for one generated message type, so fixture tests can
/// be driven by the message name in the file name.
struct MessageCodecs: Sendable {
    let binaryRoundTrip: @Sendable (Data) throws -> (reencoded: Data, viaJSON: Bool)
    let decodeBoth: @Sendable (_ binary: Data, _ json: Data) throws -> (binaryEqualsJSON: Bool, ourJSON: Data)

    static func of<M: ProtoMessage>(_ type: M.Type) -> MessageCodecs {
        MessageCodecs(
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

    static let byName: [String: MessageCodecs] = [
        "switchboard.test.Scalars": .of(Scalars.self),
        "switchboard.test.Lists": .of(Lists.self),
        "switchboard.test.Maps": .of(Maps.self),
        "switchboard.test.Composite": .of(Composite.self),
        "switchboard.test.TreeNode": .of(TreeNode.self),
        "switchboard.test.Owner": .of(Owner.self),
        "signal.chat.WebSocketMessage": .of(WebSocketMessage.self),
        "signal.chat.Envelope": .of(Envelope.self),
        "signal.chat.ChatMessage": .of(ChatMessage.self),
    ]
}
