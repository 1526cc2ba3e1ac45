import Foundation
import SwitchboardChat
import SwitchboardRuntime
import Testing

/// Every call has a deadline: a server that answers keepalives but never a request cannot
/// hold the caller, whatever the schema says about the endpoint.
@Suite(.timeLimit(.minutes(3)))
struct DefaultDeadlineTests {
    /// An endpoint with no `timeout` in the schema, whose handler never answers.
    static let endpoint = EndpointDescriptor(rpcName: "test.Stuck/Wait", verb: "GET", pathTemplate: "/v1/stuck", auth: .none)

    static func stuckServer() throws -> ChatServer {
        try ChatServer(routes: [RPCRoute(endpoint: endpoint) { _, _ in
            try? await Task.sleep(for: .seconds(60))
            return RPCResponse(status: 200)
        }])
    }

    @Test func theConnectionsDefaultBoundsACallWithoutTimeout() async throws {
        let server = try Self.stuckServer()
        defer { server.stop() }
        let connection = try await ChatClient.connectUnauthenticated(
            to: server.url, options: .init(keepalive: KeepalivePolicy(interval: .milliseconds(100), timeout: .seconds(5)),
                                           defaultRequestTimeout: .milliseconds(300)))
        #expect(connection.defaultRequestTimeout == .milliseconds(300))
        let started = ContinuousClock.now
        let result = await RPCCall.send(RPCRequest(endpoint: Self.endpoint, path: "/v1/stuck"), over: connection, options: .init())
        #expect(result == .failure(.timeout))
        #expect(ContinuousClock.now - started >= .milliseconds(300))
        // The keepalives were answered all along, and the connection still serves requests.
        let other = EndpointDescriptor(rpcName: "test.Other/Get", verb: "GET", pathTemplate: "/v1/other", auth: .none)
        let answered = await RPCCall.send(RPCRequest(endpoint: other, path: "/v1/other"), over: connection, options: .init())
        #expect((try? answered.get().status) == 404)
        await connection.close()
    }

    @Test func aRequestSentDirectlyGetsTheDefaultToo() async throws {
        let server = try Self.stuckServer()
        defer { server.stop() }
        let connection = try await ChatClient.connectUnauthenticated(
            to: server.url, options: .init(keepalive: nil, defaultRequestTimeout: .milliseconds(200)))
        do {
            _ = try await connection.send(RPCRequest(endpoint: Self.endpoint, path: "/v1/stuck"))
            Issue.record("the request must time out")
        } catch {
            #expect(error == .timeout)
        }
        await connection.close()
    }

    @Test func aCallsOwnTimeoutWinsOverTheDefault() async throws {
        let server = try Self.stuckServer()
        defer { server.stop() }
        let connection = try await ChatClient.connectUnauthenticated(to: server.url, options: .init(keepalive: nil))
        let started = ContinuousClock.now
        let result = await RPCCall.send(RPCRequest(endpoint: Self.endpoint, path: "/v1/stuck"), over: connection,
                                        options: .init(timeout: .milliseconds(150)))
        #expect(result == .failure(.timeout))
        #expect(ContinuousClock.now - started < .seconds(10))
        await connection.close()
    }

    @Test func theDefaultIsThirtySeconds() {
        #expect(ChatConnectionOptions().defaultRequestTimeout == .seconds(30))
        #expect(RPCCall.defaultRequestTimeout == .seconds(30))
        #expect(InProcessTransport<Unauthenticated>(routes: []).defaultRequestTimeout == .seconds(30))
    }

    /// A transport that does not enforce deadlines is raced against its default by RPCCall.
    @Test func aTransportsDefaultBoundsCallsItDoesNotBoundItself() async {
        struct Hanging: RPCTransport {
            typealias Auth = Unauthenticated
            var defaultRequestTimeout: Duration { .milliseconds(100) }
            func send(_ request: RPCRequest) async throws(TransportError) -> RPCResponse {
                try? await Task.sleep(for: .seconds(60))
                return RPCResponse(status: 200)
            }
        }
        let result = await RPCCall.send(RPCRequest(endpoint: Self.endpoint, path: "/v1/stuck"), over: Hanging(), options: .init())
        #expect(result == .failure(.timeout))
    }
}

/// `abort(reason:)` ends a connection at once, without waiting on the server: requests in
/// flight fail straight away, and the reason is the one given (a session whose heartbeat
/// went unanswered uses it, where a closing handshake would wait on the silent server).
@Suite(.timeLimit(.minutes(3)))
struct ConnectionAbortTests {
    @Test func abortFailsRequestsInFlightAtOnceWithTheReason() async throws {
        let server = try DefaultDeadlineTests.stuckServer()
        defer { server.stop() }
        let connection = try await ChatClient.connectUnauthenticated(to: server.url, options: .init(keepalive: nil, defaultRequestTimeout: .seconds(60)))
        let call = Task { await RPCCall.send(RPCRequest(endpoint: DefaultDeadlineTests.endpoint, path: "/v1/stuck"), over: connection, options: .init()) }
        try await Task.sleep(for: .milliseconds(200))
        let started = ContinuousClock.now
        connection.abort(reason: .keepaliveTimedOut)
        guard case let .failure(.disconnected(reason)) = await call.value else {
            Issue.record("the request in flight must fail as disconnected")
            return
        }
        #expect(ContinuousClock.now - started < .seconds(10))
        #expect(reason == ChatConnectionError.keepaliveTimedOut.disconnectReason)
        #expect(reason.kind == .connectionLost && reason.isRetryable)
        #expect(await connection.waitUntilFinished() == .keepaliveTimedOut)
        #expect(connection.disconnectReason == .keepaliveTimedOut)
    }
}
