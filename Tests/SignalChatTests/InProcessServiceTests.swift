import Foundation
import SignalChat
import SwitchboardRuntime
import Testing

/// Generated clients against generated handlers, through the real codecs and routing.
@Suite struct InProcessServiceTests {
    let unauthenticated = InProcessTransport<Unauthenticated>(routes: TestUsernames().routes + TestSealedSenderKeys().routes)
    let keys = TestKeys()
    var authenticated: InProcessTransport<Authenticated> { InProcessTransport(routes: TestChatRoom().routes + keys.routes) }

    @Test func bytesTravelAsBase64URLInThePath() async throws {
        let client = UsernamesClient(transport: unauthenticated)
        let result = await client.lookUpUsernameHash(LookUpUsernameHashRequest(hash: TestUsernames.known))
        #expect(result.value?.uuid == "aci-for-" + TestUsernames.known.base64EncodedString())
        // The throwing form takes the request's fields.
        let response = try await client.lookUpUsernameHash(hash: TestUsernames.known)
        #expect(response.uuid.hasPrefix("aci-for-"))
    }

    @Test func declaredStatusesBecomeTypedErrors() async {
        let client = UsernamesClient(transport: unauthenticated)
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

    @Test func errorBodiesAreDecoded() async {
        let client = ChatRoomClient(transport: authenticated)
        let result = await client.sendChatMessage(SendChatMessageRequest(chatId: "c1", clientMessageId: "m1", text: ""))
        guard case let .nonSuccess(.invalid(problem)) = result else {
            Issue.record("422 should decode its ValidationError body, got \(result)")
            return
        }
        #expect(problem == ValidationError(field: "text", reason: "must not be empty"))
    }

    @Test func pathQueryHeaderAndBodyBindingsRoundTrip() async throws {
        let client = ChatRoomClient(transport: authenticated)
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

    @Test func queryBoundEnumsAndBodiesReachTheHandler() async throws {
        let client = KeysClient(transport: authenticated)
        #expect(try await client.getPreKeyCount(identity: .pni) == PreKeyCount(count: 7, pqCount: 2))
        #expect(try await client.getPreKeyCount(identity: .aci) == PreKeyCount(count: 100, pqCount: 50))
        try await client.setKeys(identity: .pni, preKeys: [EcPreKey(keyId: 1, publicKey: Data([5]))])
        #expect(keys.uploads.current == [SetKeysRequest(identity: .pni, preKeys: [EcPreKey(keyId: 1, publicKey: Data([5]))])])
        let bundle = try await client.getPreKeys(identifier: "alice", deviceId: "3")
        #expect(bundle.devices.first?.deviceId == 3)
    }

    @Test func perRequestKeysTravelAsHeaders() async throws {
        let client = SealedSenderKeysClient(transport: unauthenticated)
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
