import Foundation
import SignalChat
import SwitchboardChat
import SwitchboardRuntime
import SwitchboardWebSocket
import Testing

/// Upgrade statuses and close codes reach the app as typed chat errors.
@Suite(.serialized) struct ChatConnectionErrorTests {
    /// Refuses each account by the password it presents, as Signal's server would.
    func makeServer() throws -> ChatServer {
        try ChatServer(routes: LoopbackChatRoom().routes, upgradeHeaders: {
            [HTTPHeaderField(name: "X-Signal-Timestamp", value: "1700000000123"),
             HTTPHeaderField(name: "X-Signal-Alert", value: "critical-idle-primary-device, idle-primary-device"),
             HTTPHeaderField(name: "X-Signal-Alert", value: "custom")]
        }, authenticate: { authorization in
            guard let authorization, let decoded = Data(base64Encoded: String(authorization.dropFirst("Basic ".count))),
                  let text = String(data: decoded, encoding: .utf8) else { return .anonymous }
            switch text.split(separator: ":").last {
            case "expired": return .reject(status: 499, reason: "App Expired")
            case "busy": return .reject(status: 429, reason: "Too Many Requests", headers: [HTTPHeaderField(name: "Retry-After", value: "30")])
            case "busy-date": return .reject(status: 429, reason: "Too Many Requests", headers: [HTTPHeaderField(name: "Retry-After", value: "Wed, 21 Oct 2015 07:28:00 GMT")])
            case "busy-garbled": return .reject(status: 429, reason: "Too Many Requests", headers: [HTTPHeaderField(name: "Retry-After", value: "soon")])
            case "teapot": return .reject(status: 418, reason: "I'm a teapot")
            case "revoked": return .reject(status: 401, reason: "Unauthorized")
            default: return .account
            }
        })
    }

    func connect(_ server: ChatServer, password: String) async -> ChatConnectionError? {
        do {
            let connection = try await ChatClient.connectAuthenticated(
                to: server.url, credentials: .init(username: "aci", deviceID: 1, password: password))
            await connection.close()
            return nil
        } catch {
            return error
        }
    }

    @Test func upgradeStatusesMapToTypedErrors() async throws {
        let server = try makeServer()
        defer { server.stop() }
        #expect(await connect(server, password: "expired") == .appExpired)
        #expect(await connect(server, password: "revoked") == .credentialsRejected)
        #expect(await connect(server, password: "busy") == .retryLater(retryAfter: .seconds(30)))
        // A date in the past means "now".
        #expect(await connect(server, password: "busy-date") == .retryLater(retryAfter: .zero))
        #expect(await connect(server, password: "busy-garbled") == .retryLater(retryAfter: nil))
        #expect(await connect(server, password: "teapot") == .upgradeRejected(status: 418))
        #expect(await connect(server, password: "fine") == nil)
    }

    @Test func nothingListeningIsATransportError() async throws {
        let server = try makeServer()
        let url = server.url
        server.stop()
        do {
            _ = try await ChatClient.connectUnauthenticated(to: url)
            Issue.record("a stopped server must refuse")
        } catch {
            guard case .transport = error else {
                Issue.record("expected a transport error, got \(error)")
                return
            }
        }
    }

    /// The app's own close: a call pending then, or made after, fails as closed here (not to
    /// be retried), whichever of the close and the socket's end reports first.
    @Test func callsEndedByTheAppsCloseAreNotRetryable() async throws {
        let server = try makeServer()
        defer { server.stop() }
        for _ in 0..<5 {
            let connection = try await ChatClient.connectAuthenticated(
                to: server.url, credentials: .init(username: "aci", deviceID: 1, password: "fine"))
            let room = ChatRoomClient(transport: connection)
            async let hanging = room.sendChatMessage(SendChatMessageRequest(chatId: "c", clientMessageId: "m", text: "hang"))
            try await Task.sleep(for: .milliseconds(100))
            await connection.close()
            for result in [await hanging, await room.sendChatMessage(SendChatMessageRequest(chatId: "c", clientMessageId: "n", text: "late"))] {
                guard case let .failure(.disconnected(reason)) = result else {
                    Issue.record("expected disconnected, got \(result)")
                    continue
                }
                #expect(reason.kind == .closedLocally && !reason.isRetryable, "\(reason)")
            }
        }
    }

