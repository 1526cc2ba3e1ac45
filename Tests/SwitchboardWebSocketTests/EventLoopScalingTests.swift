import Foundation
@testable import SwitchboardWebSocket
import Testing
#if canImport(Glibc)
import Glibc
#endif

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

    #if os(Linux)
    /// Counted in a process of its own: the tests running beside this one in the test process
    /// start threads too, which the count would take for the connections'.
    @Test func threeHundredConnectionsAddNoThreads() async {
        let result = await #expect(processExitsWith: .exitCode(0), observing: [\.standardErrorContent]) {
            // Bounded even if a connection hangs: the parent waits for this process.
            Thread.detachNewThread {
                sleep(150)
                EventLoopScalingTests.fail(9, "timed out")
            }
            guard let start = EventLoopScalingTests.threadCount() else { EventLoopScalingTests.fail(1, "needs /proc (Linux)") }
            let loopCount = 2
            let group = try EventLoopGroup(loopCount: loopCount, name: "scaling")
            // All from one address: the default share of 128 per address would refuse most.
            let server = try WebSocketServer(limits: .init(maximumConnectionsPerAddress: 1024), eventLoops: .group(group)) { connection in
                for await message in connection.messages { try? await connection.send(message) }
            }
            let url = URL(string: "ws://127.0.0.1:\(server.port)/")!
            var clients: [WebSocketConnection] = []
            for _ in 0..<300 {
                clients.append(try await WebSocketClient.connect(to: url, options: .init(eventLoops: .group(group))))
            }
            // Every connection works, both ends of it on the same two loops.
            let echoed = await withTaskGroup(of: Bool.self, returning: Int.self) { tasks in
                for (index, client) in clients.enumerated() {
                    tasks.addTask {
                        var messages = client.messages.makeAsyncIterator()
                        guard (try? await client.send(text: "hello \(index)")) != nil else { return false }
                        return await messages.next() == .text("hello \(index)")
                    }
                }
                var echoed = 0
                for await ok in tasks where ok { echoed += 1 }
                return echoed
            }
            guard let during = EventLoopScalingTests.threadCount() else { EventLoopScalingTests.fail(1, "needs /proc (Linux)") }
            server.stop()
            guard echoed == 300 else { EventLoopScalingTests.fail(2, "\(echoed) of 300 connections echoed") }
            // 600 sockets: a thread per connection would add 600. Allowed: the loops, Swift's
            // concurrency pool (at most one thread per processor) and a few of the runtime's own.
            let allowed = loopCount + ProcessInfo.processInfo.activeProcessorCount + 8
            guard during - start <= allowed else {
                EventLoopScalingTests.fail(3, "threads grew from \(start) to \(during), more than \(allowed)")
            }
            exit(0)
        }
        if let result, result.exitStatus != .exitCode(0) {
            Issue.record("the child process said: \(String(decoding: result.standardErrorContent, as: UTF8.self))")
        }
    }

    /// Ends an exit test's process with `code`, saying why on its standard error.
    static func fail(_ code: Int32, _ reason: String) -> Never {
        FileHandle.standardError.write(Data("\(reason)\n".utf8))
        exit(code)
    }
    #endif

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
        // Every socket released by the time shutdown returns, the rude one's included.
        #expect(server.connectionCount == 0)
        // The rude peer was told 1001 too, then cut off: its socket reaches its end (or a
        // reset) instead of waiting on.
        try rude.setReadDeadline(ContinuousClock.now + .seconds(5))
        var rudeReceived: [UInt8] = []
        var rudeEnded = false
        readUntilEnd: for _ in 0..<100 {
            do throws(NetworkError) {
                let bytes = try rude.read(maximum: 4096)
                if bytes.isEmpty {
                    rudeEnded = true
                    break readUntilEnd
                }
                rudeReceived += bytes
            } catch {
                // A reset ends it too; only the read deadline means it is still open.
                if case .io = error { rudeEnded = true }
                break readUntilEnd
            }
        }
        #expect(rudeEnded, "the rude peer's socket is still open after the shutdown")
        let goingAway = rudeReceived.indices.contains { index in
            index + 3 < rudeReceived.count && rudeReceived[index] == 0x88 && rudeReceived[index + 2] == 0x03 && rudeReceived[index + 3] == 0xE9
        }
        #expect(goingAway, "the rude peer was not sent a 1001 close frame: \(rudeReceived)")
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
