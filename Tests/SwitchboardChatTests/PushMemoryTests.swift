import AllocationCounter
import Foundation
import PeerSupport
@testable import SwitchboardChat
import SwitchboardRuntime
import Testing

/// A hostile server cannot make the client hold more than its push budget by sending pushes
/// whose envelopes are small but decode large (many tiny header lines).
@Suite(.serialized, .timeLimit(.minutes(4)))
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

    /// The envelope the Python server sends for push `id` (see chat_header_flood_server.py).
    static func floodEnvelope(id: Int, headers: Int) -> Data {
        func varint(_ value: Int) -> [UInt8] {
            var value = UInt64(value), bytes: [UInt8] = []
            while value >= 0x80 { bytes.append(UInt8(value & 0x7F) | 0x80); value >>= 7 }
            return bytes + [UInt8(value)]
        }
        func field(_ number: Int, _ payload: [UInt8]) -> [UInt8] { varint(number << 3 | 2) + varint(payload.count) + payload }
        var request = field(1, Array("PUT".utf8)) + field(2, Array("/api/v1/message/\(id)".utf8)) + varint(4 << 3) + varint(id)
        let line = field(5, Array("a:b".utf8))
        request.reserveCapacity(request.count + line.count * headers)
        for _ in 0..<headers { request += line }
        return Data(varint(1 << 3) + varint(1) + field(2, request))
    }

    /// What holding one decoded push costs: the bytes still allocated after decoding the
    /// envelope as the connection does, into the request the push handler gets.
    static func heldBytesPerPush(headers: Int) throws -> Int {
        let bytes = floodEnvelope(id: 1, headers: headers)
        sb_allocation_counting_begin()
        defer { _ = sb_allocation_counting_end() }
        let envelope = try IncomingEnvelope(serializedData: bytes)
        let request = try #require(envelope.request)
        let held = ServerRequest(verb: request.verb ?? "", path: request.path ?? "", headers: request.headers, body: request.body)
        _ = sb_allocation_counting_end()
        withExtendedLifetime(held) {}
        return Int(sb_allocation_counting_retained())
    }

    @Test func headerHeavyPushesAreCountedByWhatTheyHold() async throws {
        let before = try #require(Self.residentBytes(), "needs /proc (Linux)")
        let headers = 80_000
        // 100 pushes of 80,000 three-byte header lines: 40 MB on the wire, about 800 MB decoded.
        let peer = try PythonPeer(script: "chat_header_flood_server.py", arguments: ["100", String(headers)])
        let port = try #require(await peer.firstLineAsync().flatMap(Int.init), "the Python server did not start")
        let budget = 32 * 1024 * 1024
        let gate = Gate()
        let dropped = Locked<[String]>([])
        let connection = try await ChatClient.connectAuthenticated(
            to: URL(string: "ws://127.0.0.1:\(port)/v1/websocket/")!, credentials: .init(username: "aci-1", deviceID: 1, password: "pw"),
            options: .init(keepalive: nil, diagnostics: { diagnostic in
                if case let .droppedPush(path) = diagnostic { dropped.withLock { $0.append(path) } }
            }, maximumQueuedPushBytes: budget)
        ) { _ in
            await gate.wait()
            return .ok
        }
        let reason = await connection.waitUntilFinished()
        // Measured while the handler still holds the first push and the queue the rest.
        let grown = try #require(Self.residentBytes()) - before
        gate.open()
        guard case .protocolError(code: 1008, _) = reason else {
            Issue.record("the flood must be cut off with 1008, got \(reason)")
            return
        }
        // What the client held, in allocated bytes: every push before the first refused one.
        let firstRefused = try #require(dropped.withLock { $0.first }.flatMap { Int($0.split(separator: "/").last ?? "") })
        // Nothing after the cut-off is decoded: no later push is even seen to be dropped.
        let droppedIDs = dropped.withLock { $0 }.compactMap { Int($0.split(separator: "/").last ?? "") }
        #expect(droppedIDs.allSatisfy { $0 <= firstRefused }, "pushes decoded after the cut-off: \(droppedIDs.filter { $0 > firstRefused })")
        let held = (firstRefused - 1) * (try Self.heldBytesPerPush(headers: headers))
        #expect(held <= budget + (try Self.heldBytesPerPush(headers: headers)),
                "\(firstRefused - 1) pushes held \(held / 1_048_576) MiB for a \(budget / 1_048_576) MiB budget")
        // And the process as a whole: other suites run alongside, hence the wide margin (the
        // count above is the exact check); without the rule the client grows by seven times
        // the budget.
        #expect(grown < 6 * budget, "resident memory grew by \(grown / 1_048_576) MiB")
        _ = await peer.stopAsync()
    }
}
