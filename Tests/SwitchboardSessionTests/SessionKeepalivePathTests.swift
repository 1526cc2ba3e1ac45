import Foundation
import SwitchboardChat
import SwitchboardRuntime
import SwitchboardSession
import Testing

/// The session's heartbeat sends the keepalive request the connector's options name (it
/// always sent Signal's `/v1/keepalive`, whatever the app configured).
@Suite struct SessionKeepalivePathTests {
    @Test func theHeartbeatSendsTheConfiguredRequest() async throws {
        let hits = Locked(0)
        let alive = EndpointDescriptor(rpcName: "test.Health/Alive", verb: "GET", pathTemplate: "/v2/alive", auth: .account)
        let route = RPCRoute(endpoint: alive) { _, _ in
            hits.withLock { $0 += 1 }
            return RPCResponse(status: 200)
        }
        let server = try ChatServer(routes: [route])
        defer { server.stop() }
        let clock = ManualClock()
        let connector = ChatSessionConnector(url: server.url, options: ChatConnectionOptions(keepalive: KeepalivePolicy(requestPath: "/v2/alive")))
        #expect(connector.keepaliveRequestPath == "/v2/alive")
        #expect(ChatSessionConnector(url: server.url, options: ChatConnectionOptions(keepalive: KeepalivePolicy(requestPath: nil))).keepaliveRequestPath == nil)
        #expect(ChatSessionConnector(url: server.url).keepaliveRequestPath == ChatServer.keepalivePath)
        let session = Session(connector: connector, clock: clock, jitter: { 1.0 })
        session.logIn(cached: ChatClient.Credentials(username: "aci", deviceID: 1, password: "pw"))
        // Connecting probes once (the first answer makes the connection count as up).
        for _ in 0..<3000 where session.state != .connected { try await Task.sleep(for: .milliseconds(5)) }
        #expect(session.state == .connected)
        for _ in 0..<3000 where hits.current == 0 { try await Task.sleep(for: .milliseconds(5)) }
        #expect(hits.current >= 1, "the probe went to /v2/alive")
        await session.shutDown()
    }
}
