import Foundation
import SignalChat
import SwiftProtobuf
import SwitchboardDynamic
import SwitchboardRuntime
import SwitchboardSchema

/// Hostile input for the merge rule: 1 MB of one oneof message member (RoomEvent.message)
/// repeated, each occurrence adding an attachment to what the ones before built. Decoding
/// must stay linear: each decoder gets one second at most, or the benchmark fails.
enum RepeatedMerges {
    static let limitSeconds = 1.0

    static func field(_ number: Int, _ payload: [UInt8]) -> [UInt8] {
        [UInt8(number << 3 | 2)] + varint(payload.count) + payload
    }

    static func varint(_ value: Int) -> [UInt8] {
        var value = UInt64(value), bytes: [UInt8] = []
        while value >= 0x80 { bytes.append(UInt8(value & 0x7F) | 0x80); value >>= 7 }
        return bytes + [UInt8(value)]
    }

    /// About `size` bytes of RoomEvent.message occurrences, each with one attachment.
    static func input(size: Int) -> (bytes: [UInt8], merges: Int) {
        let one = field(2, field(6, field(1, Array("a".utf8))))
        var bytes: [UInt8] = []
        bytes.reserveCapacity(size + one.count)
        var merges = 0
        while bytes.count < size {
            bytes += one
            merges += 1
        }
        return (bytes, merges)
    }

    /// Seconds for one decode of `bytes` by `decode`, which returns the attachments it saw.
    static func time(_ expected: Int, _ decode: () throws -> Int) throws -> Double {
        let start = ContinuousClock.now
        let count = try decode()
        let elapsed = ContinuousClock.now - start
        precondition(count == expected, "decoded \(count) attachments, expected \(expected)")
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    /// Markdown rows; `false` in the second place when a decoder took too long.
    static func run(schemaDirectory: URL) throws -> (report: String, passed: Bool) {
        let (bytes, merges) = input(size: 1 << 20)
        let data = Data(bytes)
        let schema = SchemaCompiler.compile(directory: schemaDirectory).schema!
        let roomEvent = schema.messageIndex(named: "RoomEvent")!
        let dynamic = DynamicBinaryCodec(schema: schema)
        let results: [(String, Double)] = [
            ("Switchboard (generated)", try time(merges) {
                guard case let .message(message)? = try RoomEvent(serializedBytes: bytes).event else { return -1 }
                return message.attachments.count
            }),
            ("Switchboard (schema at run time)", try time(merges) {
                guard case let .single(.message(message))? = try dynamic.decode(data, as: roomEvent).fields[2],
                      case let .list(attachments)? = message.fields[6] else { return -1 }
                return attachments.count
            }),
            ("swift-protobuf", try time(merges) {
                try Signal_Chat_RoomEvent(serializedBytes: bytes).message.attachments.count
            }),
        ]
        var report = "| Decoder | 1 MiB of repeated merges (\(merges) occurrences) | Limit |\n|---|---:|---:|\n"
        var passed = true
        for (name, seconds) in results {
            report += "| \(name) | \(String(format: "%.1f ms", seconds * 1000)) | \(String(format: "%.0f ms", limitSeconds * 1000)) |\n"
            // The peer is reported, not held to our limit.
            if name.hasPrefix("Switchboard"), seconds >= limitSeconds { passed = false }
        }
        return (report, passed)
    }
}
