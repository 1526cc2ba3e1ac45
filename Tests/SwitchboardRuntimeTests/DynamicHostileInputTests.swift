import Foundation
import SwitchboardDynamic
import SwitchboardRuntime
import SwitchboardSchema
import Testing

/// Bytes that make the schema-at-run-time codec (`call`, `mock-server`, `listen`) work
/// without bound: each stays bounded.
@Suite struct DynamicHostileInputTests {
    static let schema = DynamicCodecAgreementTests.kitchenSink

    /// An `Any` packing an `Any` packing ... `levels` deep: about 50 bytes a level.
    static func nestedAny(levels: Int) -> Data {
        let url = Array("type.googleapis.com/google.protobuf.Any".utf8)
        var bytes: [UInt8] = []
        for _ in 0..<levels {
            var outer: [UInt8] = [0x0A]
            outer += varint(url.count) + url
            outer += [0x12] + varint(bytes.count) + bytes
            bytes = outer
        }
        return Data(bytes)
    }

    static func varint(_ value: Int) -> [UInt8] {
        var value = UInt64(value), out: [UInt8] = []
        while value >= 0x80 {
            out.append(UInt8(value & 0x7F) | 0x80)
            value >>= 7
        }
        return out + [UInt8(value)]
    }

    @Test func deeplyNestedAnyIsWrittenToTheDepthLimitThenAsRawBytes() throws {
        let any = try #require(Self.schema.messageIndex(named: "google.protobuf.Any"))
        // 3,000 levels: before, writing it as JSON recursed once per level (and a
        // megabyte of input went tens of thousands deep, past the stack).
        let message = try DynamicBinaryCodec(schema: Self.schema).decode(Self.nestedAny(levels: 3000), as: any)
        let codec = DynamicJSONCodec(schema: Self.schema)
        let json = codec.encode(message, prettyPrinted: false)
        let unpacked = json.components(separatedBy: "\"@type\"").count - 1
        #expect(unpacked > 10 && unpacked <= 2 * codec.maximumDepth + 1, "\(unpacked) levels unpacked")
        // The rest is there, as the packed bytes.
        #expect(json.contains("\"value\":\""))
    }

    @Test func aMessageMergedManyTimesKeepsEveryUnknownFieldOnce() throws {
        // A plain message field (not a well-known type, which has a form of its own).
        func isPlainMessage(_ field: FieldDefinition) -> Bool {
            guard case let .singular(.message(index)) = field.shape else { return false }
            return !Self.schema.messages[index].fullName.hasPrefix("google.protobuf.")
        }
        let holder = try #require(Self.schema.messages.firstIndex { $0.fields.contains(where: isPlainMessage) })
        let field = try #require(Self.schema.messages[holder].fields.first(where: isPlainMessage))
        // The same message field 5,000 times, each carrying one unknown field (number 999):
        // merged, they keep 5,000 unknown fields, appended in place.
        let tag = Self.varint(field.number << 3 | 2)
        let unknown: [UInt8] = Self.varint(999 << 3) + [1]
        var bytes: [UInt8] = []
        for _ in 0..<5000 { bytes += tag + Self.varint(unknown.count) + unknown }
        let message = try DynamicBinaryCodec(schema: Self.schema).decode(Data(bytes), as: holder)
        guard case let .single(.message(inner))? = message.fields[field.number] else {
            Issue.record("the field is one merged message")
            return
        }
        #expect(inner.unknownFields.count == 5000 * unknown.count)
    }
}