    @Test(arguments: [
        (WebSocketCloseCode.reauthenticationRequired, ChatConnectionError.reauthenticationRequired),
        (WebSocketCloseCode.connectedElsewhere, ChatConnectionError.connectedElsewhere),
        (WebSocketCloseCode.goingAway, ChatConnectionError.closed(code: 1001, reason: "")),
        (WebSocketCloseCode.invalidPayload, ChatConnectionError.protocolError(code: 1007, reason: "")),
        (WebSocketCloseCode.messageTooBig, ChatConnectionError.protocolError(code: 1009, reason: "")),
    ])
    func serverCloseCodesEndTheConnectionWithTypedReasons(code: WebSocketCloseCode, expected: ChatConnectionError) async throws {
        let server = try makeServer()
        defer { server.stop() }
        let connection = try await ChatClient.connectAuthenticated(
            to: server.url, credentials: .init(username: "aci", deviceID: 1, password: "fine"))
        let client = try #require(await server.client(at: 0))
        let room = ChatRoomClient(transport: connection)
        async let hanging = room.sendChatMessage(SendChatMessageRequest(chatId: "c", clientMessageId: "m", text: "hang"))
        try await Task.sleep(for: .milliseconds(200))
        await client.close(code: code)
        guard case let .failure(.disconnected(reason)) = await hanging else {
            Issue.record("a pending request must fail with disconnected")
            return
        }
        _ = await connection.waitUntilClosed()
        // The server closes TCP the moment our close reply lands, which used to race our own
        // report of the close and surface as 1006; the code must survive that race.
        #expect(reason == expected.disconnectReason)
        // What a caller (or RetryInterceptor) acts on: another device took over, or the
        // credentials need refreshing, is not worth calling again; a server going away is.
        let kind: DisconnectReason.Kind = switch code {
        case .reauthenticationRequired: .reauthenticationRequired
        case .connectedElsewhere: .connectedElsewhere
        case .goingAway: .goingAway
        default: .connectionLost
        }
        #expect(reason.kind == kind)
        #expect(reason.isRetryable == ![.reauthenticationRequired, .connectedElsewhere].contains(code))
        #expect(reason.description == expected.description)
        #expect(connection.disconnectReason == expected)
        var events: [ChatConnectionEvent] = []
        for await event in connection.events { events.append(event) }
        #expect(events.count == 2)
        guard case let .connected(info)? = events.first else {
            Issue.record("the upgrade must be the first event")
            return
        }
        #expect(info.serverTimestamp == Date(timeIntervalSince1970: 1_700_000_000.123))
        #expect(info.alerts == ["critical-idle-primary-device", "idle-primary-device", "custom"])
        #expect(events.last == .disconnected(expected))
    }

    /// A request sent once the server's 4409 has closed the connection fails with that close's
    /// reason, not as a lost connection a caller would retry. (The chat review found the
    /// window this does not reach: a write refused while the close is still being taken
    /// down was reported as `connectionLost`; it now takes the close's reason too.)
    @Test func aRequestAfterTheServersCloseFailsWithItsReason() async throws {
        let server = try makeServer()
        defer { server.stop() }
        let connection = try await ChatClient.connectAuthenticated(
            to: server.url, credentials: .init(username: "aci", deviceID: 1, password: "fine"))
        let client = try #require(await server.client(at: 0))
        await client.close(code: .connectedElsewhere)
        _ = await connection.waitUntilClosed()
        let result = await ChatRoomClient(transport: connection).sendChatMessage(SendChatMessageRequest(chatId: "c", clientMessageId: "m", text: "late"))
        guard case let .failure(.disconnected(reason)) = result else {
            Issue.record("expected disconnected, got \(result)")
            return
        }
        #expect(reason.kind == .connectedElsewhere, "\(reason)")
        #expect(!reason.isRetryable)
    }

    @Test func malformedUpgradeHeadersAreLeftOut() {
        let info = ChatUpgradeInfo(headers: [
            HTTPHeaderField(name: "x-signal-timestamp", value: "soon"),
            HTTPHeaderField(name: "X-Signal-Alert", value: " , ,"),
        ])
        #expect(info.serverTimestamp == nil)
        #expect(info.alerts.isEmpty)
    }

    @Test func protocolCloseCodesAreProtocolErrors() {
        for code: UInt16 in [1002, 1007, 1009] {
            let info = WebSocketCloseInfo(code: WebSocketCloseCode(code), reason: "bad", wasClean: true)
            #expect(ChatConnectionError(closeInfo: info) == .protocolError(code: code, reason: "bad"))
        }
        let violation = WebSocketError.protocolViolation(code: .messageTooBig, reason: "too big")
        #expect(ChatConnectionError(connectFailure: violation) == .protocolError(code: 1009, reason: "too big"))
        #expect(ChatConnectionError(connectFailure: .timeout("connect")) == .transport(.timeout("connect")))
    }
}
