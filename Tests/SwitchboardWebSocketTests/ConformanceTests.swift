import Foundation
import PeerSupport
import SwitchboardWebSocket
import Testing

/// Our client and server against Python `websockets`, which nobody here wrote.
@Suite(.serialized) struct ConformanceTests {
    static let bigOptions = WebSocketConnection.Options(configuration: .init(maximumMessageSize: 4 * 1024 * 1024))

    @Test func ourClientAgainstPythonServer() async throws {
        let peer = try PythonPeer(script: "ws_echo_server.py")
        let port = try #require(await peer.firstLineAsync().flatMap(Int.init), "the Python server did not start")
        let connection = try await WebSocketClient.connect(
            to: URL(string: "ws://127.0.0.1:\(port)/")!, options: .init(connection: Self.bigOptions))
        var iterator = connection.messages.makeAsyncIterator()
        for size in [0, 1, 125, 126, 127, 65535, 65536, 1024 * 1024] {
            let text = String(repeating: "é", count: size / 2) + String(repeating: "a", count: size % 2)
            try await connection.send(text: text)
            #expect(await iterator.next() == .text(text), "text of \(size) bytes")
            let blob = Data((0..<size).map { UInt8($0 % 251) })
            try await connection.send(binary: blob)
            #expect(await iterator.next() == .binary(blob), "binary of \(size) bytes")
        }
        try await connection.ping(Array("hello".utf8))
        var pongs = connection.pongs.makeAsyncIterator()
        #expect(await pongs.next() == Array("hello".utf8))
        let info = await connection.close(code: .normalClosure, reason: "done")
        #expect(info.code == .normalClosure && info.wasClean)
        _ = await peer.stopAsync()
    }

    @Test func pythonClientAgainstOurServer() async throws {
        let server = try WebSocketServer(options: Self.bigOptions) { connection in
            for await message in connection.messages {
                try? await connection.send(message)
            }
            await connection.close()
        }
        defer { server.stop() }
        let client = try PythonPeer(script: "ws_client_check.py", arguments: [String(server.port)])
        let result = await client.finishAsync(timeout: 60)
        #expect(result.status == 0, "\(result.output)")
    }

    /// Our echo server against Autobahn's server categories (Tests/Peers/ws_hostile_client.py:
    /// framing, pings, reserved bits and opcodes, fragmentation, UTF-8 with fail-fast, close
    /// codes and reasons, 1 MiB messages), judged as Autobahn's strict verdict judges.
    @Test func ourServerPassesTheHostileClientCasesStrictly() async throws {
        let server = try WebSocketServer(options: Self.bigOptions) { connection in
            for await message in connection.messages {
                try? await connection.send(message)
            }
            await connection.close()
        }
        defer { server.stop() }
        let client = try PythonPeer(script: "ws_hostile_client.py", arguments: ["ws://127.0.0.1:\(server.port)/"])
        let result = await client.finishAsync(timeout: 240)
        let failures = result.output.split(separator: "\n").filter { $0.hasPrefix("FAIL") }
        #expect(result.status == 0, "\(failures.joined(separator: "\n"))\n\(result.output.suffix(300))")
        let total = result.output.split(separator: "\n").first { $0.hasPrefix("TOTAL") }
        #expect(total?.contains(", 0 failed") == true, "\(total ?? "no TOTAL line")")
        #expect(result.output.split(separator: "\n").filter { $0.hasPrefix("PASS") }.count >= 290)
    }

    /// Python `websockets` picks the one it supports from what we offer, and both sides agree.
    @Test func ourClientNegotiatesASubprotocolWithPython() async throws {
        let peer = try PythonPeer(script: "ws_echo_server.py", arguments: ["chat.v2"])
        let port = try #require(await peer.firstLineAsync().flatMap(Int.init), "the Python server did not start")
        let connection = try await WebSocketClient.connect(
            to: URL(string: "ws://127.0.0.1:\(port)/")!, options: .init(subprotocols: ["chat.v1", "chat.v2"]))
        #expect(connection.subprotocol == "chat.v2")
        var iterator = connection.messages.makeAsyncIterator()
        #expect(await iterator.next() == .text("subprotocol chat.v2"), "the peer's side of the choice")
        await connection.close()
        _ = await peer.stopAsync()
    }

