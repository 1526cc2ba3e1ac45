import Foundation
import SignalChat
import SignalChatPeerMessages
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

    /// Markdown rows; `false` in the second place when a decoder of ours took too long at
    /// 1 MiB. swift-protobuf is measured at the smaller sizes only: its time grows with the
    /// square of the merges (16 KiB to 64 KiB takes it 16 times longer), so 1 MiB would take minutes.
    static func run(schemaDirectory: URL, largest: Int = 1 << 20) throws -> (report: String, passed: Bool) {
        let schema = SchemaCompiler.compile(directory: schemaDirectory).schema!
        let roomEvent = schema.messageIndex(named: "RoomEvent")!
        let dynamic = DynamicBinaryCodec(schema: schema)
        var report = "| Input | Occurrences | Switchboard (generated) | Switchboard (schema at run time) | swift-protobuf |\n|---|---:|---:|---:|---:|\n"
        var passed = true
        for size in [16 << 10, 64 << 10, largest] {
            let (bytes, merges) = input(size: size)
            let data = Data(bytes)
            let generated = try time(merges) {
                guard case let .message(message)? = try RoomEvent(serializedBytes: bytes).event else { return -1 }
                return message.attachments.count
            }
            let atRunTime = try time(merges) {
                guard case let .single(.message(message))? = try dynamic.decode(data, as: roomEvent).fields[2],
                      case let .list(attachments)? = message.fields[6] else { return -1 }
                return attachments.count
            }
            let peer = size > 64 << 10 ? nil : try time(merges) {
                try Signal_Chat_RoomEvent(serializedBytes: bytes).message.attachments.count
            }
            func milliseconds(_ seconds: Double) -> String { String(format: "%.1f ms", seconds * 1000) }
            report += "| \(size >> 10) KiB | \(merges) | \(milliseconds(generated)) | \(milliseconds(atRunTime)) | \(peer.map(milliseconds) ?? "not run") |\n"
            if size == largest, max(generated, atRunTime) >= limitSeconds { passed = false }
        }
        return (report, passed)
    }
}
