import Foundation
import SignalChat
import SwitchboardChat
import SwitchboardRuntime
import Testing

/// Where the generated clients meet the generated handlers: in process, or over a real
/// loopback WebSocket with Signal's envelope through `ChatConnection` and `ChatServer`.
enum Backend: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case inProcess, loopbackWebSocket
    var testDescription: String { rawValue }
}

/// Both kinds of connection to one server holding the test handlers.
struct ServiceFixture: Sendable {
    let keys: TestKeys
    let unauthenticated: any RPCTransport<Unauthenticated>
    let authenticated: any RPCTransport<Authenticated>
    let close: @Sendable () async -> Void

    static func make(_ backend: Backend) async throws -> ServiceFixture {
        let keys = TestKeys()
        let unauthenticatedRoutes = TestUsernames().routes + TestSealedSenderKeys().routes
        let authenticatedRoutes = TestChatRoom().routes + keys.routes
        switch backend {
        case .inProcess:
            return ServiceFixture(keys: keys, unauthenticated: InProcessTransport(routes: unauthenticatedRoutes),
                                  authenticated: InProcessTransport(routes: authenticatedRoutes), close: {})
        case .loopbackWebSocket:
            let server = try ChatServer(routes: unauthenticatedRoutes + authenticatedRoutes)
            let options = ChatConnectionOptions(keepalive: nil)
            let anonymous = try await ChatClient.connectUnauthenticated(to: server.url, options: options)
            let account = try await ChatClient.connectAuthenticated(
                to: server.url, credentials: .init(username: "aci", deviceID: 1, password: "pw"), options: options)
            return ServiceFixture(keys: keys, unauthenticated: anonymous, authenticated: account) {
                await anonymous.close()
                await account.close()
                server.stop()
            }
        }
    }
}

/// Generated clients against generated handlers, through the real codecs and routing, on
/// every backend: each endpoint style (path, query, header and body bindings, declared
/// errors with bodies, per-request keys, the auth split) must behave the same on all.
@Suite struct ServiceBackendTests {

    @Test(arguments: Backend.allCases) func bytesTravelAsBase64URLInThePath(backend: Backend) async throws {
        let fixture = try await ServiceFixture.make(backend)
        defer { Task { await fixture.close() } }
        let client = UsernamesClient(transport: fixture.unauthenticated)
        let result = await client.lookUpUsernameHash(LookUpUsernameHashRequest(hash: TestUsernames.known))
        #expect(result.value?.uuid == "aci-for-" + TestUsernames.known.base64EncodedString())
        // The throwing form takes the request's fields.
        let response = try await client.lookUpUsernameHash(hash: TestUsernames.known)
        #expect(response.uuid.hasPrefix("aci-for-"))
    }

