import Foundation
import PeerSupport
import SignalChat
@testable import SwitchboardChat
import SwitchboardRuntime
import SwitchboardWebSocket
import Testing

/// Peers that misbehave: they answer the upgrade with nonsense, or stop reading.
@Suite(.serialized, .timeLimit(.minutes(3))) struct HostilePeerTests {
    /// Answers every connection with `response` and closes.
    final class CannedHTTPServer: @unchecked Sendable {
        let listener: TCPListener
        init(response: String) throws {
            listener = try TCPListener()
            Thread.detachNewThread { [listener] in
                while let socket = listener.accept() {
                    _ = try? socket.read(maximum: 4096)
                    try? socket.write(Array(response.utf8))
                    socket.close()
                }
            }
        }
        var url: URL { URL(string: "ws://127.0.0.1:\(listener.port)/v1/websocket/")! }
    }

    @Test(arguments: ["-1", "-9223372036854775808", "99999999999999999999", "abc"])
    func aNonsenseContentLengthOnARefusalIsStillATypedRefusal(length: String) async throws {
        let server = try CannedHTTPServer(response: "HTTP/1.1 403 Forbidden\r\nContent-Length: \(length)\r\n\r\n")
        defer { server.listener.close() }
        do {
            _ = try await ChatClient.connectUnauthenticated(to: server.url, options: .init(connectTimeout: .seconds(30)))
            Issue.record("a 403 must refuse")
        } catch {
            #expect(error == .credentialsRejected)
        }
    }

    /// A server that pushes far past what it waits answers for is cut off with 1008 once the
    /// client's push queue is full. What the handler saw is the pushes' first part, in order;
    /// the rest stays unacknowledged, so the next connection gets it.
    @Test func aServerThatFloodsPushesIsCutOffAndLosesNothing() async throws {
        let server = try ChatServer(routes: [])
        defer { server.stop() }
        let handled = Locked<[String]>([])
        let diagnostics = Locked<[ChatDiagnostic]>([])
        let connection = try await ChatClient.connectAuthenticated(
            to: server.url, credentials: .init(username: "aci-1", deviceID: 1, password: "pw"),
            options: .init(keepalive: nil, diagnostics: { d in diagnostics.withLock { $0.append(d) } }, maximumQueuedPushes: 8)
        ) { push in
            // A slow handler: busy until the queue behind it has overflowed, however long the
            // server's burst takes to arrive.
            _ = await eventually(within: .seconds(30)) {
                diagnostics.withLock { $0.contains { if case .droppedPush = $0 { true } else { false } } }
            }
            handled.withLock { $0.append(push.path) }
            return .ok
        }
        let client = try #require(await server.client(at: 0, timeout: .seconds(10)))
        let paths = (0..<64).map { "/api/v1/message/\($0)" }
        let queue = PushQueue(paths.map { ServerRequest(verb: "PUT", path: $0, body: Data(count: 100)) })
        let pass = await queue.deliver(to: client, window: 64, ackTimeout: .seconds(5))
        let reason = await connection.waitUntilFinished()
        guard case .protocolError(code: 1008, _) = reason else {
            Issue.record("wrong reason \(reason)")
            return
        }
        let seen = handled.withLock { $0 }
        // The one being handled plus the 8 queued behind it, at most.
        #expect(seen.count <= 9, "the client stopped taking pushes at its limit")
        #expect(seen == Array(paths.prefix(seen.count)), "handled in order, with no gap")
        #expect(pass.acknowledged <= seen.count, "nothing is acknowledged unhandled")
        #expect(queue.pending.map(\.path) == Array(paths.dropFirst(pass.acknowledged)), "what was not acknowledged is kept, in order")
        // The first refused: the 9th or 10th, as the handler had taken the first or not yet.
        let firstDropped = diagnostics.withLock { $0 }.first { if case .droppedPush = $0 { true } else { false } }
        #expect(firstDropped == .droppedPush(path: paths[8]) || firstDropped == .droppedPush(path: paths[9]))
    }

    /// A server that took the upgrade and then stopped reading: writes back up, yet every
    /// request still ends at its deadline, and the keepalive ends the connection.
    @Test func aPeerThatStopsReadingCannotHoldRequestsOrTheKeepalive() async throws {
        let server = try SilentServer(answerUpgrade: true)
        defer { server.stop() }
        var options = ChatConnectionOptions(keepalive: KeepalivePolicy(interval: .milliseconds(200), timeout: .milliseconds(500)),
                                            webSocket: .init(closeTimeout: .milliseconds(500)))
        // Requests of 2 MiB, to fill the socket's buffers.
        options.maximumRequestSize = 4 << 20
        let connection = try await ChatClient.connectUnauthenticated(to: server.url, options: options)
        let body = Data(repeating: 0x5A, count: 2 * 1024 * 1024)
        let started = ContinuousClock.now
        let outcomes = await withTaskGroup(of: String.self) { group in
            for index in 0..<8 {
                group.addTask {
                    let request = RPCRequest(endpoint: Messages.sendMessage, path: "/v1/messages/\(index)", body: body,
                                             deadline: .now + .seconds(1))
                    do throws(TransportError) {
                        _ = try await connection.send(request)
                        return "answered"
                    } catch {
                        if case .timeout = error { return "timeout" }
                        if case .disconnected = error { return "disconnected" }
                        // Refused unsent once the write queue is full (the socket stays open).
                        if case .retryLater = error { return "retryLater" }
                        return "\(error)"
                    }
                }
            }
            var all: [String] = []
            for await outcome in group { all.append(outcome) }
            return all
        }
        #expect(outcomes.count == 8 && outcomes.allSatisfy { ["timeout", "disconnected", "retryLater"].contains($0) }, "\(outcomes)")
        #expect(started.duration(to: .now) < .seconds(30), "generous bound: deadlines, not TCP's give-up, ended them")
        var last: ChatConnectionEvent?
        for await event in connection.events { last = event }
        #expect(last == .disconnected(.keepaliveTimedOut))
    }
}

