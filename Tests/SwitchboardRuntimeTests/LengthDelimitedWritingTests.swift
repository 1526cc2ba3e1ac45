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

    /// `serializedData()` writes up to 1 KiB on the stack and larger encodings into memory
    /// `Data` takes over: the bytes are the same as `serializedBytes()` on both sides of
    /// that line and of `Data`'s inline form (14 bytes).
    @Test func dataEncodingsMatchArrayEncodingsAcrossEveryBufferStrategy() throws {
        let overhead = WebSocketMessage(type: .request, request: WebSocketRequestMessage(body: Data())).serializedSize()
        for total in [1, 2, 13, 14, 15, 16, 1022, 1023, 1024, 1025, 1026, 4096] where total >= overhead {
            // The body's own prefix grows at 128, so search for the body that gives `total`.
            guard let message = (0...total).lazy.map({
                WebSocketMessage(type: .request, request: WebSocketRequestMessage(body: Data(repeating: 0x5A, count: $0)))
            }).first(where: { $0.serializedSize() == total }) else { continue }
            let data = message.serializedData()
            #expect(data.count == total)
            #expect(Array(data) == message.serializedBytes(), "total \(total)")
            #expect(try WebSocketMessage(serializedData: data) == message)
        }
        #expect(WebSocketMessage().serializedData().isEmpty)
        #expect(Array(WebSocketMessage(type: .response).serializedData()) == [0x08, 0x02])
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

    /// A map's entries are written as nested messages are: the write pass does not ask a
    /// message value for its size again (which, with maps nested in map values, walked every
    /// subtree once per level).
    @Test func aMapEntryIsWrittenWithoutAskingItsValueForItsSize() throws {
        typealias Map = MapField<StringCodec, MessageCodec<Counted>>
        let value = Counted(text: "hello")
        let map = ["key": value]
        let size = Map.encodedSize(map, tagSize: 1)
        #expect(value.sizeCalls.current > 0)
        value.sizeCalls.withLock { $0 = 0 }
        var bytes = [UInt8](repeating: 0, count: size + 64)
        let count = bytes.withUnsafeMutableBytes { buffer -> Int in
            var writer = WireWriter(unsafeStart: buffer.baseAddress!)
            Map.write(map, tag: 0x0A, to: &writer)
            return writer.bytesWritten
        }
        #expect(count == size)
        #expect(value.sizeCalls.current == 0)
        #expect(try Self.read(Array(bytes.prefix(count)), as: Map.self) == map)
    }

    /// Entries either side of each prefix width (127/128 and 16,383/16,384 bytes, with the
    /// keys these lengths get) are written as the entry's size computed up front wrote them:
    /// tag, length, key, value.
    @Test func mapEntriesKeepTheirBytesEitherSideOfEachPrefixWidth() throws {
        // Key "kN": an entry of N bytes of text is N + 10 bytes around 120, N + 14 around 16,370.
        let lengths = [0, 1, 117, 118, 119, 120, 200, 16_368, 16_369, 16_370, 16_371]
        let map = Dictionary(uniqueKeysWithValues: lengths.map { ("k\($0)", Counted(text: String(repeating: "t", count: $0))) })
        var expected: [UInt8] = []
        var entrySizes: [Int] = []
        for key in map.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
            let text = Array(map[key]!.text.utf8)
            // An empty Counted writes nothing: its value field is empty.
            let value: [UInt8] = text.isEmpty ? [] : Self.field(0x0A, text)
            let entry = Self.field(0x0A, Array(key.utf8)) + Self.field(0x12, value)
            entrySizes.append(entry.count)
            expected += Self.field(0x0A, entry)
        }
        #expect(entrySizes.contains(127) && entrySizes.contains(128))
        #expect(entrySizes.contains(16_383) && entrySizes.contains(16_384))
        #expect(Self.written(map, as: MapField<StringCodec, MessageCodec<Counted>>.self) == expected)
        #expect(try Self.read(expected, as: MapField<StringCodec, MessageCodec<Counted>>.self) == map)

        // Scalar values, whose size was never costly, take the same path.
        let strings = Dictionary(uniqueKeysWithValues: lengths.map { ("k\($0)", String(repeating: "s", count: $0)) })
        var expectedStrings: [UInt8] = []
        for key in strings.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
            let entry = Self.field(0x0A, Array(key.utf8)) + Self.field(0x12, Array(strings[key]!.utf8))
            expectedStrings += Self.field(0x0A, entry)
        }
        #expect(Self.written(strings, as: MapField<StringCodec, StringCodec>.self) == expectedStrings)

        var points = Maps()
        points.fixed32ToPoint = [1: Point(x: 1, y: -2), 300: Point(label: String(repeating: "p", count: 150))]
        let bytes = points.serializedBytes()
        #expect(bytes.count == points.serializedSize())
        #expect(try Maps(serializedBytes: bytes) == points)
    }

    /// The entries of a map written under field 1.
    static func read<Key: MapKeyCodec, Value: FieldCodec>(_ bytes: [UInt8], as _: MapField<Key, Value>.Type) throws -> [Key.Value: Value.Value] {
        try bytes.withUnsafeBytes { (buffer: UnsafeRawBufferPointer) throws -> [Key.Value: Value.Value] in
            var reader = WireReader(buffer: buffer)
            var map: [Key.Value: Value.Value] = [:]
            while let tag = try reader.nextTag() {
                #expect(tag.rawValue == 0x0A)
                try MapField<Key, Value>.readEntry(from: &reader, into: &map)
            }
            return map
        }
    }

    /// A length-delimited field: `tag`, the payload's length, the payload.
    static func field(_ tag: UInt8, _ payload: [UInt8]) -> [UInt8] {
        var bytes: [UInt8] = [tag]
        bytes += varint(payload.count)
        bytes += payload
        return bytes
    }

    /// `map` written under field 1 through a writer over a buffer of its computed size (with
    /// room to spare, so a disagreement shows as a different count, not a broken heap).
    static func written<Key: MapKeyCodec, Value: FieldCodec>(_ map: [Key.Value: Value.Value], as _: MapField<Key, Value>.Type) -> [UInt8] {
        let size = MapField<Key, Value>.encodedSize(map, tagSize: 1)
        var bytes = [UInt8](repeating: 0, count: size + 64)
        let count = bytes.withUnsafeMutableBytes { buffer -> Int in
            var writer = WireWriter(unsafeStart: buffer.baseAddress!)
            MapField<Key, Value>.write(map, tag: 0x0A, to: &writer)
            return writer.bytesWritten
        }
        #expect(count == size)
        return Array(bytes.prefix(count))
    }
}

