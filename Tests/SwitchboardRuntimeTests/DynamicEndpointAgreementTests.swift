import Foundation
import SignalChat
import SwitchboardDynamic
import SwitchboardRuntime
import SwitchboardSchema
import Testing

/// Keeps the last request a generated client sent and answers with a fixed response.
final class CapturingTransport<Auth: AuthMode>: RPCTransport, @unchecked Sendable {
    let captured = Locked<RPCRequest?>(nil)
    let response: RPCResponse
    init(response: RPCResponse = RPCResponse(status: 200)) { self.response = response }
    func send(_ request: RPCRequest) async throws(TransportError) -> RPCResponse {
        captured.withLock { $0 = request }
        return response
    }
}

/// `call` builds requests from JSON with the schema read at run time; they must match what
/// the generated client builds from its types, binding for binding.
@Suite struct DynamicEndpointAgreementTests {
    static let schema = DynamicCodecAgreementTests.signal

    func dynamicRequest(_ name: String, _ json: String, keys: [String: String] = [:]) throws -> RPCRequest {
        try DynamicEndpoint(schema: Self.schema, name: name).request(fromJSON: Data(json.utf8), keys: keys)
    }

    func expectSame(_ dynamic: RPCRequest, _ generated: RPCRequest?, sourceLocation: Testing.SourceLocation = #_sourceLocation) throws {
        let generated = try #require(generated, sourceLocation: sourceLocation)
        #expect(dynamic.verb == generated.verb, sourceLocation: sourceLocation)
        #expect(dynamic.path == generated.path, sourceLocation: sourceLocation)
        #expect(dynamic.headers == generated.headers, sourceLocation: sourceLocation)
        #expect(dynamic.endpoint.rpcName == generated.endpoint.rpcName, sourceLocation: sourceLocation)
        #expect(dynamic.endpoint.auth == generated.endpoint.auth, sourceLocation: sourceLocation)
    }

