import Foundation
@testable import SwitchboardWebSocket
import Testing

/// Connections on event loops: threads stay fixed however many connections, a dedicated
/// client loop ends with its connection, and a server shuts down gracefully.
@Suite(.serialized, .timeLimit(.minutes(4)))
struct EventLoopScalingTests {
    /// The process's thread count, from /proc (Linux).
    static func threadCount() -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        return status.split(separator: "\n").first { $0.hasPrefix("Threads:") }
            .flatMap { Int($0.dropFirst("Threads:".count).trimmingCharacters(in: .whitespaces)) }
    }

    @Test func threeHundredConnectionsAddNoThreads() async throws {
        let group = try EventLoopGroup(loopCount: 2, name: "scaling")
        // All from one address: the default share of 128 per address would refuse most.
        let server = try WebSocketServer(limits: .init(maximumConnectionsPerAddress: 1024), eventLoops: .group(group)) { connection in
            for await message in connection.messages { try? await connection.send(message) }
        }
        // Warm up: the loops, the cooperative pool and the resolver exist before counting.
        let first = try await WebSocketClient.connect(to: URL(string: "ws://127.0.0.1:\(server.port)/")!, options: .init(eventLoops: .group(group)))
        let before = try #require(Self.threadCount(), "needs /proc (Linux)")
        var clients: [WebSocketConnection] = []
        for _ in 0..<300 {
            clients.append(try await WebSocketClient.connect(to: URL(string: "ws://127.0.0.1:\(server.port)/")!,
                                                             options: .init(eventLoops: .group(group))))
        }
        // Every connection works, both ends of it on the same two loops.
        await withTaskGroup(of: Bool.self) { tasks in
            for (index, client) in clients.enumerated() {
                tasks.addTask {
                    var messages = client.messages.makeAsyncIterator()
                    guard (try? await client.send(text: "hello \(index)")) != nil else { return false }
                    return await messages.next() == .text("hello \(index)")
                }
            }
            var echoed = 0
            for await ok in tasks where ok { echoed += 1 }
            #expect(echoed == 300)
        }
        let during = try #require(Self.threadCount())
        // 600 sockets, 2 loops: a thread per connection would have added 600. The bound
        // leaves room for threads the tests running beside this one start meanwhile.
        #expect(during - before < 100, "threads grew from \(before) to \(during)")
        for client in clients { await client.close() }
        await first.close()
        await server.shutdown(timeout: .seconds(5))
        await group.shutdown()
    }

    @Test func aDedicatedClientLoopEndsWithItsConnection() async throws {
        let server = try WebSocketServer { connection in
            for await message in connection.messages { try? await connection.send(message) }
        }
        defer { server.stop() }
        let client = try await WebSocketClient.connect(to: URL(string: "ws://127.0.0.1:\(server.port)/")!,
                                                       options: .init(eventLoops: .dedicated(loopCount: 1)))
        let loop = client.eventLoop
        #expect(!EventLoopGroup.shared.loops.contains { $0 === loop })
        try await client.send(text: "ping")
        var messages = client.messages.makeAsyncIterator()
        #expect(await messages.next() == .text("ping"))
        await client.close()
        // Its thread ends once the socket is gone: later work runs elsewhere.
        var ranOnLoop = true
        for _ in 0..<200 {
            let onLoop = await withCheckedContinuation { continuation in loop.execute { continuation.resume(returning: loop.inEventLoop) } }
            ranOnLoop = onLoop
            if !onLoop { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(!ranOnLoop)
    }

    @Test func shutdownClosesConnectionsGoingAwayThenEndsItsLoops() async throws {
        let served = ServedCount()
        let server = try WebSocketServer(eventLoops: .dedicated(loopCount: 2)) { connection in
            served.add()
            for await _ in connection.messages {}
        }
        let loops = server.eventLoopGroup.loops
        let polite = try await WebSocketClient.connect(to: URL(string: "ws://127.0.0.1:\(server.port)/")!)
        // A peer that never answers a close: shutdown drops it at the timeout.
        let rude = try TCPSocket.connect(host: "127.0.0.1", port: server.port, timeout: .seconds(5))
        try rude.write(Array("GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n".utf8))
        _ = try rude.read(maximum: 4096)
        // Served, not only admitted: a client can see its 101 before the server has handed
        // the connection to its handler, and shutdown closes only connections served by then.
        for _ in 0..<500 where served.value < 2 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(server.connectionCount == 2)
        #expect(served.value == 2)
        let started = ContinuousClock.now
        // Long enough for the polite close to finish on a loaded machine (3 s once was not,
        // beside CPU burners); the rude peer holds the shutdown until it runs out.
        await server.shutdown(timeout: .seconds(8))
        #expect(ContinuousClock.now - started < .seconds(14))
        let politeClose = await polite.waitUntilClosed()
        #expect(politeClose.code == .goingAway, "the polite client saw \(politeClose)")
        // The listener is gone and so are the server's own loops.
        #expect(throws: NetworkError.self) {
            _ = try TCPSocket.connect(host: "127.0.0.1", port: server.port, timeout: .seconds(1))
        }
        for loop in loops {
            let onLoop = await withCheckedContinuation { continuation in loop.execute { continuation.resume(returning: loop.inEventLoop) } }
            #expect(!onLoop)
        }
        rude.close()
    }
}

/// How many connections a server's handler has been given.
final class ServedCount: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func add() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}
