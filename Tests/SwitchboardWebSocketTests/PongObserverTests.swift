import Foundation
@testable import SwitchboardWebSocket
import Testing

/// A pong reaches its observer on the connection's event loop, with no task in between: a
/// keepalive deadline that runs on the loop then sees every answer that arrived in time.
@Suite(.timeLimit(.minutes(3))) struct PongObserverTests {
    @Test func pongsReachTheObserverOnTheLoopAndTheStreamToo() async throws {
        let server = try WebSocketServer { connection in
            for await _ in connection.messages {}
        }
        defer { server.stop() }
        let client = try await WebSocketClient.connect(to: URL(string: "ws://127.0.0.1:\(server.port)/")!)
        let seen = Seen()
        client.observePongs { payload in seen.add(payload, onLoop: client.eventLoop.isCurrent) }
        try await client.ping(Array("one".utf8))
        try await client.ping(Array("two".utf8))
        var pongs = client.pongs.makeAsyncIterator()
        #expect(await pongs.next() == Array("one".utf8))
        #expect(await pongs.next() == Array("two".utf8))
        // The observer ran before each pong was yielded to the stream.
        let observed = seen.all
        #expect(observed.map(\.payload) == [Array("one".utf8), Array("two".utf8)])
        #expect(observed.allSatisfy { $0.onLoop })
        await client.close()
    }
}

/// What the observer saw, from the loop's thread.
private final class Seen: @unchecked Sendable {
    private let lock = NSLock()
    private var entries: [(payload: [UInt8], onLoop: Bool)] = []
    func add(_ payload: [UInt8], onLoop: Bool) { lock.withLock { entries.append((payload, onLoop)) } }
    var all: [(payload: [UInt8], onLoop: Bool)] { lock.withLock { entries } }
}