/// A message of one string field (number 1) that counts how often it is asked for its size.
/// Copies share the count.
struct Counted: ProtoMessage {
    static let protoMessageName = "switchboard.test.Counted"
    var text = ""
    var unknownFields = UnknownFields()
    let sizeCalls = Locked(0)

    init() {}
    init(text: String) { self.text = text }

    static func == (lhs: Self, rhs: Self) -> Bool { lhs.text == rhs.text && lhs.unknownFields == rhs.unknownFields }
    func hash(into hasher: inout Hasher) {
        hasher.combine(text)
        hasher.combine(unknownFields)
    }

    func serializedSize() -> Int {
        sizeCalls.withLock { $0 += 1 }
        var size = WireSizeSum(unknownFields.count)
        StringCodec.addSize(of: text, tagSize: 1, to: &size)
        return size.total
    }

    func serialize(into writer: inout WireWriter) {
        StringCodec.writeField(text, tag: 0x0A, to: &writer)
        unknownFields.write(to: &writer)
    }

    mutating func decodeFields(from reader: inout WireReader) throws(WireDecodingError) {
        while let tag = try reader.nextTag() {
            if tag.rawValue == 0x0A {
                text = try StringCodec.read(from: &reader)
            } else {
                try reader.skipField(tag, into: &unknownFields)
            }
        }
    }

    func encodeJSONFields(into writer: inout JSONWriter) throws(JSONEncodingError) {
        try StringCodec.writeJSONMember(text, key: "\"text\":", to: &writer)
    }

    mutating func decodeJSONFields(from reader: inout JSONReader) throws(JSONDecodingError) {
        while try reader.nextKey() != nil { try reader.skipValue() }
    }
}
