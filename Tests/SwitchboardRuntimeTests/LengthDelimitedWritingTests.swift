import Foundation
import KitchenSink
import SignalChat
import SwitchboardRuntime
import Testing

/// Nested messages are written without asking them for their size again: one byte is set
/// aside for the length prefix, and the message moves up when its prefix needs more.
@Suite struct LengthDelimitedWritingTests {
    static func varint(_ value: Int) -> [UInt8] {
        var value = UInt64(value), bytes: [UInt8] = []
        while value >= 0x80 { bytes.append(UInt8(value & 0x7F) | 0x80); value >>= 7 }
        return bytes + [UInt8(value)]
    }

    /// Bodies that put the nested request one byte either side of each prefix width
    /// (127/128, 16,383/16,384 and 2,097,151/2,097,152 bytes): the envelope's bytes are its
    /// type, the tag, the request's own length and encoding, exactly.
    @Test(arguments: [0, 1, 119, 120, 121, 122, 16374, 16375, 16376, 16377, 2_097_142, 2_097_143])
    func aNestedMessageCarriesTheLengthOfItsOwnEncoding(bodySize: Int) throws {
        let request = WebSocketRequestMessage(verb: "PUT", body: Data(repeating: 7, count: bodySize))
        let message = WebSocketMessage(type: .request, request: request)
        let child = request.serializedBytes()
        let bytes = message.serializedBytes()
        #expect(bytes == [0x08, 0x01, 0x12] + Self.varint(child.count) + child)
        #expect(bytes.count == message.serializedSize())
        #expect(try WebSocketMessage(serializedBytes: bytes) == message)
    }

    /// A boxed chain whose levels cross the one-, two- and three-byte prefixes at different
    /// depths, so several levels move their contents up: the bytes match an encoding built
    /// by hand from the inside out.
    @Test func aDeepChainIsWrittenAsProtobufLaysItOut() throws {
        let labels = (0..<40).map { String(repeating: Character(UnicodeScalar(UInt8(97 + $0 % 26))), count: 60 + 37 * $0) }
        var chain: Chain?
        var expected: [UInt8] = []
        for label in labels.reversed() {
            var level = [0x0A] + Self.varint(label.utf8.count) + Array(label.utf8)
            if chain != nil { level += [0x12] + Self.varint(expected.count) + expected }
            expected = level
            chain = Chain(label: label, next: chain)
        }
        let bytes = try #require(chain).serializedBytes()
        #expect(expected.count > 16_384)
        #expect(bytes == expected)
        #expect(try Chain(serializedBytes: bytes) == chain)
        #expect(try #require(chain).serializedData() == Data(expected))
    }

    /// `serializedData()` writes messages of up to 14 bytes on the stack into `Data`'s inline
    /// form, longer ones into memory `Data` takes over: both give the bytes `serializedBytes()` does.
    @Test(arguments: 0...20)
    func dataHoldsTheSameBytesEitherSideOfTheInlineLimit(verbLength: Int) throws {
        let message = WebSocketRequestMessage(verb: String(repeating: "v", count: verbLength))
        let data = message.serializedData()
        #expect(data.count == message.serializedSize())
        #expect(Array(data) == message.serializedBytes())
        #expect(try WebSocketRequestMessage(serializedData: data) == message)
    }

    /// Repeated and oneof messages go through the same path.
    @Test func repeatedAndOneofMessagesRoundTrip() throws {
        var root = TreeNode(name: "root")
        for size in [0, 120, 121, 20_000] {
            root.children.append(TreeNode(name: String(repeating: "n", count: size)))
        }
        root.link = .next(TreeNode(name: String(repeating: "x", count: 200), children: [TreeNode(name: "leaf")]))
        let bytes = root.serializedBytes()
        #expect(bytes.count == root.serializedSize())
        #expect(try TreeNode(serializedBytes: bytes) == root)
    }
}
