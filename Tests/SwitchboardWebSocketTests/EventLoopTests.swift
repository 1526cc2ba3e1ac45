import Foundation
@testable import SwitchboardIO
@testable import SwitchboardWebSocket
import Testing

/// The reader thread as a task executor: pinned tasks continue there, jobs from other
/// threads never wait for an idle loop, tasks that never suspend for long cannot starve the
/// socket, and tasks outlive the connection.
@Suite struct EventLoopTests {
    /// An echo server whose connections answer on the reader thread.
    static func echoServer() throws -> WebSocketServer {
        try WebSocketServer(options: .init(deliversMessagesDirectly: true)) { connection in
            connection.deliverMessages { message in
                if case let .binary(data) = message { try? connection.sendWithoutWaiting(binary: data) }
            }
            for await _ in connection.messages {}
            await connection.close()
        }
    }

    /// `body`'s result, or `nil` if it has not finished within `seconds`; never hangs.
    static func within<T: Sendable>(_ seconds: Double, _ body: @escaping @Sendable () async -> T) async -> T? {
        let lock = NSLock()
        nonisolated(unsafe) var resumed = false
        return await withCheckedContinuation { (continuation: CheckedContinuation<T?, Never>) in
            @Sendable func offer(_ value: T?) {
                let first = lock.withLock { () -> Bool in
                    defer { resumed = true }
                    return !resumed
                }
                if first { continuation.resume(returning: value) }
            }
            Task { offer(await body()) }
            DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { offer(nil) }
        }
    }

    /// Echo round trips, pinned, until one resumes on the reader thread (a task that starts
    /// while the thread waits on the socket begins on the pool, and an echo that beats the
    /// task to its `await` is taken from the buffer there); `false` if none does in 100.
    static func landOnLoop(_ client: WebSocketConnection, _ messages: inout WebSocketMessages.Iterator) async -> Bool {
        for _ in 0..<100 {
            guard (try? await client.send(binary: Data([255]))) != nil, await messages.next() != nil else { return false }
            if client.eventLoop.isCurrent { return true }
        }
        return false
    }

    @Test func pinnedTaskContinuesOnTheReaderThreadInOrder() async throws {
        let server = try Self.echoServer()
        defer { server.stop() }
        let client = try await WebSocketClient.connect(to: URL(string: "ws://127.0.0.1:\(server.port)/")!)
        let outcome = await Self.within(20) {
            await withTaskExecutorPreference(client.eventLoop) { () -> (echoed: Int, onLoop: Int) in
                var messages = client.messages.makeAsyncIterator()
                guard await Self.landOnLoop(client, &messages) else { return (0, 0) }
                var echoed = 0, onLoop = 0
                for index in 0..<300 {
                    let payload = Data([UInt8(index % 256), UInt8(index / 256), 7])
                    guard (try? await client.send(binary: payload)) != nil, let message = await messages.next() else { break }
                    if message == .binary(payload) { echoed += 1 }
                    if client.eventLoop.isCurrent { onLoop += 1 }
                }
                return (echoed, onLoop)
            }
        }
        await client.close()
        #expect(outcome?.echoed == 300)
        // Once there, every answer resumes the task on the thread that read it: the thread
        // cannot read the next echo while the task runs, so none is ever waiting in a buffer.
        #expect(outcome?.onLoop == 300)
    }

    @Test func jobsFromOtherThreadsNeverWaitForAnIdleLoop() async throws {
        let server = try Self.echoServer()
        defer { server.stop() }
        let client = try await WebSocketClient.connect(to: URL(string: "ws://127.0.0.1:\(server.port)/")!)
        // No traffic: the reader thread is blocked on the socket, so these run on the pool.
        let finished = await Self.within(20) {
            await withTaskGroup(of: Int.self) { group in
                for index in 0..<500 {
                    group.addTask { await client.eventLoop.startTask { index }.value }
                }
                var seen = Set<Int>()
                for await index in group { seen.insert(index) }
                return seen.count
            }
        }
        await client.close()
        #expect(finished == 500)
    }

