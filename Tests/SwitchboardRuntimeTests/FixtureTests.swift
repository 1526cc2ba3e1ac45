import Foundation
import KitchenSink
import SignalChat
import SwitchboardRuntime
import Testing

/// Wire compatibility with real protobuf: protoc wrote the binary fixtures and
/// Python protobuf wrote the JSON ones (scripts/make-fixtures.sh).
@Suite struct FixtureTests {
    @Test func everyFixtureHasACodec() {
        #expect(Fixtures.names.count >= 12)
        for name in Fixtures.names {
            #expect(MessageCodecs.byName[Fixtures.messageName(of: name)] != nil, "no codec for \(name)")
        }
    }

    /// protoc's deterministic output sorts map keys and writes fields in key order, as we do,
    /// so every fixture must come back byte for byte.
    @Test(arguments: Fixtures.names)
    func protocBytesDecodeAndReencodeIdentically(name: String) throws {
        let codecs = try #require(MessageCodecs.byName[Fixtures.messageName(of: name)])
        let bytes = try Fixtures.binary(name)
        let (reencoded, viaJSON) = try codecs.binaryRoundTrip(bytes)
        #expect(reencoded == bytes, "\(name): re-encoding differs from protoc")
        #expect(viaJSON, "\(name): JSON round trip changed the message")
    }

    /// Python protobuf's JSON decodes to the same message as protoc's bytes, and our JSON
    /// means the same as Python's (compared as parsed JSON values, not text).
    @Test(arguments: Fixtures.names)
    func pythonJSONAgreesWithOurs(name: String) throws {
        let codecs = try #require(MessageCodecs.byName[Fixtures.messageName(of: name)])
        let theirs = try Fixtures.json(name)
        let (equal, ours) = try codecs.decodeBoth(try Fixtures.binary(name), theirs)
        #expect(equal, "\(name): Python's JSON decodes differently from protoc's bytes")
        let theirValue = try JSONSerialization.jsonObject(with: theirs, options: [.fragmentsAllowed]) as? NSDictionary
        let ourValue = try JSONSerialization.jsonObject(with: ours, options: [.fragmentsAllowed]) as? NSDictionary
        #expect(theirValue != nil && theirValue == ourValue, "\(name): our JSON \(String(decoding: ours, as: UTF8.self))")
    }

    /// Inputs protobuf accepts but a strict reader might not (a known number with the wrong
    /// wire type, a map entry's key of the wrong type): we read them as Python protobuf does,
    /// and re-encoding gives its bytes. One documented difference: a map entry's stray fields
    /// (here the key sent with the wrong wire type) are dropped, since a map holds keys and
    /// values only; protobuf's entry messages keep them. The maps still agree.
    @Test(arguments: Fixtures.inputNames)
    func handWrittenInputsComeBackAsPythonWritesThem(name: String) throws {
        let codecs = try #require(MessageCodecs.byName[Fixtures.messageName(of: name)])
        let input = try Fixtures.input(name), theirs = try Fixtures.reserialized(name)
        #expect(try codecs.decodeAlike(input, theirs), "\(name): Python read it differently")
        if !name.hasPrefix("map_entry") {
            #expect(try codecs.reencode(input) == theirs, "\(name): re-encoding differs from Python's")
        }
    }

    @Test func everyInputWasReserializedByPython() {
        #expect(Fixtures.inputNames.count >= 3)
    }

    @Test func scalarFixtureHoldsTheExpectedValues() throws {
        let message = try Scalars(serializedData: try Fixtures.binary("scalars_all.switchboard.test.Scalars"))
        #expect(message.boolValue)
        #expect(message.int32Value == -42)
        #expect(message.int64Value == -9_000_000_000)
        #expect(message.uint32Value == 4_000_000_000)
        #expect(message.uint64Value == .max)
        #expect(message.sint32Value == .min)
        #expect(message.sint64Value == .min)
        #expect(message.fixed32Value == .max)
        #expect(message.fixed64Value == 1_234_567_890_123_456_789)
        #expect(message.sfixed32Value == -5)
        #expect(message.sfixed64Value == -6)
        #expect(message.floatValue == 1.5)
        #expect(message.doubleValue == -2.25)
        #expect(message.stringValue == "héllo, 世界 🎉")
        #expect(message.bytesValue == Data([0, 1, 255, 97, 98, 99]))
        // Explicit presence: set to the default, yet present.
        #expect(message.optionalBool == false)
        #expect(message.optionalInt32 == 0)
        #expect(message.optionalString == "")
        #expect(message.optionalBytes == Data())
        #expect(message.optionalSint32 == -1)
        #expect(message.optionalDouble == 0.5)
    }

    @Test func chatMessageFixtureHoldsTheExpectedValues() throws {
        let message = try ChatMessage(serializedData: try Fixtures.binary("chat_message.signal.chat.ChatMessage"))
        #expect(message.id == "msg-1")
        #expect(message.senderId == 1_234_567_890_123)
        #expect(message.text == "Grüße aus Köln! Привет 👋")
        #expect(message.status == .read)
        #expect(message.createdAt == ProtoTimestamp(seconds: 1_700_000_000, nanos: 250_000_000))
        #expect(message.attachments.map(\.id) == ["att-1", "att-2"])
        #expect(message.attachments[0].digest == Data([0xAA, 0xBB, 0xCC]))
        #expect(message.attachments[1].fileName == "notes.pdf")
        #expect(message.extras == ["client": "ios", "locale": "de-DE"])
        #expect(message.replyTo == "msg-0")
        #expect(message.reactions == [ChatMessage.Reaction(emoji: "👍", userIds: [1, 2, 300])])
    }

    @Test func openEnumsKeepUnknownNumbers() throws {
        let lists = try Lists(serializedData: try Fixtures.binary("lists.switchboard.test.Lists"))
        #expect(lists.colors == [.red, .unspecified, .infrared, .unrecognized(99)])
        let composite = try Composite(serializedData: try Fixtures.binary("composite_oneof_enum.switchboard.test.Composite"))
        #expect(composite.payload == .shade(.unrecognized(42)))
        #expect(try composite.jsonString() == #"{"shade":42}"#)
    }

    @Test func recursiveFixturesDecode() throws {
        let tree = try TreeNode(serializedData: try Fixtures.binary("tree.switchboard.test.TreeNode"))
        #expect(tree.parent?.parent?.name == "further")
        #expect(tree.children.map(\.name) == ["a", "b"])
        #expect(tree.children[1].link == .label("leaf"))
        guard case let .next(sibling)? = tree.link else {
            Issue.record("expected the next link")
            return
        }
        #expect(sibling.children.first?.name == "nested")
        let owner = try Owner(serializedData: try Fixtures.binary("owner.switchboard.test.Owner"))
        #expect(owner.pet.owner?.pet.name == "Rex II")
    }
}
