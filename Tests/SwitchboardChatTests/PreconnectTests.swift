import Foundation
@testable import SwitchboardChat
import SwitchboardRuntime
@testable import SwitchboardWebSocket
import Testing

/// Opens real transports for preconnects and remembers each, so tests can see whether a
/// preconnected socket was used, closed, or left open.
final class RecordingOpener: @unchecked Sendable {
    let transports = Locked<[WebSocketTransport]>([])
    /// Delay after opening, to make a preconnect arrive late.
    let delay: Duration

    init(delay: Duration = .zero) { self.delay = delay }

    var opener: ChatConnector.TransportOpener {
        { url, options async throws(WebSocketError) in
            let transport = try await WebSocketClient.openTransport(to: url, options: options)
            try? await Task.sleep(for: self.delay)
            self.transports.withLock { $0.append(transport) }
            return transport
        }
    }

    /// Waits (bounded) until `count` transports were opened and returns them in the order they arrived.
    func opened(_ count: Int) async throws -> [WebSocketTransport] {
        for _ in 0..<2000 where transports.withLock({ $0.count }) < count { try await Task.sleep(for: .milliseconds(25)) }
        return transports.withLock { $0 }
    }
}

@Suite(.serialized) struct PreconnectTests {
    static let credentials = ChatClient.Credentials(username: "aci-1", deviceID: 2, password: "secret")

    @Test func aReadyPreconnectIsUpgradedInsteadOfOpeningAnotherSocket() async throws {
        let server = try ChatServer(routes: [])
        defer { server.stop() }
        let recorder = RecordingOpener()
        let connector = ChatConnector(url: server.url, options: .init(keepalive: nil), openTransport: recorder.opener)
        connector.preconnect()
        connector.preconnect() // a second call while one is under way is a no-op
        let early = try await recorder.opened(1)
        let connection = try await connector.connectAuthenticated(credentials: Self.credentials)
        #expect(recorder.transports.withLock { $0.count } == 1)
        #expect(early.first?.currentState == .upgraded)
        #expect(try #require(await server.client(at: 0)).auth == .account)
        await connection.close()
    }

    @Test func aLatePreconnectIsClosedWhenItArrives() async throws {
        let server = try ChatServer(routes: [])
        defer { server.stop() }
        let recorder = RecordingOpener(delay: .milliseconds(500))
        let options = ChatConnectionOptions(keepalive: nil, preconnectWait: .milliseconds(20))
        let connector = ChatConnector(url: server.url, options: options, openTransport: recorder.opener)
        connector.preconnect()
        let connection = try await connector.connectUnauthenticated()
        // The connect did not wait: it opened and upgraded a socket of its own.
        #expect(try #require(await server.client(at: 0)).auth == .none)
        // The preconnect, arriving later, is closed and never upgraded.
        let early = try #require(try await recorder.opened(1).first)
        for _ in 0..<2000 where early.currentState != .closed { try await Task.sleep(for: .milliseconds(10)) }
        #expect(early.currentState == .closed)
        #expect(server.connectedClients.count == 1)
        await connection.close()
    }

    @Test func aStalePreconnectIsClosedAndReplaced() async throws {
        let server = try ChatServer(routes: [])
        defer { server.stop() }
        let recorder = RecordingOpener()
        let options = ChatConnectionOptions(keepalive: nil, preconnectMaxAge: .zero)
        let connector = ChatConnector(url: server.url, options: options, openTransport: recorder.opener)
        connector.preconnect()
        let early = try await recorder.opened(1)
        try await Task.sleep(for: .milliseconds(10))
        let connection = try await connector.connectUnauthenticated()
        #expect(early.first?.currentState == .closed)
        // The replacement is the connect's own socket, upgraded.
        #expect(recorder.transports.withLock { $0.count } == 1)
        #expect(try #require(await server.client(at: 0)).auth == .none)
        #expect(server.connectedClients.count == 1)
        await connection.close()
    }

    @Test func aDiscardedPreconnectIsClosed() async throws {
        let server = try ChatServer(routes: [])
        defer { server.stop() }
        let recorder = RecordingOpener()
        let connector = ChatConnector(url: server.url, options: .init(keepalive: nil), openTransport: recorder.opener)
        connector.preconnect()
        let early = try await recorder.opened(1)
        connector.discardPreconnect()
        for _ in 0..<2000 where early.first?.currentState != .closed { try await Task.sleep(for: .milliseconds(10)) }
        #expect(early.first?.currentState == .closed)
        #expect(server.connectedClients.isEmpty)
    }

    @Test func aTransportOnlyUpgradesForItsOwnEndpoint() async throws {
        let server = try ChatServer(routes: [])
        defer { server.stop() }
        let transport = try await WebSocketClient.openTransport(to: server.url)
        let elsewhere = URL(string: "ws://localhost:\(server.port)/v1/websocket/")!
        do {
            _ = try await WebSocketClient.upgrade(transport, url: elsewhere)
            Issue.record("a transport opened for 127.0.0.1 must not upgrade for localhost")
        } catch {
            guard case .io = error else {
                Issue.record("expected an I/O error, got \(error)")
                return
            }
        }
        #expect(transport.currentState == .closed)
    }

    @Test func endpointsKeepThePathAsWritten() throws {
        let signal = try WebSocketEndpoint(URL(string: "wss://chat.example.org/v1/websocket/?login=a%20b")!)
        #expect(signal.requestPath == "/v1/websocket/?login=a%20b")
        #expect(signal.port == 443 && signal.isSecure)
        #expect(try WebSocketEndpoint(URL(string: "ws://Example.org:8080")!).requestPath == "/")
        #expect(try WebSocketEndpoint(URL(string: "ws://Example.org:80/a")!) == WebSocketEndpoint(URL(string: "ws://example.org/b")!))
        #expect(throws: WebSocketError.self) { try WebSocketEndpoint(URL(string: "http://example.org/")!) }
    }
}
