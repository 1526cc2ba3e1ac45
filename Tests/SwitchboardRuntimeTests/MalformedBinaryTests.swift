import Foundation
import KitchenSink
import SignalChat
import SwitchboardDynamic
import SwitchboardRuntime
import Testing

/// Malformed wire input gets a typed error, never a crash or an unchecked allocation.
@Suite struct MalformedBinaryTests {
    func decodeError<M: ProtoMessage>(_ type: M.Type, _ bytes: [UInt8], options: WireDecodingOptions = .init()) -> WireDecodingError? {
        do {
            _ = try M(serializedBytes: bytes, options: options)
            return nil
        } catch {
            return error
        }
    }

    @Test func truncatedVarint() {
        #expect(decodeError(Point.self, [0x08]) == .truncated)
        #expect(decodeError(Point.self, [0x08, 0x80, 0x80]) == .truncated)
    }

    @Test func overlongVarint() {
        let eleven: [UInt8] = [0x08] + Array(repeating: 0xFF, count: 10) + [0x01]
        #expect(decodeError(Point.self, eleven) == .malformedVarint)
        // A tenth byte past the top bit: its extra bits are dropped, as protobuf's C++ and
        // swift-protobuf read it, not refused.
        let overflow: [UInt8] = [0x08] + Array(repeating: 0xFF, count: 9) + [0x7F]
        #expect(decodeError(Point.self, overflow) == nil)
    }