    /// Our server answers with the application's choice only if the client offered it; a choice
    /// nobody offered is refused with 500 instead of an upgrade the client must fail.
    @Test func ourServerChoosesOnlyAnOfferedSubprotocol() async throws {
        let server = try WebSocketServer(upgrade: { request in
            .accept(subprotocol: request.path == "/stray" ? "stray" : request.subprotocols.last)
        }) { connection in
            try? await connection.send(text: connection.subprotocol ?? "none")
            await connection.close()
        }
        defer { server.stop() }
        let offered = WebSocketClient.Options(subprotocols: ["chat.v1", "chat.v2"])
        let connection = try await WebSocketClient.connect(to: URL(string: "ws://127.0.0.1:\(server.port)/")!, options: offered)
        #expect(connection.subprotocol == "chat.v2")
        var iterator = connection.messages.makeAsyncIterator()
        #expect(await iterator.next() == .text("chat.v2"))
        await connection.close()
        do {
            _ = try await WebSocketClient.connect(to: URL(string: "ws://127.0.0.1:\(server.port)/stray")!, options: offered)
            Issue.record("a subprotocol nobody offered must not be accepted")
        } catch {
            guard case .upgradeRejected(status: 500, _, _) = error else {
                Issue.record("expected a 500 refusal, got \(error)")
                return
            }
        }
    }

