import Foundation
import SwitchboardWebSocket
import Testing

/// Many writers at once, with messages larger than the socket buffers, so writes go out in
/// parts and queue: frames must never interleave, and every message must arrive intact.
@Suite struct ConcurrentWriteTests {
    static func payload(sender: Int, sequence: Int, size: Int) -> Data {
        var bytes = [UInt8](repeating: 0, count: size)
        bytes[0] = UInt8(sender)
        bytes[1] = UInt8(sequence)
        for index in 2..<size { bytes[index] = UInt8(truncatingIfNeeded: index &* 31 &+ sender &* 7 &+ sequence) }
        return Data(bytes)
    }

    @Test func concurrentLargeWritesNeverInterleave() async throws {
        // The server echoes each message from its own task, so its writes race too.
        let server = try WebSocketServer(options: .init(configuration: .init(maximumMessageSize: 1 << 20))) { connection in
            await withTaskGroup(of: Void.self) { group in
                for await message in connection.messages {
                    group.addTask {
                        if case let .binary(data) = message { try? connection.sendWithoutWaiting(binary: data) }
                    }
                }
            }
        }
        defer { server.stop() }
        let client = try await WebSocketClient.connect(
            to: URL(string: "ws://127.0.0.1:\(server.port)/")!,
            options: .init(connection: .init(configuration: .init(maximumMessageSize: 1 << 20))))
        let senders = 12, perSender = 6, size = 300 * 1024
        let received = Task {
            var seen: [String] = []
            var corrupt = 0
            for await message in client.messages {
                guard case let .binary(data) = message, data.count == size else {
                    corrupt += 1
                    continue
                }
                let sender = Int(data[0]), sequence = Int(data[1])
                if data != Self.payload(sender: sender, sequence: sequence, size: size) { corrupt += 1 }
                seen.append("\(sender).\(sequence)")
                if seen.count + corrupt == senders * perSender { break }
            }
            return (seen, corrupt)
        }
        await withTaskGroup(of: Void.self) { group in
            for sender in 0..<senders {
                group.addTask {
                    for sequence in 0..<perSender {
                        let data = Self.payload(sender: sender, sequence: sequence, size: size)
                        // Mix the waiting and the background paths, with pings in between.
                        if (sender + sequence) % 2 == 0 {
                            try? await client.send(binary: data)
                        } else {
                            try? client.sendWithoutWaiting(binary: data)
                        }
                        try? client.pingWithoutWaiting([UInt8(sender)])
                    }
                }
            }
        }
        let watchdog = Task {
            try? await Task.sleep(for: .seconds(60))
            client.abort()
        }
        let (seen, corrupt) = await received.value
        watchdog.cancel()
        #expect(corrupt == 0)
        #expect(Set(seen).count == senders * perSender, "every message arrived once, intact")
        #expect(client.isOpen, "no frame was corrupted into a protocol error")
        await client.close()
    }
}
