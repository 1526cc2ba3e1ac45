import Foundation
import KitchenSink
import SignalChat
import SwitchboardRuntime
import Testing

/// Many random messages, encoded then decoded through both codecs, must come back equal.
@Suite struct RoundTripPropertyTests {
    static let iterations = 300

    func check<M: ProtoMessage>(_ make: (inout RandomMessages) -> M, seed: UInt64) throws {
        var random = RandomMessages(seed: seed)
        for iteration in 0..<Self.iterations {
            let message = make(&random)
            let bytes = message.serializedBytes()
            #expect(bytes.count == message.serializedSize())
            let fromBinary = try M(serializedBytes: bytes)
            #expect(fromBinary == message, "binary round trip failed at iteration \(iteration) (seed \(seed))")
            #expect(fromBinary.serializedBytes() == bytes, "encoding is not deterministic at iteration \(iteration)")
            #expect(Data(bytes) == message.serializedData())
            let json = try message.jsonString()
            let fromJSON = try M(jsonString: json)
            #expect(fromJSON == message, "JSON round trip failed at iteration \(iteration): \(json)")
        }
    }

    @Test func scalars() throws { try check({ $0.scalars() }, seed: 1) }
    @Test func lists() throws { try check({ $0.lists() }, seed: 2) }
    @Test func maps() throws { try check({ $0.maps() }, seed: 3) }
    @Test func composite() throws { try check({ $0.composite() }, seed: 4) }
    @Test func recursiveTrees() throws { try check({ $0.tree(depth: 4) }, seed: 5) }
    @Test func chatMessages() throws { try check({ $0.chatMessage() }, seed: 6) }
    @Test func webSocketFrames() throws { try check({ $0.webSocketMessage() }, seed: 7) }

    /// Decoding with a schema that lacks fields keeps them, so a relay loses nothing.
    @Test func unknownFieldsSurviveDecodeAndReencode() throws {
        var random = RandomMessages(seed: 8)
        for _ in 0..<100 {
            let full = random.composite()
            let bytes = full.serializedBytes()
            let empty = try Empty(serializedBytes: bytes)
            #expect(empty.unknownFields.count == bytes.count)
            #expect(empty.serializedBytes() == bytes)
            #expect(try Composite(serializedBytes: empty.serializedBytes()) == full)
        }
    }

    @Test func discardingUnknownFieldsDropsThem() throws {
        let bytes = Composite(title: "x", farField: "y").serializedBytes()
        let empty = try Empty(serializedBytes: bytes, options: WireDecodingOptions(discardUnknownFields: true))
        #expect(empty.unknownFields.isEmpty)
        #expect(empty.serializedBytes().isEmpty)
    }

    @Test func unknownFieldsOfEveryWireTypeAreKept() throws {
        var bytes = Point(x: 1, y: 2).serializedBytes()
        let unknown: [UInt8] = [
            0xF8, 0x06, 0x96, 0x01,                      // 111: varint 150
            0xF9, 0x06, 1, 2, 3, 4, 5, 6, 7, 8,          // 111: fixed64
            0xFA, 0x06, 0x03, 0x61, 0x62, 0x63,          // 111: length-delimited "abc"
            0xFB, 0x06, 0x08, 0x01, 0xFC, 0x06,          // 111: group holding field 1 = 1
            0xFD, 0x06, 9, 9, 9, 9,                      // 111: fixed32
        ]
        bytes += unknown
        let point = try Point(serializedBytes: bytes)
        #expect(point.x == 1 && point.y == 2)
        #expect(point.unknownFields.bytes == unknown)
        #expect(point.serializedBytes() == bytes)
    }

    @Test func fieldsInAnyOrderAndRepeatedSingularFieldsMerge() throws {
        // y before x, then x again (last wins), then origin twice (messages merge).
        let bytes: [UInt8] = [0x10, 0x04, 0x08, 0x02, 0x08, 0x06]
        #expect(try Point(serializedBytes: bytes) == Point(x: 3, y: 2))
        let origin1 = Point(x: 1).serializedBytes(), origin2 = Point(y: 1, label: "l").serializedBytes()
        let composite: [UInt8] = [0x12, UInt8(origin1.count)] + origin1 + [0x12, UInt8(origin2.count)] + origin2
        #expect(try Composite(serializedBytes: composite).origin == Point(x: 1, y: 1, label: "l"))
    }

    @Test func interleavedListElementsKeepTheirOrder() throws {
        // strings (14) and bytesList (15) interleaved with each other and with a packed field.
        let bytes: [UInt8] = [0x72, 0x01, 0x61, 0x7A, 0x01, 0x01, 0x72, 0x01, 0x62, 0x12, 0x01, 0x05, 0x72, 0x00, 0x7A, 0x00]
        let lists = try Lists(serializedBytes: bytes)
        #expect(lists.strings == ["a", "b", ""])
        #expect(lists.bytesList == [Data([1]), Data()])
        #expect(lists.int32s == [5])
    }

    @Test func packedAndUnpackedListsBothDecode() throws {
        let packed = Lists(int32s: [1, -1, 300]).serializedBytes()
        #expect(packed.first == 0x12)
        // The same values unpacked: tag 0x10 per element.
        var unpacked: [UInt8] = [0x10, 0x01, 0x10]
        unpacked += [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01, 0x10, 0xAC, 0x02]
        #expect(try Lists(serializedBytes: unpacked).int32s == [1, -1, 300])
        #expect(try Lists(serializedBytes: packed + unpacked).int32s == [1, -1, 300, 1, -1, 300])
    }

    @Test func enumsCompareByNumber() {
        #expect(Color.unrecognized(0) == .unspecified)
        #expect(Color.unrecognized(1).hashValue == Color.red.hashValue)
        #expect(Color() == .unspecified)
        #expect(Color.allCases == [.red, .unspecified, .green, .blue, .infrared])
        #expect(Color(rawValue: -1) == .infrared)
    }
}
