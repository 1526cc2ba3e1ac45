import Foundation
import KitchenSink
import SwitchboardDynamic
import SwitchboardRuntime
import Testing

/// Regression tests for what the fuzzers (scripts/fuzz.sh) found.
///
/// A binary timestamp outside what google.protobuf.Timestamp allows once changed on each
/// round trip (found by the binary fuzzer, when timestamps were `Date`s). Now the binary form
/// carries it exactly, as protobuf's does and its conformance suite requires
/// (`TimestampProtoInputTooLarge.JsonOutput`: the parse succeeds), and only JSON refuses it.
@Suite struct TimestampRangeTests {
    /// Composite.createdAt (field 6) with these parts.
    static func composite(seconds: Int64, nanos: Int64) -> [UInt8] {
        func varint(_ value: UInt64) -> [UInt8] {
            var value = value, bytes: [UInt8] = []
            while value >= 0x80 { bytes.append(UInt8(value & 0x7F) | 0x80); value >>= 7 }
            return bytes + [UInt8(value)]
        }
        let inner = [0x08] + varint(UInt64(bitPattern: seconds)) + [0x10] + varint(UInt64(bitPattern: nanos))
        return [0x32] + varint(UInt64(inner.count)) + inner
    }

    @Test(arguments: [(0, 999_999_999 + 1), (0, -1), (1_700_000_000, 2_000_000_000), (253_402_300_800, 0), (-62_135_596_801, 0)] as [(Int64, Int64)])
    func outOfRangeSurvivesBinaryAndFailsAsJSON(seconds: Int64, nanos: Int64) throws {
        let bytes = Self.composite(seconds: seconds, nanos: nanos)
        let value = try Composite(serializedBytes: bytes)
        #expect(value.createdAt == ProtoTimestamp(seconds: seconds, nanos: Int32(nanos)))
        #expect(!value.createdAt.isValid)
        #expect(try Composite(serializedBytes: value.serializedBytes()) == value, "kept exactly, so a round trip changes nothing")
        #expect(throws: JSONEncodingError.timestampOutOfRange(secondsSince1970: seconds)) { try value.jsonString() }
        // The dynamic codec (call, mock-server) agrees: it reads the same bytes back unchanged.
        let schema = DynamicCodecAgreementTests.kitchenSink
        let type = try #require(schema.messageIndex(named: "Composite"))
        let codec = DynamicBinaryCodec(schema: schema)
        #expect(try Composite(serializedData: codec.encode(try codec.decode(Data(bytes), as: type))) == value)
    }

    /// The limits decode and round-trip exactly: a timestamp keeps every nanosecond.
    @Test func theLimitsThemselvesDecodeAndRoundTripExactly() throws {
        for (seconds, nanos) in [(253_402_300_799, 999_999_999), (-62_135_596_800, 0), (0, 1), (1_700_000_000, 123_456_789)] as [(Int64, Int64)] {
            let bytes = Self.composite(seconds: seconds, nanos: nanos)
            let value = try Composite(serializedBytes: bytes)
            #expect(value.createdAt == ProtoTimestamp(seconds: seconds, nanos: Int32(nanos)))
            #expect(try Composite(serializedBytes: value.serializedBytes()) == value)
        }
    }
}

/// Found by the dynamic fuzzer: a proto3 default read from the wire was kept as a value,
/// so a message differed from its own re-encoding (which leaves defaults out).
@Suite struct DynamicDefaultTests {
    @Test func aDefaultOnTheWireIsNoValue() throws {
        let schema = DynamicCodecAgreementTests.kitchenSink
        let scalars = try #require(schema.messageIndex(named: "Scalars"))
        let codec = DynamicBinaryCodec(schema: schema)
        // int64Value (field 3) = 0, then optionalInt64 (field 23) = 0, which keeps presence.
        let decoded = try codec.decode(Data([0x18, 0x00, 0xB8, 0x01, 0x00]), as: scalars)
        #expect(decoded.fields[3] == nil)
        #expect(decoded.fields[23] == .single(.int(0)))
        #expect(try codec.decode(codec.encode(decoded), as: scalars) == decoded)
    }

    /// An empty packed run (Lists.int64s, field 3) left an empty list that re-encoding drops.
    @Test func anEmptyPackedRunIsNoList() throws {
        let schema = DynamicCodecAgreementTests.kitchenSink
        let lists = try #require(schema.messageIndex(named: "Lists"))
        let codec = DynamicBinaryCodec(schema: schema)
        let decoded = try codec.decode(Data([0x1A, 0x00, 0x08, 0x01]), as: lists)
        #expect(decoded.fields[3] == nil)
        #expect(try codec.decode(codec.encode(decoded), as: lists) == decoded)
    }
}

/// Found by the dynamic fuzzer (2026-12-03): a FieldMask whose JSON had a comma followed by
/// a combining mark (`",\u{341}"`) read as one path holding the comma, which no writer can
/// write back (the dynamic codec's own JSON then did not decode). Paths split at every comma,
/// in both codecs.
@Suite struct FieldMaskCommaTests {
    @Test func aCommaBeforeACombiningMarkSplitsPaths() throws {
        let schema = DynamicCodecAgreementTests.kitchenSink
        let mask = try #require(schema.messageIndex(named: "google.protobuf.FieldMask"))
        let codec = DynamicJSONCodec(schema: schema)
        // The fuzzer's input, as the top-level JSON of a FieldMask.
        let input = Data(#""XXXXXXXXX:XUXXXXXXX1010203040XXXXXXXXX,[,,"#.utf8) + Data([0xCD, 0x81]) + Data(#"@@@@""#.utf8)
        let decoded = try codec.decode(input, as: mask)
        let written = try codec.encodeStrictly(decoded)
        #expect(try codec.decode(Data(written.utf8), as: mask) == decoded)
        let paths = try ProtoFieldMask(jsonUTF8Bytes: Array(input)).paths
        #expect(paths.count == 4)
        #expect(paths.dropFirst().elementsEqual(["[", "", "\u{341}@@@@"]))
    }
}
