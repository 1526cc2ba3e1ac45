import Foundation
import KitchenSink
import SwitchboardDynamic
import SwitchboardRuntime
import Testing

/// An Any is written to JSON within the levels its reader allows, counted in JSON, not in the
/// wire nesting of its packed bytes: a Struct level is three messages on the wire but one JSON
/// object, and a list of messages one message but two JSON levels (found by review: an Any
/// holding a deep Struct was read from JSON and could not be written back, and one holding a
/// deep list was written deeper than any reader takes). Both codecs agree.
@Suite struct AnyJSONDepthTests {
    static let schema = DynamicCodecAgreementTests.kitchenSink

    /// `{"anything":{"@type":…Struct,"value":{"a":{"a":…1…}}}}` with `levels` objects of "a".
    static func anyOfStruct(levels: Int) -> String {
        var inner = "1"
        for _ in 0..<levels { inner = "{\"a\":\(inner)}" }
        return "{\"anything\":{\"@type\":\"type.googleapis.com/google.protobuf.Struct\",\"value\":\(inner)}}"
    }

    @Test func anAnyOfTheDeepestStructTheReaderTakesIsWrittenBack() throws {
        // The deepest the reader takes, found by trying (no arithmetic of ours to trust).
        var deepest = 0
        while (try? WellKnown(jsonString: Self.anyOfStruct(levels: deepest + 1))) != nil { deepest += 1 }
        #expect(deepest >= 90, "\(deepest)")
        let text = Self.anyOfStruct(levels: deepest)
        let message = try WellKnown(jsonString: text)
        #expect(try message.jsonString() == text)
        // The schema-driven codec reads and writes it alike.
        let wellKnown = try #require(Self.schema.messageIndex(named: "WellKnown"))
        let codec = DynamicJSONCodec(schema: Self.schema)
        let dynamic = try codec.decode(Data(text.utf8), as: wellKnown)
        #expect(try codec.encodeStrictly(dynamic) == text)
    }

    /// The same Struct one level deeper, made in binary (no JSON reader would take it): both
    /// codecs refuse to write JSON that deep.
    @Test func anAnyOfAStructTooDeepForJSONIsRefused() throws {
        var deepest = 0
        while (try? WellKnown(jsonString: Self.anyOfStruct(levels: deepest + 1))) != nil { deepest += 1 }
        var value = ProtoValue(kind: .numberValue(1))
        for _ in 0..<(deepest + 1) { value = ProtoValue(kind: .structValue(ProtoStruct(fields: ["a": value]))) }
        guard case let .structValue(top)? = value.kind else { Issue.record("not a Struct"); return }
        let message = WellKnown(anything: ProtoAny(packing: top))
        #expect(throws: JSONEncodingError.self) { try message.jsonString() }
        let wellKnown = try #require(Self.schema.messageIndex(named: "WellKnown"))
        let dynamic = try DynamicBinaryCodec(schema: Self.schema).decode(message.serializedData(), as: wellKnown)
        #expect(throws: DynamicCodecError.self) { try DynamicJSONCodec(schema: Self.schema).encodeStrictly(dynamic) }
    }

    /// A chain of lists of messages is two JSON levels a message: packed in an Any, one that
    /// fits the wire limit but not the JSON one is refused by both writers, and one that fits
    /// both is written and read back.
    @Test func anAnyOfListsIsHeldToJSONLevels() throws {
        func chain(_ levels: Int) -> TreeNode {
            var node = TreeNode(name: "leaf")
            for _ in 0..<levels { node = TreeNode(children: [node]) }
            return node
        }
        AnyTypeRegistry.shared.register(TreeNode.self)
        let wellKnown = try #require(Self.schema.messageIndex(named: "WellKnown"))
        let binary = DynamicBinaryCodec(schema: Self.schema)
        let codec = DynamicJSONCodec(schema: Self.schema)
        // 60 levels: 60 messages on the wire (within 100), 121 JSON levels.
        let deep = WellKnown(anything: ProtoAny(packing: chain(60)))
        #expect(throws: JSONEncodingError.self) { try deep.jsonString() }
        #expect(throws: DynamicCodecError.self) { try codec.encodeStrictly(binary.decode(deep.serializedData(), as: wellKnown)) }
        let fits = WellKnown(anything: ProtoAny(packing: chain(40)))
        let text = try fits.jsonString()
        #expect(try WellKnown(jsonString: text) == fits)
        #expect(try codec.encodeStrictly(binary.decode(fits.serializedData(), as: wellKnown)) == text)
    }
}