    @Test func ourClientAgainstOurServer() async throws {
        let server = try WebSocketServer(upgrade: { request in
            request.headers.contains { $0.name.lowercased() == "authorization" }
                ? .accept(headers: [HTTPHeaderField(name: "X-Signal-Timestamp", value: "1700000000000")])
                : .reject(status: 403, reason: "Forbidden", body: Array("bad credentials".utf8))
        }) { connection in
            for await message in connection.messages { try? await connection.send(message) }
            await connection.close()
        }
        defer { server.stop() }
        let url = URL(string: "ws://127.0.0.1:\(server.port)/v1/websocket/")!
        do {
            _ = try await WebSocketClient.connect(to: url)
            Issue.record("the upgrade should be refused")
        } catch {
            guard case let .upgradeRejected(status, _, body) = error else {
                Issue.record("wrong error \(error)")
                return
            }
            #expect(status == 403 && body == Array("bad credentials".utf8))
        }
        let connection = try await WebSocketClient.connect(to: url, options: .init(headers: [HTTPHeaderField(name: "Authorization", value: "Basic dTpw")]))
        #expect(connection.handshakeHeaders.contains(HTTPHeaderField(name: "X-Signal-Timestamp", value: "1700000000000")))
        var iterator = connection.messages.makeAsyncIterator()
        for index in 0..<50 { try await connection.send(text: "message \(index)") }
        for index in 0..<50 { #expect(await iterator.next() == .text("message \(index)")) }
        #expect(await connection.close().wasClean)
        // Nothing can be sent after close.
        await #expect(throws: WebSocketError.self) { try await connection.send(text: "late") }
    }

    @Test func headersThatCouldSmuggleAnotherAreNeverSent() async throws {
        let upgrades = ManagedCounter()
        let server = try WebSocketServer(upgrade: { request in
            upgrades.increment()
            // The application's own header value must not split the response either.
            return .accept(headers: [HTTPHeaderField(name: "X-Alert", value: "a\r\nSet-Cookie: x=y")])
        }) { _ in }
        defer { server.stop() }
        let url = URL(string: "ws://127.0.0.1:\(server.port)/")!
        do {
            _ = try await WebSocketClient.connect(to: url, options: .init(headers: [HTTPHeaderField(name: "User-Agent", value: "x\r\nAuthorization: Basic eA==")]))
            Issue.record("a header with a line break must not be sent")
        } catch {
            guard case .invalidHTTP = error else {
                Issue.record("wrong error \(error)")
                return
            }
        }
        #expect(upgrades.value == 0)
        do {
            _ = try await WebSocketClient.connect(to: url)
            Issue.record("the server must refuse to send its bad header")
        } catch {
            guard case .upgradeRejected(status: 500, _, _) = error else {
                Issue.record("wrong error \(error)")
                return
            }
        }
        #expect(upgrades.value == 1)
    }

    /// Whether this machine has an IPv6 loopback; without one the IPv6 test is reported skipped.
    static let hasIPv6Loopback: Bool = {
        guard let listener = try? TCPListener(host: "::1") else { return false }
        listener.close()
        return true
    }()

    @Test(.enabled(if: hasIPv6Loopback, "this machine has no IPv6 loopback"))
    func ipv6LoopbackWorks() async throws {
        let server = try WebSocketServer(host: "::1") { connection in
            for await message in connection.messages { try? await connection.send(message) }
        }
        defer { server.stop() }
        let connection = try await WebSocketClient.connect(to: URL(string: "ws://[::1]:\(server.port)/")!)
        var messages = connection.messages.makeAsyncIterator()
        try await connection.send(text: "over IPv6")
        #expect(await messages.next() == .text("over IPv6"))
        #expect(await connection.close().wasClean)
    }

    /// A listener whose queue is full drops new SYNs, so a connect to it never completes:
    /// the connect timeout must end it, covering TCP and the upgrade together.
    @Test func aConnectThatNeverCompletesMeetsItsTimeout() async throws {
        let blackhole = try FullListenQueue()
        defer { blackhole.close() }
        let started = ContinuousClock.now
        do {
            _ = try await WebSocketClient.connect(to: URL(string: "ws://127.0.0.1:\(blackhole.port)/")!, options: .init(connectTimeout: .milliseconds(800)))
            Issue.record("the connect should time out")
        } catch {
            guard case .timeout = error else {
                Issue.record("wrong error \(error)")
                return
            }
        }
        let elapsed = ContinuousClock.now - started
        #expect(elapsed >= .milliseconds(700) && elapsed < .seconds(20), "\(elapsed)")  // a SYN left unanswered retries for minutes
    }

    @Test func connectingToAClosedPortFailsQuickly() async {
        let listener = try? TCPListener()
        let port = listener?.port ?? 1
        listener?.close()
        await #expect(throws: WebSocketError.self) {
            _ = try await WebSocketClient.connect(to: URL(string: "ws://127.0.0.1:\(port)/")!, options: .init(connectTimeout: .seconds(2)))
        }
    }

    @Test func aConnectCancelledBeforeItsSocketOpensSendsNoUpgrade() async throws {
        let upgrades = ManagedCounter()
        let server = try WebSocketServer(upgrade: { _ in
            upgrades.increment()
            return .accept()
        }, handler: { _ in })
        defer { server.stop() }
        let url = URL(string: "ws://127.0.0.1:\(server.port)/")!
        let cancelled = Task { () async -> Result<WebSocketConnection, WebSocketError> in
            withUnsafeCurrentTask { $0?.cancel() }
            do throws(WebSocketError) {
                return .success(try await WebSocketClient.connect(to: url))
            } catch {
                return .failure(error)
            }
        }
        guard case let .failure(.io(reason)) = await cancelled.value else {
            Issue.record("a cancelled connect should fail before upgrading")
            return
        }
        #expect(reason.hasSuffix("connect cancelled"), "\(reason)")
        // The next connect is the first upgrade the server sees.
        let connection = try await WebSocketClient.connect(to: url)
        #expect(upgrades.value == 1)
        _ = await connection.close()
    }
}
