import Foundation
import PeerSupport
@testable import SwitchboardChat
import SwitchboardRuntime
import SwitchboardWebSocket
import Testing

/// `ChatServer.shutdown(timeout:)`: a chat client is told 1001 (going away), a request in a
/// handler is answered before the close while new requests and clients are refused, and a
/// peer that never answers the close is aborted at the timeout, its waiting push failed with
/// a typed error.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct ChatServerShutdownTests {
    static let slow = EndpointDescriptor(rpcName: "test.Shutdown/Slow", verb: "GET", pathTemplate: "/v1/slow", auth: .none)
    static let fast = EndpointDescriptor(rpcName: "test.Shutdown/Fast", verb: "GET", pathTemplate: "/v1/fast", auth: .none)

    @Test func aConnectedClientIsToldGoingAway() async throws {
        let server = try ChatServer(routes: [])
        defer { server.stop() }
        let connection = try await ChatClient.connectUnauthenticated(to: server.url, options: .init(keepalive: nil))
        _ = try #require(await server.client(at: 0, timeout: .seconds(10)))

        let started = ContinuousClock.now
        await server.shutdown(timeout: .seconds(10))
        let took = ContinuousClock.now - started

        let reason = await connection.waitUntilFinished()
        guard case .closed(code: WebSocketCloseCode.goingAway.rawValue, _) = reason else {
            Issue.record("expected a 1001 close, got \(reason)")
            return
        }
        #expect(reason.disconnectReason.kind == .goingAway)
        // The client answered the close, so nothing was left to wait for.
        #expect(took < .seconds(8), "shutdown waited \(took)")
        #expect(await eventually(within: .seconds(5)) { server.connectedClients.isEmpty })
    }

    @Test func aRequestInAHandlerIsAnsweredBeforeTheCloseAndNewWorkIsRefused() async throws {
        let entered = Locked(false)
        let release = Locked(false)
        let server = try ChatServer(routes: [
            RPCRoute(endpoint: Self.slow) { _, _ in
                entered.withLock { $0 = true }
                for _ in 0..<3000 where !release.current { try? await Task.sleep(for: .milliseconds(10)) }
                return RPCResponse(status: 200)
            },
            RPCRoute(endpoint: Self.fast) { _, _ in RPCResponse(status: 200) },
        ])
        defer { server.stop() }
        let connection = try await ChatClient.connectUnauthenticated(to: server.url, options: .init(keepalive: nil))
        let slowRequest = RPCRequest(endpoint: Self.slow, path: "/v1/slow", deadline: .now.advanced(by: .seconds(60)))
        let fastRequest = RPCRequest(endpoint: Self.fast, path: "/v1/fast", deadline: .now.advanced(by: .seconds(60)))
        let held = Task { () -> Int? in try? await connection.send(slowRequest).status }
        #expect(await eventually(within: .seconds(10)) { entered.current })

        let shutdown = Task { () -> Duration in
            let started = ContinuousClock.now
            await server.shutdown(timeout: .seconds(20))
            return ContinuousClock.now - started
        }
        // Once the shutdown has begun, a new request is answered 503 on the open connection.
        var refused: RPCResponse?
        for _ in 0..<500 {
            let response = try await connection.send(fastRequest)
            if response.status == 503 {
                refused = response
                break
            }
            #expect(response.status == 200)
            try await Task.sleep(for: .milliseconds(10))
        }
        let refusal = try #require(refused, "no request was refused while shutting down")
        #expect(refusal.headers["Retry-After"] == "1")
        // A new client is refused at its upgrade, with a time to come back.
        do throws(ChatConnectionError) {
            let late = try await ChatClient.connectUnauthenticated(to: server.url, options: .init(keepalive: nil))
            Issue.record("a client connected while the server was shutting down")
            await late.close()
        } catch {
            var isRetryLater = false
            if case .retryLater = error { isRetryLater = true }
            #expect(isRetryLater, "expected retryLater, got \(error)")
        }
        #expect(connection.closeInfo == nil, "the connection stays open while its request is in a handler")

        release.withLock { $0 = true }
        #expect(await held.value == 200, "the request in the handler was answered")
        let reason = await connection.waitUntilFinished()
        guard case .closed(code: WebSocketCloseCode.goingAway.rawValue, _) = reason else {
            Issue.record("expected a 1001 close, got \(reason)")
            return
        }
        let took = await shutdown.value
        #expect(took < .seconds(15), "shutdown waited \(took)")
    }

    @Test func aSilentPeerIsAbortedAtTheTimeoutAndItsPushFails() async throws {
        // A close timeout far past the shutdown's: the abort below is the shutdown's doing.
        var options = WebSocketConnection.Options()
        options.closeTimeout = .seconds(60)
        let server = try ChatServer(routes: [], connectionOptions: options)
        defer { server.stop() }
        let silent = try UpgradeAuthTests.upgrade(port: server.port, key: "dGhlIHNhbXBsZSBub25jZQ==", authorization: nil)
        defer { silent.close() }
        try silent.setReadDeadline(.now + .seconds(30))
        let client = try #require(await server.client(at: 0, timeout: .seconds(10)))

        let push = Task { () -> ChatServer.PushError? in
            do throws(ChatServer.PushError) {
                _ = try await client.sendPush(ServerRequest(verb: "PUT", path: "/api/v1/message"), timeout: .seconds(60))
                return nil
            } catch {
                return error
            }
        }
        // The push reached the peer, which will never answer it: it is waiting.
        let pushFrame = try await offThread { try silent.read(maximum: 4096) }
        #expect(pushFrame.first == 0x82, "a binary frame carries the push")

        let closeFrame = Task { try await offThread { try silent.read(maximum: 4096) } }
        let started = ContinuousClock.now
        await server.shutdown(timeout: .seconds(1))
        let took = ContinuousClock.now - started

        // It waited for the peer's close until the timeout, and not much longer.
        #expect(took >= .milliseconds(900), "shutdown returned after \(took)")
        #expect(took < .seconds(6), "shutdown waited \(took)")
        // The peer was told 1001 before being dropped: an unmasked close frame carrying it.
        let frame = try await closeFrame.value
        #expect(frame.count >= 4 && frame[0] == 0x88, "got \(frame.prefix(8))")
        #expect(frame.count >= 4 && UInt16(frame[2]) << 8 | UInt16(frame[3]) == WebSocketCloseCode.goingAway.rawValue)
        // The waiting push failed with the typed reason, long before its own 60 s timeout.
        #expect(await push.value == .serverShuttingDown)
        // The connection was aborted, not closed cleanly, and left the server.
        #expect(await eventually(within: .seconds(5)) { client.socket.closeInfo != nil }, "the connection is still open")
        #expect(client.socket.closeInfo?.wasClean == false)
        #expect(await eventually(within: .seconds(5)) { server.connectedClients.isEmpty })
        // A push after the shutdown fails at once, with the same reason.
        do throws(ChatServer.PushError) {
            _ = try await client.sendPush(ServerRequest(verb: "PUT", path: "/api/v1/message"), timeout: .seconds(30))
            Issue.record("a push after the shutdown was answered")
        } catch {
            #expect(error == .serverShuttingDown)
        }
        #expect(await client.push(ServerRequest(verb: "PUT", path: "/api/v1/message"), timeout: .seconds(30)) == nil)
    }
}
