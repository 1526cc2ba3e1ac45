import Foundation
import PeerSupport
@testable import SwitchboardWebSocket
import Testing
#if canImport(Glibc)
import Glibc
#endif

#if os(Linux)
// Server-side TLS comes from the OpenSSL shim, which only Linux builds have.
/// TLS runs on the event loops too (OpenSSL over memory buffers, handshake and records on
/// the connection's loop): TLS connections add no threads, as plain ones add none
/// (`EventLoopScalingTests`).
@Suite(.serialized, .timeLimit(.minutes(4)))
struct TLSEventLoopThreadTests {
    /// The names of the process's threads, from /proc/self/task (Linux): an event loop's
    /// thread is named after its loop (`tls.server-0`, `sb.shared-0`...).
    static func threadNames() -> [String] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        // A thread may end between the listing and the read: it is left out.
        return tasks.compactMap { task in
            (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }.sorted()
    }

    /// Counted in a process of its own: the tests running beside this one in the test process
    /// start threads too, which the count would take for the connections'.
    @Test func aHundredTLSConnectionsAddNoThreads() async {
        let result = await #expect(processExitsWith: .exitCode(0), observing: [\.standardErrorContent]) {
            // Bounded even if a connection hangs: the parent waits for this process.
            Thread.detachNewThread {
                sleep(150)
                EventLoopScalingTests.fail(9, "timed out")
            }
            // The certificates first: openssl runs in a process of its own, started from a
            // thread of its own, and whatever threads that leaves are counted before the start.
            let certificate = await TestCertificates.file("good.pem")
            let key = await TestCertificates.file("good.key")
            let caPath = await TestCertificates.file("ca.pem")
            let ca = try String(contentsOfFile: caPath, encoding: .utf8)
            let context = try TLSServerContext(certificateChainPath: certificate, privateKeyPath: key)
            guard let start = EventLoopScalingTests.threadCount() else { EventLoopScalingTests.fail(1, "needs /proc (Linux)") }
            let connectionCount = 100
            let serverLoopCount = 2
            let clientLoopCount = 2
            // Explicit groups for both ends, so EventLoopGroup.shared never starts (checked
            // below by its threads' names): every loop in the process is one counted here.
            let serverGroup = try EventLoopGroup(loopCount: serverLoopCount, name: "tls.server")
            let clientGroup = try EventLoopGroup(loopCount: clientLoopCount, name: "tls.client")
            let onServerLoops = ServedCount()
            // All from one address: the default share of 128 per address is close to 100.
            let server = try WebSocketServer(limits: .init(maximumConnectionsPerAddress: 1024), tls: context,
                                             eventLoops: .group(serverGroup),
                                             connected: { connection in
                                                 if serverGroup.loops.contains(where: { $0 === connection.eventLoop }) { onServerLoops.add() }
                                             }) { connection in
                for await message in connection.messages { try? await connection.send(message) }
            }
            // An address literal: no name to resolve on a thread of the global pool. The test
            // certificate names 127.0.0.1. A full handshake each (no resumption): every
            // connection does its own TLS work on its loops.
            let url = URL(string: "wss://127.0.0.1:\(server.port)/")!
            let options = WebSocketClient.Options(connectTimeout: .seconds(30),
                                                  tls: TLSOptions(trustedCertificatesPEM: ca, resumesSessions: false),
                                                  eventLoops: .group(clientGroup))
            var clients: [WebSocketConnection] = []
            for _ in 0..<connectionCount {
                clients.append(try await WebSocketClient.connect(to: url, options: options))
            }
            // Every connection works, over TLS, the server's ends on its two loops and the
            // clients' on theirs.
            let echoed = await withTaskGroup(of: Bool.self, returning: Int.self) { tasks in
                for (index, client) in clients.enumerated() {
                    tasks.addTask {
                        var messages = client.messages.makeAsyncIterator()
                        guard (try? await client.send(text: "hello \(index) over TLS")) != nil else { return false }
                        return await messages.next() == .text("hello \(index) over TLS")
                    }
                }
                var echoed = 0
                for await ok in tasks where ok { echoed += 1 }
                return echoed
            }
            guard let during = EventLoopScalingTests.threadCount() else { EventLoopScalingTests.fail(1, "needs /proc (Linux)") }
            let names = TLSEventLoopThreadTests.threadNames()
            guard echoed == connectionCount else {
                EventLoopScalingTests.fail(2, "\(echoed) of \(connectionCount) TLS connections echoed")
            }
            let clientsOnTheirLoops = clients.filter { client in clientGroup.loops.contains { $0 === client.eventLoop } }.count
            guard clientsOnTheirLoops == connectionCount, onServerLoops.value == connectionCount else {
                EventLoopScalingTests.fail(4, "\(clientsOnTheirLoops) clients on the client group, \(onServerLoops.value) server connections on the server group, of \(connectionCount)")
            }
            // The shared loops would be threads the allowance below does not know about.
            guard !names.contains(where: { $0.hasPrefix("sb.shared-") }) else {
                EventLoopScalingTests.fail(5, "EventLoopGroup.shared started; threads: \(names)")
            }
            // 200 TLS sockets: a thread per connection (or per TLS session) would add 100 to
            // 200. Allowed: the four loops, Swift's concurrency pool (at most one thread per
            // processor; the tasks above and the handlers run there) and a few of the
            // runtime's own (Dispatch and Foundation helpers started on first use), the same
            // slack as for plain connections.
            let allowed = serverLoopCount + clientLoopCount + ProcessInfo.processInfo.activeProcessorCount + 8
            guard during - start <= allowed else {
                EventLoopScalingTests.fail(3, "threads grew from \(start) to \(during), more than \(allowed); threads: \(names)")
            }
            // Stop everything: the clients close, the server shuts down, then both groups.
            await withTaskGroup(of: Void.self) { tasks in
                for client in clients {
                    tasks.addTask { _ = await client.close() }
                }
            }
            await server.shutdown(timeout: .seconds(5))
            await serverGroup.shutdown()
            await clientGroup.shutdown()
            // Their threads end soon after.
            var loopsLeft: [String] = []
            for _ in 0..<100 {
                loopsLeft = TLSEventLoopThreadTests.threadNames().filter { $0.hasPrefix("tls.server-") || $0.hasPrefix("tls.client-") }
                if loopsLeft.isEmpty { break }
                try await Task.sleep(for: .milliseconds(100))
            }
            guard loopsLeft.isEmpty else {
                EventLoopScalingTests.fail(6, "loop threads still running after their groups shut down: \(loopsLeft)")
            }
            exit(0)
        }
        if let result, result.exitStatus != .exitCode(0) {
            Issue.record("the child process said: \(String(decoding: result.standardErrorContent, as: UTF8.self))")
        }
    }
}
#endif