    @Test func base64URLPathAndJSONResponse() async throws {
        let transport = CapturingTransport<Unauthenticated>()
        _ = await UsernamesClient(transport: transport).lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([0xFB, 0xFF, 0x00])))
        let dynamic = try dynamicRequest("Usernames.lookUpUsernameHash", #"{"hash": "+/8A"}"#)
        try expectSame(dynamic, transport.captured.current)
        #expect(dynamic.body == nil)
    }

    @Test func percentEncodedPathAndOptionalQuery() async throws {
        let transport = CapturingTransport<Authenticated>()
        _ = await ChatRoomClient(transport: transport).getHistory(ChatHistoryRequest(chatId: "room 1/ü?&", beforeId: "m 9", limit: 25))
        try expectSame(try dynamicRequest("ChatRoom.getHistory", #"{"chatId": "room 1/ü?&", "beforeId": "m 9", "limit": 25}"#), transport.captured.current)
        _ = await ChatRoomClient(transport: transport).getHistory(ChatHistoryRequest(chatId: "r"))
        try expectSame(try dynamicRequest("signal.chat.ChatRoom/GetHistory", #"{"chatId": "r"}"#), transport.captured.current)
    }

    @Test func headerBindingAndJSONBodyWithoutBoundFields() async throws {
        let transport = CapturingTransport<Authenticated>()
        let typed = SendChatMessageRequest(chatId: "c9", clientMessageId: "client-42", text: "Hallo 👋", replyTo: "m1")
        _ = await ChatRoomClient(transport: transport).sendChatMessage(typed)
        let dynamic = try dynamicRequest("ChatRoom.sendChatMessage", #"{"chatId": "c9", "clientMessageId": "client-42", "text": "Hallo 👋", "replyTo": "m1"}"#)
        try expectSame(dynamic, transport.captured.current)
        let generatedBody = try #require(transport.captured.current?.body)
        let dynamicBody = try #require(dynamic.body)
        #expect(try SendChatMessageRequest(jsonUTF8Bytes: Array(dynamicBody)) == SendChatMessageRequest(jsonUTF8Bytes: Array(generatedBody)))
    }

    @Test func aSingularParameterGivenTwiceIsRefusedAsGeneratedHandlersDo() throws {
        let endpoint = try DynamicEndpoint(schema: Self.schema, name: "ChatRoom.getHistory")
        let once = try endpoint.requestMessage(pathParameters: ["chatId": "x"], query: "limit=5", jsonBody: Data())
        #expect(once != nil)
        #expect(throws: DynamicCodecError.self) {
            try endpoint.requestMessage(pathParameters: ["chatId": "x"], query: "limit=5&limit=500", jsonBody: Data())
        }
        let send = try DynamicEndpoint(schema: Self.schema, name: "ChatRoom.sendChatMessage")
        let oneKey = try send.requestMessage(pathParameters: ["chatId": "x"], query: "", headers: ["Idempotency-Key": "a"], jsonBody: Data("{}".utf8))
        #expect(oneKey != nil)
        #expect(throws: DynamicCodecError.self) {
            try send.requestMessage(pathParameters: ["chatId": "x"], query: "", headers: ["Idempotency-Key": "a", "IDEMPOTENCY-KEY": "b"], jsonBody: Data("{}".utf8))
        }
    }

    @Test func enumQueryAndProtobufBodyStar() async throws {
        let transport = CapturingTransport<Authenticated>()
        let typed = SetKeysRequest(identity: .pni, preKeys: [EcPreKey(keyId: 1, publicKey: Data([5]))])
        _ = await KeysClient(transport: transport).setKeys(typed)
        let dynamic = try dynamicRequest("Keys.setKeys", #"{"identity": "PNI", "preKeys": [{"keyId": 1, "publicKey": "BQ=="}]}"#)
        try expectSame(dynamic, transport.captured.current)
        #expect(dynamic.body == transport.captured.current?.body, "protobuf bodies are byte-identical")
    }

    @Test func perRequestKeysBecomeHeaders() async throws {
        let transport = CapturingTransport<Unauthenticated>()
        let key = AccessKey(Data(repeating: 7, count: 16))
        _ = await SealedSenderKeysClient(transport: transport).getPreKeys(GetPreKeysRequest(identifier: "alice", deviceId: "*"), accessKey: key)
        let dynamic = try dynamicRequest("SealedSenderKeys.getPreKeys", #"{"identifier": "alice", "deviceId": "*"}"#, keys: ["accessKey": key.headerValue])
        try expectSame(dynamic, transport.captured.current)
        #expect(throws: DynamicCodecError.self) { try dynamicRequest("SealedSenderKeys.getPreKeys", #"{"identifier": "a", "deviceId": "1"}"#) }
        #expect(throws: DynamicCodecError.self) { try dynamicRequest("Keys.getPreKeys", #"{"identifier": "a"}"#, keys: ["accessKey": "x"]) }
    }

    /// An empty path slot would leave an empty segment: both clients refuse it, and a
    /// missing one, before anything is sent.
    @Test func emptyPathSlotsAreRefusedAlike() async throws {
        let transport = CapturingTransport<Authenticated>()
        let result = await ProfilesClient(transport: transport).getProfile(GetProfileRequest(identifier: "alice", version: ""))
        guard case .invalidRequest? = result.transportError else {
            Issue.record("expected invalidRequest, got \(result)")
            return
        }
        #expect(transport.captured.current == nil)
        #expect(throws: DynamicCodecError.self) { try dynamicRequest("Profiles.getProfile", #"{"identifier": "alice", "version": ""}"#) }
        #expect(throws: DynamicCodecError.self) { try dynamicRequest("Profiles.getProfile", #"{"identifier": "alice"}"#) }
    }

    @Test func endpointsWithoutARequestMessage() async throws {
        let transport = CapturingTransport<Authenticated>()
        _ = await AccountUsernamesClient(transport: transport).deleteUsernameHash()
        try expectSame(try dynamicRequest("AccountUsernames.deleteUsernameHash", ""), transport.captured.current)
        #expect(throws: DynamicCodecError.self) { try dynamicRequest("AccountUsernames.deleteUsernameHash", #"{"x": 1}"#) }
    }

    @Test func unknownEndpointsListWhatExists() throws {
        do {
            _ = try DynamicEndpoint(schema: Self.schema, name: "Usernames.lookup")
            Issue.record("expected an error")
        } catch {
            #expect(error.message.contains("Usernames.lookUpUsernameHash"))
        }
    }

    @Test func responsesReadAsTheTypedResultDoes() throws {
        let endpoint = try DynamicEndpoint(schema: Self.schema, name: "ChatRoom.sendChatMessage")
        let ok = RPCResponse.ok(ChatMessage(id: "m1", text: "hi"), encoding: .json)
        guard case let .success(message?) = try endpoint.outcome(of: ok) else {
            Issue.record("2xx is success")
            return
        }
        #expect(try ChatMessage(jsonString: DynamicJSONCodec(schema: Self.schema).encode(message)) == ChatMessage(id: "m1", text: "hi"))
        let invalid = ChatRoom.SendChatMessageError.invalid(ValidationError(field: "text", reason: "empty")).response(encoding: .json)
        guard case let .declaredError("invalid", 422, body?, nil) = try endpoint.outcome(of: invalid) else {
            Issue.record("422 is the declared invalid error with its body")
            return
        }
        #expect(try ValidationError(jsonString: DynamicJSONCodec(schema: Self.schema).encode(body)) == ValidationError(field: "text", reason: "empty"))
        let limited = ChatRoom.SendChatMessageError.rateLimited(retryAfter: .seconds(30)).response(encoding: .json)
        #expect(try endpoint.outcome(of: limited) == .declaredError(name: "rateLimited", status: 429, body: nil, retryAfter: .seconds(30)))
        #expect(try endpoint.outcome(of: RPCResponse(status: 418, body: Data("tea".utf8))) == .undeclaredStatus(418, body: Data("tea".utf8)))
    }

    /// A server on a newer schema may add members and enum names to what it answers:
    /// generated clients skip them (`ignoreUnknownFields`), and so must `call` and the
    /// bridge, which refused such a 200 as "does not decode". Requests stay strict.
    @Test func responsesWithMembersAndEnumNamesTheSchemaDoesNotKnowReadAsTheTypedResultDoes() async throws {
        let endpoint = try DynamicEndpoint(schema: Self.schema, name: "ChatRoom.sendChatMessage")
        let headers: RPCHeaders = ["Content-Type": BodyEncoding.json.contentType]
        let json = #"{"id":"m1","futureMember":{"deep":[1,"two",null,{"x":true}]},"text":"hi","status":"delivered","#
            + #""reactions":[{"emoji":"+1","userIds":["7"],"addedBy":"n"}],"extras":{"k":"v"}}"#
        let ok = RPCResponse(status: 200, headers: headers, body: Data(json.utf8), message: "OK")
        let request = SendChatMessageRequest(chatId: "c1", clientMessageId: "m1", text: "hi")
        let typed = await ChatRoomClient(transport: CapturingTransport<Authenticated>(response: ok)).sendChatMessage(request)
        let generated = try #require(typed.value, "the generated client reads it")
        #expect(generated.status == .sending, "an unknown enum name leaves the field unset")
        #expect(generated.reactions.first?.userIds == [7])
        guard case let .success(message?) = try endpoint.outcome(of: ok) else {
            Issue.record("a 2xx with unknown members is success, as for the generated client")
            return
        }
        #expect(try ChatMessage(jsonString: DynamicJSONCodec(schema: Self.schema).encode(message)) == generated)
        #expect(message.fields[4] == nil, "the unknown enum name is skipped, not kept")

        // A declared error's body likewise.
        let errorJSON = #"{"field":"text","hint":"shorter","reason":"empty"}"#
        let invalid = RPCResponse(status: 422, headers: headers, body: Data(errorJSON.utf8))
        let typedError = await ChatRoomClient(transport: CapturingTransport<Authenticated>(response: invalid)).sendChatMessage(request)
        guard case let .nonSuccess(.invalid(generatedBody)) = typedError else {
            Issue.record("the generated client reads the 422 body, got \(typedError)")
            return
        }
        guard case let .declaredError("invalid", 422, body?, nil) = try endpoint.outcome(of: invalid) else {
            Issue.record("422 with an unknown member is the declared invalid error with its body")
            return
        }
        #expect(try ValidationError(jsonString: DynamicJSONCodec(schema: Self.schema).encode(body)) == generatedBody)

        // What a person types is still held to the schema.
        #expect(throws: DynamicCodecError.self) {
            try dynamicRequest("ChatRoom.sendChatMessage", #"{"chatId": "c1", "txt": "hi"}"#)
        }
        #expect(throws: DynamicCodecError.self) {
            try dynamicRequest("ChatRoom.getHistory", #"{"chatId": "c1", "extra": 1}"#)
        }
    }
}