    @Test(arguments: Backend.allCases) func declaredStatusesBecomeTypedErrors(backend: Backend) async throws {
        let fixture = try await ServiceFixture.make(backend)
        defer { Task { await fixture.close() } }
        let client = UsernamesClient(transport: fixture.unauthenticated)
        guard case .nonSuccess(.notFound) = await client.lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([1]))) else {
            Issue.record("404 should map to notFound")
            return
        }
        guard case let .nonSuccess(.rateLimited(retryAfter)) = await client.lookUpUsernameHash(LookUpUsernameHashRequest(hash: TestUsernames.rateLimited)) else {
            Issue.record("429 should map to rateLimited")
            return
        }
        #expect(retryAfter == .seconds(30))
        guard case let .nonSuccess(.unrecognized(status, body)) = await client.lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([0x18]))) else {
            Issue.record("an undeclared status should arrive as unrecognized")
            return
        }
        #expect(status == 418 && body == Data("teapot".utf8))
        do {
            _ = try await client.lookUpUsernameHash(hash: Data([2]))
            Issue.record("expected a throw")
        } catch {
            #expect(error == .endpoint(.notFound))
        }
    }

    @Test(arguments: Backend.allCases) func errorBodiesAreDecoded(backend: Backend) async throws {
        let fixture = try await ServiceFixture.make(backend)
        defer { Task { await fixture.close() } }
        let client = ChatRoomClient(transport: fixture.authenticated)
        let result = await client.sendChatMessage(SendChatMessageRequest(chatId: "c1", clientMessageId: "m1", text: ""))
        guard case let .nonSuccess(.invalid(problem)) = result else {
            Issue.record("422 should decode its ValidationError body, got \(result)")
            return
        }
        #expect(problem == ValidationError(field: "text", reason: "must not be empty"))
    }

    @Test(arguments: Backend.allCases) func pathQueryHeaderAndBodyBindingsRoundTrip(backend: Backend) async throws {
        let fixture = try await ServiceFixture.make(backend)
        defer { Task { await fixture.close() } }
        let client = ChatRoomClient(transport: fixture.authenticated)
        // A chat id that needs percent-encoding in a path segment.
        let history = try await client.getHistory(chatId: "room 1/ü?&", beforeId: "m 9", limit: 25)
        #expect(history.messages.map(\.text) == ["chat=room 1/ü?&", "before=m 9", "limit=25"])
        // Absent optional and default limit stay out of the query.
        let first = try await client.getHistory(chatId: "r")
        #expect(first.messages.map(\.text) == ["chat=r", "before=nil", "limit=0"])
        // Header binding (Idempotency-Key) and `body *`.
        let sent = try await client.sendChatMessage(chatId: "c9", clientMessageId: "client-42", text: "Hallo 👋", replyTo: "m1")
        #expect(sent.id == "client-42" && sent.text == "Hallo 👋" && sent.replyTo == "m1" && sent.extras == ["chat": "c9"])
        // A Void response.
        try await client.markRead(chatId: "c9", upToMessageId: "m2")
        guard case .nonSuccess(.forbidden) = await client.markRead(ReadReceipt(chatId: "c9")) else {
            Issue.record("403 should map to forbidden")
            return
        }
    }

    @Test(arguments: Backend.allCases) func queryBoundEnumsAndBodiesReachTheHandler(backend: Backend) async throws {
        let fixture = try await ServiceFixture.make(backend)
        defer { Task { await fixture.close() } }
        let client = KeysClient(transport: fixture.authenticated)
        #expect(try await client.getPreKeyCount(identity: .pni) == PreKeyCount(count: 7, pqCount: 2))
        #expect(try await client.getPreKeyCount(identity: .aci) == PreKeyCount(count: 100, pqCount: 50))
        try await client.setKeys(identity: .pni, preKeys: [EcPreKey(keyId: 1, publicKey: Data([5]))])
        #expect(fixture.keys.uploads.current == [SetKeysRequest(identity: .pni, preKeys: [EcPreKey(keyId: 1, publicKey: Data([5]))])])
        let bundle = try await client.getPreKeys(identifier: "alice", deviceId: "3")
        #expect(bundle.devices.first?.deviceId == 3)
    }

    @Test(arguments: Backend.allCases) func perRequestKeysTravelAsHeaders(backend: Backend) async throws {
        let fixture = try await ServiceFixture.make(backend)
        defer { Task { await fixture.close() } }
        let client = SealedSenderKeysClient(transport: fixture.unauthenticated)
        let request = GetPreKeysRequest(identifier: "alice", deviceId: "*")
        #expect(await client.getPreKeys(request, accessKey: TestSealedSenderKeys.accessKey).value?.identityKey == Data([9]))
        guard case .nonSuccess(.unauthorized) = await client.getPreKeys(request, accessKey: AccessKey(Data([0]))) else {
            Issue.record("a wrong access key should be unauthorized")
            return
        }
    }

    @Test func theServerEnforcesTheAuthSplit() async {
        let router = RPCRouter(routes: TestChatRoom().routes + TestUsernames().routes)
        let accountOnly = await router.handle(ServerRequest(verb: "GET", path: "/v1/chats/x/messages"), auth: .none)
        #expect(accountOnly.status == 401)
        let unauthOnly = await router.handle(ServerRequest(verb: "GET", path: "/v1/accounts/username_hash/AA"), auth: .account)
        #expect(unauthOnly.status == 403)
        #expect(await router.handle(ServerRequest(verb: "GET", path: "/v1/nothing"), auth: .account).status == 404)
        #expect(await router.handle(ServerRequest(verb: "DELETE", path: "/v1/chats/x/messages"), auth: .account).status == 405)
        let badQuery = await router.handle(ServerRequest(verb: "GET", path: "/v1/chats/x/messages?limit=abc"), auth: .account)
        #expect(badQuery.status == 400)
        let malformed = await router.handle(ServerRequest(verb: "GET", path: "/v1/chats/x/messages?limit=%zz"), auth: .account)
        #expect(malformed.status == 400 && String(decoding: malformed.body, as: UTF8.self) == "malformed query string")
        // A bare `?` is an empty query; a `?` in the path is where the query starts.
        #expect(await router.handle(ServerRequest(verb: "GET", path: "/v1/chats/x/messages?"), auth: .account).status == 200)
        #expect(await router.handle(ServerRequest(verb: "GET", path: "/v1/chats/x/messages?x?y"), auth: .account).status == 200)
        #expect(await router.handle(ServerRequest(verb: "GET", path: "/v1/nothing?/v1/chats/x/messages"), auth: .account).status == 404)
    }

    @Test func aSingularParameterGivenTwiceIsABadRequest() async {
        let router = RPCRouter(routes: TestChatRoom().routes)
        let once = await router.handle(ServerRequest(verb: "GET", path: "/v1/chats/x/messages?limit=5"), auth: .account)
        #expect(once.status == 200)
        let twice = await router.handle(ServerRequest(verb: "GET", path: "/v1/chats/x/messages?limit=5&limit=500"), auth: .account)
        #expect(twice.status == 400)
        #expect(String(decoding: twice.body, as: UTF8.self).contains("'limit' is given more than once"))
        let body = Data(#"{"text": "hi"}"#.utf8)
        let oneKey = await router.handle(
            ServerRequest(verb: "POST", path: "/v1/chats/x/messages", headers: ["Idempotency-Key": "a", "Content-Type": "application/json"], body: body), auth: .account)
        #expect(oneKey.status == 200)
        let twoKeys = await router.handle(
            ServerRequest(verb: "POST", path: "/v1/chats/x/messages", headers: ["Idempotency-Key": "a", "idempotency-key": "b", "Content-Type": "application/json"], body: body),
            auth: .account)
        #expect(twoKeys.status == 400)
        #expect(String(decoding: twoKeys.body, as: UTF8.self).contains("'Idempotency-Key' is given more than once"))
    }

    /// A header-bound value holding NUL, CR or LF, which no client sends, is a bad request,
    /// never a field value that could split into more headers further on.
    @Test func aBoundHeaderHoldingNULCROrLFIsABadRequest() async {
        let router = RPCRouter(routes: TestChatRoom().routes)
        let body = Data(#"{"text": "hi"}"#.utf8)
        for value in ["client-1\r\nX-Injected: 1", "client\n1", "client\r1", "client\u{0}1"] {
            let response = await router.handle(
                ServerRequest(verb: "POST", path: "/v1/chats/x/messages", headers: ["Idempotency-Key": value, "Content-Type": "application/json"], body: body),
                auth: .account)
            #expect(response.status == 400, "\(value.debugDescription)")
            #expect(String(decoding: response.body, as: UTF8.self).contains("'Idempotency-Key' holds NUL, CR or LF"))
        }
        let plain = await router.handle(
            ServerRequest(verb: "POST", path: "/v1/chats/x/messages", headers: ["Idempotency-Key": "client-1", "Content-Type": "application/json"], body: body),
            auth: .account)
        #expect(plain.status == 200)
    }

    @Test func theConnectionsAuthDecidesWhatTheServerServes() async throws {
        let fixture = try await ServiceFixture.make(.loopbackWebSocket)
        defer { Task { await fixture.close() } }
        // The types keep an account endpoint off an unauthenticated connection; a hand-made
        // request shows the server enforces the split too.
        let accountOnly = RPCRequest(endpoint: ChatRoom.getHistory, path: "/v1/chats/x/messages")
        #expect(try await fixture.unauthenticated.send(accountOnly).status == 401)
        let unauthenticatedOnly = RPCRequest(endpoint: Usernames.lookUpUsernameHash, path: "/v1/accounts/username_hash/AA")
        #expect(try await fixture.authenticated.send(unauthenticatedOnly).status == 403)
    }

    @Test func descriptorsCarryTheSchema() {
        #expect(Usernames.lookUpUsernameHash.rpcName == "signal.chat.Usernames/LookUpUsernameHash")
        #expect(Usernames.lookUpUsernameHash.verb == "GET")
        #expect(Usernames.lookUpUsernameHash.pathTemplate == "/v1/accounts/username_hash/{hash}")
        #expect(Usernames.lookUpUsernameHash.auth == .none)
        #expect(Usernames.lookUpUsernameHash.isIdempotent)
        #expect(Usernames.lookUpUsernameHash.defaultTimeout == .seconds(10))
        #expect(Usernames.descriptor.versions == 1...2)
        #expect(ChatLobby.descriptor.status == .experimental)
        #expect(Messages.descriptor.events.map(\.name) == ["incomingMessage", "queueEmpty"])
        #expect(Messages.incomingMessageEvent.acknowledgement == .afterHandling)
    }
}
