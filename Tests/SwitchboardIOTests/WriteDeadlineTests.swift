import Foundation
import SwitchboardIO
import Testing

/// A blocking write to a peer that stops reading ends at its deadline, as reads do.
@Suite(.timeLimit(.minutes(1)))
struct WriteDeadlineTests {
    @Test func aWriteToAPeerThatNeverReadsTimesOut() throws {
        let listener = try TCPListener()
        defer { listener.close() }
        let client = try TCPSocket.connect(host: "127.0.0.1", port: listener.port, timeout: .seconds(10))
        defer { client.close() }
        // Accepted and never read: the kernel's buffers fill, then the write blocks.
        let accepted = try #require(listener.accept())
        defer { accepted.close() }
        try client.setWriteDeadline(.now.advanced(by: .milliseconds(500)))
        let chunk = [UInt8](repeating: 7, count: 1 << 20)
        var outcome: NetworkError?
        for _ in 0..<256 where outcome == nil {
            do {
                try client.write(chunk)
            } catch {
                outcome = error
            }
        }
        guard case .timeout? = outcome else {
            Issue.record("expected a timeout, got \(String(describing: outcome))")
            return
        }
    }
}
