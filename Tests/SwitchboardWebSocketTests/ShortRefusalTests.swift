import Foundation
import SwitchboardIO
import SwitchboardWebSocket
import Testing

/// A refusal whose body never arrives in full (the server says Content-Length 1000, sends 10
/// bytes and stalls) is still the refusal at the deadline, with its status, headers and the
/// body that came; it was reported as a timeout, which a session retries where a 429 or 403
/// says otherwise (from the client review).
@Suite(.timeLimit(.minutes(1)))
struct ShortRefusalTests {
    /// The deadline leaves a loaded machine time to start the server's thread (1 s once failed
    /// under the full parallel run).
    @Test func aRefusalWithAShortBodyIsStillARefusal() async throws {
        let listener = try TCPListener()
        defer { listener.close() }
        let held = Thread.detachNewThreadHolding(listener)
        defer { held.close() }
        do {
            _ = try await WebSocketClient.connect(to: URL(string: "ws://127.0.0.1:\(listener.port)/")!, options: .init(connectTimeout: .seconds(3)))
            Issue.record("the upgrade must fail")
        } catch let .upgradeRejected(status, headers, body) {
            #expect(status == 429)
            #expect(headers.value(named: "Retry-After") == "30")
            #expect(body == Array("slow down!".utf8))
        } catch {
            Issue.record("expected the refusal, got \(error)")
        }
    }
}

/// Accepts one connection, reads the request, answers with a refusal cut short, and holds
/// the socket until closed.
private final class ShortRefusalServer: @unchecked Sendable {
    private let lock = NSLock()
    private var socket: TCPSocket?

    func close() { lock.withLock { socket }?.close() }

    func serve(_ listener: TCPListener) {
        guard let socket = listener.accept() else { return }
        lock.withLock { self.socket = socket }
        var received: [UInt8] = []
        while let chunk = try? socket.read(maximum: 4096), !chunk.isEmpty {
            received += chunk
            if (try? HTTPHead.parse(received)) != nil { break }
        }
        try? socket.write(Array("HTTP/1.1 429 Too Many Requests\r\nRetry-After: 30\r\nContent-Length: 1000\r\n\r\nslow down!".utf8))
    }
}

private extension Thread {
    static func detachNewThreadHolding(_ listener: TCPListener) -> ShortRefusalServer {
        let server = ShortRefusalServer()
        Thread.detachNewThread { server.serve(listener) }
        return server
    }
}
