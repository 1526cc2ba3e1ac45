import Foundation
import PeerSupport
import SwitchboardChat
import SwitchboardRuntime
import Testing

/// A hostile server cannot make the client hold more than its push budget by sending pushes
/// whose envelopes are small but decode large (many tiny header lines).
@Suite(.serialized, .timeLimit(.minutes(2)))
struct PushMemoryTests {
    /// The process's resident memory, from /proc (Linux).
    static func residentBytes() -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return nil }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return nil }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// A blocked push handler, released when the test ends.
    final class Gate: @unchecked Sendable {
        private let lock = NSLock()
        private var waiters: [CheckedContinuation<Void, Never>] = []
        private var isOpen = false
        func wait() async {
            await withCheckedContinuation { continuation in
                let now = lock.withLock { () -> Bool in
                    if isOpen { return true }
                    waiters.append(continuation)
                    return false
                }
                if now { continuation.resume() }
            }
        }
        func open() {
            for waiter in lock.withLock({ isOpen = true; defer { waiters = [] }; return waiters }) { waiter.resume() }
        }
    }

    @Test func headerHeavyPushesAreCountedByWhatTheyHold() async throws {
        let before = try #require(Self.residentBytes(), "needs /proc (Linux)")
        // 100 pushes of 80,000 three-byte header lines: 40 MB on the wire, about 800 MB decoded.
        let peer = try PythonPeer(script: "chat_header_flood_server.py", arguments: ["100", "80000"])
        let port = try #require(await peer.firstLineAsync().flatMap(Int.init), "the Python server did not start")
        let budget = 16 * 1024 * 1024
        let gate = Gate()
        let connection = try await ChatClient.connectAuthenticated(
            to: URL(string: "ws://127.0.0.1:\(port)/v1/websocket/")!, credentials: .init(username: "aci-1", deviceID: 1, password: "pw"),
            options: .init(keepalive: nil, maximumQueuedPushBytes: budget)
        ) { _ in
            await gate.wait()
            return .ok
        }
        let reason = await connection.waitUntilFinished()
        // Measured while the handler still holds the first push and the queue the rest.
        let held = try #require(Self.residentBytes()) - before
        gate.open()
        guard case .protocolError(code: 1008, _) = reason else {
            Issue.record("the flood must be cut off with 1008, got \(reason)")
            return
        }
        let margin = 48 * 1024 * 1024
        #expect(held < budget + margin, "resident memory grew by \(held / 1_048_576) MiB for a \(budget / 1_048_576) MiB budget")
        _ = await peer.stopAsync()
    }
}
