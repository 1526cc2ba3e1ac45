import Foundation
import SwitchboardWebSocket

/// Completes the WebSocket upgrade, then never reads again: a peer whose application hung,
/// or, with `floodsPings`, one that keeps sending pings without ever reading the pongs.
final class NonReadingServer: @unchecked Sendable {
    private let listener: TCPListener
    private let lock = NSLock()
    private var held: [TCPSocket] = []

    init(floodsPings: Bool = false) throws {
        listener = try TCPListener()
        Thread.detachNewThread { [listener, self] in
            while let socket = listener.accept() {
                lock.withLock { held.append(socket) }
                var received: [UInt8] = []
                while let chunk = try? socket.read(maximum: 4096), !chunk.isEmpty {
                    received += chunk
                    if let (head, _) = try? HTTPHead.parse(received), let request = try? WebSocketHandshake.parseUpgrade(head) {
                        try? socket.write(WebSocketHandshake.acceptResponse(for: request))
                        if floodsPings { Self.flood(socket) }
                        break
                    }
                }
            }
        }
    }

    /// Pings with 125-byte payloads until the socket fails, bounded in count.
    private static func flood(_ socket: TCPSocket) {
        let ping = FrameWriter.frame(opcode: .ping, payload: [UInt8](repeating: 1, count: 125), fin: true, mask: false)
        let batch = Array([[UInt8]](repeating: ping, count: 512).joined())
        for _ in 0..<20_000 {
            guard (try? socket.write(batch)) != nil else { return }
        }
    }

    var url: URL { URL(string: "ws://127.0.0.1:\(listener.port)/")! }

    func stop() {
        listener.close()
        for socket in lock.withLock({ held }) { socket.close() }
    }
}