    @Test func aTaskThatNeverSuspendsForLongCannotStarveTheSocket() async throws {
        let server = try Self.echoServer()
        defer { server.stop() }
        let client = try await WebSocketClient.connect(to: URL(string: "ws://127.0.0.1:\(server.port)/")!)
        let stop = ManagedFlag()
        // Started from the reader thread while it runs jobs, so the spinner queues there; it
        // is always ready to run again, so the loop always has a job queued.
        let setup = await Self.within(20) {
            await withTaskExecutorPreference(client.eventLoop) { () -> (Bool, Task<Int, Never>) in
                var messages = client.messages.makeAsyncIterator()
                let landed = await Self.landOnLoop(client, &messages)
                let spinner = client.eventLoop.startTask { () -> Int in
                    var turnsOnLoop = 0
                    let deadline = ContinuousClock.now + .seconds(60)
                    while !stop.isSet, ContinuousClock.now < deadline {
                        await Task.yield()
                        if client.eventLoop.isCurrent { turnsOnLoop += 1 }
                    }
                    return turnsOnLoop
                }
                return (landed && client.eventLoop.isCurrent, spinner)
            }
        }
        guard let (startedOnLoop, spinner) = setup else {
            Issue.record("no echo within 20 s")
            stop.set()
            await client.close()
            return
        }
        #expect(startedOnLoop)
        // Well inside the spinner's 60 s: a starved socket would not answer in time (a loaded
        // machine, with CPU burners beside the suite, once needed more than 10 s for the 50).
        let echoed = await Self.within(40) { () -> Int in
            var messages = client.messages.makeAsyncIterator()
            var count = 0
            for index in 0..<50 {
                let payload = Data([UInt8(index)])
                guard (try? await client.send(binary: payload)) != nil, await messages.next() == .binary(payload) else { break }
                count += 1
            }
            return count
        }
        stop.set()
        let turnsOnLoop = await spinner.value
        await client.close()
        #expect(echoed == 50)
        // The spinner did hold the reader thread (an echo's wake-up catches it there).
        #expect(turnsOnLoop > 0)
    }

    @Test func pinnedTasksKeepRunningAfterTheConnectionEnds() async throws {
        let server = try Self.echoServer()
        defer { server.stop() }
        let client = try await WebSocketClient.connect(to: URL(string: "ws://127.0.0.1:\(server.port)/")!)
        let loop = client.eventLoop
        let result = await Self.within(20) {
            await withTaskExecutorPreference(loop) { () -> (closed: Bool, stillOnLoop: Bool, afterSleep: Bool) in
                let info = await client.close()
                // The loop serves other connections and outlives this one: the task stays on it.
                try? await Task.sleep(for: .milliseconds(20))
                let spawned = await loop.startTask { 41 + 1 }.value
                return (info.code == .normalClosure, loop.isCurrent, spawned == 42)
            }
        }
        #expect(result?.closed == true)
        #expect(result?.stillOnLoop == true)
        #expect(result?.afterSleep == true)
    }
}

/// A blocking stream (as Network.framework's TLS is on Apple platforms) carried on a loop.
@Suite struct PumpedChannelTests {
    @Test func aBlockingStreamPumpedOntoALoopCarriesAConnection() async throws {
        let server = try EventLoopTests.echoServer()
        defer { server.stop() }
        let socket = try TCPSocket.connect(host: "127.0.0.1", port: server.port, timeout: .seconds(5))
        let channel = PumpedChannel(stream: socket, loop: EventLoopGroup.shared.next())
        let request = WebSocketHandshake.ClientRequest(host: "127.0.0.1", port: server.port, path: "/", isSecure: false, headers: [], subprotocols: [])
        let connection = try await WebSocketClient.handshake(channel, parked: nil, request: request, deadline: .now + .seconds(5),
                                                             options: .init(), path: "/")
        var messages = connection.messages.makeAsyncIterator()
        var echoed = 0
        for index in 0..<200 {
            let payload = Data(repeating: UInt8(index % 256), count: index * 37)
            try await connection.send(binary: payload)
            if await messages.next() == .binary(payload) { echoed += 1 }
        }
        #expect(echoed == 200)
        let info = await connection.close()
        #expect(info.code == .normalClosure)
    }
}
