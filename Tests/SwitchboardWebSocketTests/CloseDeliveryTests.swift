import Foundation
import PeerSupport
import SwitchboardWebSocket
import Testing

/// Closing never loses what the application already handed over, and never waits without end
/// for a peer that does not answer.
@Suite(.serialized, .timeLimit(.minutes(3))) struct CloseDeliveryTests {
    static let chunk = Data(repeating: 9, count: 64 * 1024)

    /// Starts the Python peer that takes nothing for `delay` seconds, and connects to it.
    private func connectToLateReader(delay: Double, options: WebSocketConnection.Options) async throws -> (PythonPeer, WebSocketConnection) {
        let peer = try PythonPeer(script: "ws_late_reader_server.py", arguments: [String(delay)])
        let port = try #require(await peer.firstLineAsync().flatMap(Int.init), "the Python server did not start")
        let client = try await WebSocketClient.connect(to: URL(string: "ws://127.0.0.1:\(port)/")!, options: .init(connection: options))
        return (peer, client)
    }

    /// Sends nobody awaits fill the write queue past its limit while the peer is not reading;
    /// the close frame then waits behind them instead of cutting them off.
    @Test func closingRightAfterQueuedSendsLosesNothing() async throws {
        // The peer must still be asleep when the sends run out of room, even on a loaded
        // machine; the close then waits behind them for longer than it sleeps.
        let (peer, client) = try await connectToLateReader(delay: 4, options: .init(closeTimeout: .seconds(20), maximumQueuedBytes: 1))
        var accepted = 0
        // Accepted until TCP backs up and the queue holds a remainder: then they are refused.
        for _ in 0..<2000 {
            do throws(WebSocketError) {
                try client.sendWithoutWaiting(binary: Self.chunk)
                accepted += 1
            } catch {
                break
            }
        }
        #expect(accepted < 2000, "the writes never queued, so this proves nothing")
        let info = await client.close(code: .normalClosure)
        #expect(info.code == .normalClosure && info.wasClean, "\(info)")
        let report = await peer.finishAsync(timeout: 30).output
        #expect(report.contains("received \(accepted) \(accepted * Self.chunk.count) close 1000"), "\(accepted) accepted; the peer says: \(report)")
    }

    /// Awaited sends wait their turn however much is queued: the callers bound the queue.
    @Test func awaitedSendsFromManyTasksAllGoThroughASlowPeer() async throws {
        let (peer, client) = try await connectToLateReader(delay: 2, options: .init(maximumQueuedBytes: 1))
        let senders = 16, each = 4
        let failures = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<senders {
                group.addTask {
                    var failed = 0
                    for _ in 0..<each {
                        do throws(WebSocketError) { try await client.send(binary: Self.chunk) } catch { failed += 1 }
                    }
                    return failed
                }
            }
            return await group.reduce(0, +)
        }
        #expect(failures == 0)
        let info = await client.close(code: .normalClosure)
        #expect(info.code == .normalClosure && info.wasClean, "\(info)")
        let report = await peer.finishAsync(timeout: 30).output
        #expect(report.contains("received \(senders * each) \(senders * each * Self.chunk.count) close 1000"), "the peer says: \(report)")
    }

    /// A peer that never answers our close: `close` gives up at the close timeout and reports
    /// an unclean end, rather than waiting for ever.
    @Test func closeGivesUpOnAPeerThatNeverAnswers() async throws {
        let server = try NonReadingServer()
        defer { server.stop() }
        let client = try await WebSocketClient.connect(to: server.url, options: .init(connection: .init(closeTimeout: .milliseconds(300))))
        let start = ContinuousClock.now
        let info = await client.close(code: .normalClosure)
        let waited = ContinuousClock.now - start
        #expect(info.code == .abnormalClosure && !info.wasClean && info.reason.contains("timed out"), "\(info)")
        #expect(waited >= .milliseconds(250), "gave up before the timeout: \(waited)")
        #expect(waited < .seconds(10), "kept waiting past the timeout: \(waited)")
        #expect(!client.isOpen)
    }
}