    /// An enum given as a number in quotes reads as that number, as protobuf's Java, Python
    /// and C++ parsers take it (it was refused, or skipped when unknown fields are ignored).
    @Test func anEnumAsAQuotedNumber() throws {
        #expect(try Composite(jsonString: #"{"color": "1"}"#).color.rawValue == 1)
        #expect(try Composite(jsonString: #"{"color": "77"}"#).color.rawValue == 77, "open enums keep unknown numbers")
        #expect(throws: JSONDecodingError.self) { try Composite(jsonString: #"{"color": "+1"}"#) }
        let schema = DynamicCodecAgreementTests.kitchenSink
        let type = try #require(schema.messageIndex(named: "Composite"))
        let dynamic = try DynamicJSONCodec(schema: schema).decode(Data(#"{"color": "1"}"#.utf8), as: type)
        #expect(try Composite(serializedBytes: DynamicBinaryCodec(schema: schema).encode(dynamic)).color.rawValue == 1)
    }

    @Test func millisecondTimestampsADateCannotHoldAreHeldAtTheBound() throws {
        var composite = Composite()
        composite.sentAtMillis = Date(timeIntervalSince1970: 1_700_000_000.123)
        let ok = try Composite(serializedBytes: composite.serializedBytes())
        #expect(ok.sentAtMillis == composite.sentAtMillis)
        // Field 8, varint: 2^53 + 1 ms would come back as 2^53.
        var bytes: [UInt8] = [0x40]
        var value: UInt64 = (1 << 53) + 1
        while value >= 0x80 { bytes.append(UInt8(value & 0x7F) | 0x80); value >>= 7 }
        bytes.append(UInt8(value))
        // Past what a Date holds exactly: read as the bound (a message is not dropped for it),
        // and the bound itself round-trips exactly.
        let bound = Date(timeIntervalSince1970: Double(UnixMillisTimestampCodec.maximumMilliseconds) / 1000)
        let decoded = try Composite(serializedBytes: bytes)
        #expect(decoded.sentAtMillis == bound)
        #expect(UnixMillisTimestampCodec.millis(decoded.sentAtMillis) == UnixMillisTimestampCodec.maximumMilliseconds)
        #expect(try Composite(jsonString: #"{"sentAtMillis": "9007199254740993"}"#).sentAtMillis == bound)
        #expect(try Composite(jsonString: #"{"sentAtMillis": "-9007199254740993"}"#).sentAtMillis == Date(timeIntervalSince1970: -Double(UnixMillisTimestampCodec.maximumMilliseconds) / 1000))
    }

    /// Text bound from a path, query or header is held at the same bound as the codecs hold
    /// a decoded count, and so is a push's `X-Signal-Timestamp`.
    @Test func millisecondDatesFromParameterTextAreHeldAtTheBound() {
        let bound = Date(timeIntervalSince1970: Double(UnixMillisTimestampCodec.maximumMilliseconds) / 1000)
        #expect(Date(parameterText: "9007199254740993") == bound)
        #expect(Date(parameterText: "-9007199254740993") == Date(timeIntervalSince1970: -Double(UnixMillisTimestampCodec.maximumMilliseconds) / 1000))
        #expect(Date(parameterText: "1700000000123") == Date(timeIntervalSince1970: 1_700_000_000.123))
        #expect(EventContext(headers: ["X-Signal-Timestamp": "9007199254740993"]).serverTimestamp == bound)
    }

    /// A map key or value of invalid UTF-8 names the map field, not its place in the entry.
    @Test func invalidUTF8InAMapKeyOrValueNamesTheMapField() {
        // ChatMessage.extras is field 7, {string: string}: key (entry field 1), then value (2).
        #expect(decodeError(ChatMessage.self, [0x3A, 0x05, 0x0A, 0x03, 0xC3, 0x28, 0x61]) == .invalidUTF8(field: 7))
        #expect(decodeError(ChatMessage.self, [0x3A, 0x05, 0x12, 0x03, 0xC3, 0x28, 0x61]) == .invalidUTF8(field: 7))
        // A string inside a message value names that message's field: Maps.fixed32ToPoint
        // (field 6) holding a Point whose label (field 3) is invalid.
        let entry: [UInt8] = [0x0D, 1, 0, 0, 0, 0x12, 0x04, 0x1A, 0x02, 0xC3, 0x28]
        #expect(decodeError(Maps.self, [0x32, UInt8(entry.count)] + entry) == .invalidUTF8(field: 3))
    }

    @Test func lengthPastTheEnd() {
        #expect(decodeError(Point.self, [0x1A, 0x05, 0x61]) == .lengthExceedsInput(length: 5, remaining: 1))
        // A huge length must be rejected before anything is allocated.
        let huge: [UInt8] = [0x1A, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F]
        #expect(decodeError(Point.self, huge) == .lengthExceedsInput(length: 4_294_967_295, remaining: 0))
        let packedHuge: [UInt8] = [0x12, 0xFF, 0xFF, 0xFF, 0xFF, 0x07, 0x01]
        #expect(decodeError(Lists.self, packedHuge) == .lengthExceedsInput(length: 2_147_483_647, remaining: 1))
    }

    @Test func aKnownFieldWithTheWrongWireTypeIsKeptAsUnknown() throws {
        // Field 1 of Point (sint32) sent as fixed32, field 3 (string) as a varint: unknown
        // fields, as protoc's C++ and Python keep them, written back after the known ones.
        let point = try Point(serializedBytes: [0x0D, 1, 2, 3, 4, 0x18, 0x01, 0x08, 0x02])
        #expect(point.x == 1)
        #expect(point.label == nil)
        #expect(Array(point.serializedData()) == [0x08, 0x02, 0x0D, 1, 2, 3, 4, 0x18, 0x01])
        // Still malformed: a wrong wire type whose value does not fit the input.
        #expect(decodeError(Point.self, [0x0D, 1, 2]) != nil)
    }

    @Test func invalidUTF8InString() {
        #expect(decodeError(Point.self, [0x1A, 0x02, 0xC3, 0x28]) == .invalidUTF8(field: 3))
        #expect(decodeError(Lists.self, [0x72, 0x01, 0xFF]) == .invalidUTF8(field: 14))
        // Surrogates encoded in UTF-8 are not valid UTF-8.
        #expect(decodeError(Point.self, [0x1A, 0x03, 0xED, 0xA0, 0x80]) == .invalidUTF8(field: 3))
    }

    @Test func invalidTags() {
        #expect(decodeError(Point.self, [0x0E, 0x00]) == .invalidWireType(6))
        #expect(decodeError(Point.self, [0x0F]) == .invalidWireType(7))
        #expect(decodeError(Point.self, [0x00, 0x00]) == .invalidFieldNumber(0))
        #expect(decodeError(Point.self, [0xF8, 0xFF, 0xFF, 0xFF, 0xFF, 0x01]) == .invalidFieldNumber(8_589_934_591))
    }

    @Test func mismatchedGroups() {
        #expect(decodeError(Point.self, [0x2C]) == .mismatchedGroup(field: 5))
        #expect(decodeError(Point.self, [0x2B, 0x34]) == .mismatchedGroup(field: 6))
        #expect(decodeError(Point.self, [0x2B, 0x08, 0x01]) == .truncated)
    }

    @Test func nestingPastTheLimit() {
        var bytes: [UInt8] = []
        for _ in 0..<200 { bytes = [0x12, UInt8(truncatingIfNeeded: bytes.count)] + bytes }
        // Lengths above 127 need two bytes; build properly instead.
        var nested = TreeNode(name: "leaf")
        for _ in 0..<150 { nested = TreeNode(parent: nested) }
        #expect(decodeError(TreeNode.self, nested.serializedBytes()) == .nestingTooDeep(limit: 100))
        #expect(decodeError(TreeNode.self, nested.serializedBytes(), options: WireDecodingOptions(maximumDepth: 200)) == nil)
        // Unknown groups nest too.
        let groups = Array(repeating: UInt8(0x2B), count: 500) + Array(repeating: UInt8(0x2C), count: 500)
        #expect(decodeError(Point.self, groups) == .nestingTooDeep(limit: 100))
        _ = bytes
    }

    /// The first list element looks ahead to reserve capacity; a bad tail must still fail cleanly.
    @Test func listLookAheadStopsAtMalformedInput() {
        #expect(decodeError(Lists.self, [0x72, 0x01, 0x61, 0x72, 0xFF]) == .truncated)
        #expect(decodeError(Lists.self, [0x72, 0x01, 0x61, 0x72, 0x05, 0x62]) == .lengthExceedsInput(length: 5, remaining: 1))
        #expect(decodeError(Lists.self, [0x72, 0x01, 0x61, 0x0F]) == .invalidWireType(7))
    }

    @Test func packedFixedLengthMustBeAMultiple() {
        #expect(decodeError(Lists.self, [0x42, 0x03, 1, 2, 3]) == .truncated)
    }

    @Test func truncatedFixedWidthValues() {
        #expect(decodeError(Scalars.self, [0x45, 1, 2]) == .truncated)
        #expect(decodeError(Scalars.self, [0x49, 1, 2, 3]) == .truncated)
    }

    /// Random corruption of valid encodings: every outcome is a value or a typed error.
    @Test func randomCorruptionNeverCrashes() {
        var random = RandomMessages(seed: 42)
        var failures = 0
        for iteration in 0..<3000 {
            var bytes = iteration % 2 == 0 ? random.composite().serializedBytes() : random.lists().serializedBytes()
            guard !bytes.isEmpty else { continue }
            for _ in 0..<Int.random(in: 1...4, using: &random.rng) {
                let position = Int.random(in: 0..<bytes.count, using: &random.rng)
                switch Int.random(in: 0..<4, using: &random.rng) {
                case 0: bytes[position] ^= UInt8(1 << Int.random(in: 0..<8, using: &random.rng))
                case 1: bytes.removeSubrange(position...)
                case 2: bytes.insert(UInt8.random(in: 0...255, using: &random.rng), at: position)
                default: bytes[position] = 0xFF
                }
                if bytes.isEmpty { break }
            }
            if decodeError(Composite.self, bytes) != nil { failures += 1 }
            _ = decodeError(Lists.self, bytes)
            _ = decodeError(WebSocketMessage.self, bytes)
        }
        // Most corruptions are caught; the rest decode to some value. Either way, no trap.
        #expect(failures > 100)
    }
}