/// Frames a client must survive and report: a response nobody asked for, a text message,
/// bytes that are no envelope, an envelope of no known type.
@Suite struct ChatDiagnosticsTests {
    @Test func oddFramesAreReportedAndTheConnectionStaysUp() async throws {
        let server = try WebSocketServer { socket in
            let stray = SignalChat.WebSocketMessage(type: .response, response: WebSocketResponseMessage(id: 999, status: 200, message: "OK"))
            try? await socket.send(binary: stray.serializedData())
            try? await socket.send(text: "hello")
            try? await socket.send(binary: Data([0xFF, 0xFF, 0xFF]))
            try? await socket.send(binary: SignalChat.WebSocketMessage(type: .unknown).serializedData())
            for await _ in socket.messages {}
        }
        defer { server.stop() }
        let seen = Locked<[ChatDiagnostic]>([])
        let options = ChatConnectionOptions(keepalive: nil, diagnostics: { diagnostic in seen.withLock { $0.append(diagnostic) } })
        let connection = try await ChatClient.connectUnauthenticated(to: URL(string: "ws://127.0.0.1:\(server.port)/v1/websocket/")!, options: options)
        for _ in 0..<2000 where seen.current.count < 4 { try await Task.sleep(for: .milliseconds(10)) }
        let diagnostics = seen.current
        #expect(diagnostics.count == 4)
        #expect(diagnostics.first == .unknownResponseID(999))
        #expect(diagnostics.dropFirst().first == .unexpectedTextMessage)
        #expect(diagnostics.dropFirst(2).allSatisfy { if case .undecodableFrame = $0 { true } else { false } })
        #expect(connection.disconnectReason == nil, "odd frames do not end the connection")
        await connection.close()
    }

    /// A server that sends junk by the thousand reaches the app's log at the limit's rate:
    /// the rest arrive as one count, with the next window's first diagnostic or at the end.
    @Test func aFloodOfOddFramesIsReportedAtTheLimitThenCounted() async throws {
        let sent = 1000
        let server = try WebSocketServer { socket in
            for id in 0..<sent {
                let stray = SignalChat.WebSocketMessage(type: .response, response: WebSocketResponseMessage(id: UInt64(10_000 + id), status: 200))
                try? await socket.send(binary: stray.serializedData())
            }
            // The close comes after every stray response: the client reads them first.
            await socket.close()
        }
        defer { server.stop() }
        let seen = Locked<[ChatDiagnostic]>([])
        let options = ChatConnectionOptions(keepalive: nil, diagnostics: { diagnostic in seen.withLock { $0.append(diagnostic) } },
                                            diagnosticsLimit: DiagnosticsLimit(count: 20, per: .seconds(600)))
        let connection = try await ChatClient.connectUnauthenticated(to: URL(string: "ws://127.0.0.1:\(server.port)/v1/websocket/")!, options: options)
        for await _ in connection.events {}
        let diagnostics = seen.current
        #expect(diagnostics.count == 21, "\(diagnostics.count) reported")
        let expected: [ChatDiagnostic] = (0..<20).map { .unknownResponseID(UInt64(10_000 + $0)) }
        #expect(Array(diagnostics.prefix(20)) == expected)
        #expect(diagnostics.last == .suppressed(count: sent - 20))
    }

    @Test func theSuppressedCountComesWithTheNextWindowsFirstDiagnostic() {
        let start = ContinuousClock.now
        var gate = DiagnosticsGate(limit: DiagnosticsLimit(count: 2, per: .seconds(10)), now: start)
        let first = (0..<5).map { _ in gate.admit(at: start + .seconds(1)) }
        #expect(first.map(\.report) == [true, true, false, false, false])
        #expect(first.allSatisfy { $0.suppressedBefore == 0 })
        let next = gate.admit(at: start + .seconds(11))
        #expect(next.report && next.suppressedBefore == 3)
        #expect(gate.takeSuppressed() == 0)
        #expect(DiagnosticsLimit(count: -3).count == 0)
        // An empty window set past `init`: still a window (it used to reset at every
        // diagnostic, which turned the limit off).
        var empty = DiagnosticsLimit(count: 1, per: .seconds(10))
        empty.interval = .zero
        var gate2 = DiagnosticsGate(limit: empty, now: start)
        #expect(gate2.admit(at: start).report)
        #expect(!gate2.admit(at: start).report)
        #expect(gate2.takeSuppressed() == 1)
    }
}
