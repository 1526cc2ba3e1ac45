import Foundation
import KitchenSink
import SwitchboardDynamic
import SwitchboardRuntime
import SwitchboardSchema
import Testing

/// Swift compares strings by canonical equivalence, protobuf by bytes: `"é"` as U+00E9 and as
/// `e` + U+0301 are one Swift `String` but two protobuf map keys. A map cannot hold both, so a
/// decode that meets both fails with a clear error in every codec, instead of silently keeping
/// one entry; the same key twice, byte for byte, is still protobuf's "last one wins".
@Suite struct EquivalentMapKeyTests {
    static let composed = "\u{E9}", decomposed = "e\u{301}"
    static let schema = DynamicCodecAgreementTests.kitchenSink

    /// Field 1 of Maps (string to string): one entry per key.
    static func binaryMap(_ keys: [String]) -> Data {
        var bytes: [UInt8] = []
        for (position, key) in keys.enumerated() {
            let entry = [0x0A, UInt8(key.utf8.count)] + Array(key.utf8) + [0x12, 0x01, UInt8(ascii: "0") + UInt8(position)]
            bytes += [0x0A, UInt8(entry.count)] + entry
        }
        return Data(bytes)
    }

    @Test func theTwoSpellingsAreOneSwiftStringButTwoKeys() {
        #expect(Self.composed == Self.decomposed)
        #expect(Array(Self.composed.utf8) != Array(Self.decomposed.utf8))
    }

    @Test func binaryDecodingRefusesKeysThatCollideOnlyInSwift() throws {
        let bytes = Self.binaryMap([Self.composed, Self.decomposed])
        #expect(throws: WireDecodingError.equivalentMapKeys(key: Self.decomposed)) { try Maps(serializedData: bytes) }
        let index = try #require(Self.schema.messageIndex(named: "Maps"))
        #expect(throws: DynamicCodecError.self) { try DynamicBinaryCodec(schema: Self.schema).decode(bytes, as: index) }
    }

    @Test func jsonDecodingRefusesThemToo() throws {
        let json = #"{"stringToString":{"\#(Self.composed)":"0","\#(Self.decomposed)":"1"}}"#
        #expect { try Maps(jsonString: json) } throws: { error in
            guard case let .equivalentMapKeys(_, key) = error as? JSONDecodingError else { return false }
            return Array(key.utf8) == Array(Self.decomposed.utf8)
        }
        let index = try #require(Self.schema.messageIndex(named: "Maps"))
        #expect(throws: DynamicCodecError.self) { try DynamicJSONCodec(schema: Self.schema).decode(Data(json.utf8), as: index) }
    }

    @Test func theSameKeyTwiceIsStillLastOneWins() throws {
        let bytes = Self.binaryMap([Self.decomposed, "a", Self.decomposed])
        let maps = try Maps(serializedData: bytes)
        #expect(maps.stringToString.count == 2)
        #expect(maps.stringToString[Self.decomposed] == "2")
        // The key kept is the one on the wire, byte for byte.
        #expect(maps.stringToString.keys.contains { Array($0.utf8) == Array(Self.decomposed.utf8) })
        let index = try #require(Self.schema.messageIndex(named: "Maps"))
        let dynamic = try DynamicBinaryCodec(schema: Self.schema).decode(bytes, as: index)
        #expect(try Maps(serializedData: DynamicBinaryCodec(schema: Self.schema).encode(dynamic)) == maps)
    }

    /// Messages compare and hash their strings as Swift does (canonical equivalence), as maps
    /// key them: two messages whose strings differ only in normalization are `==`, while
    /// their encodings differ. Compare `serializedData()` where bytes matter.
    @Test func messagesCompareStringsAsSwiftDoes() {
        let first = Point(label: Self.composed), second = Point(label: Self.decomposed)
        #expect(first == second)
        #expect(first.hashValue == second.hashValue)
        #expect(first.serializedData() != second.serializedData())
    }
}
