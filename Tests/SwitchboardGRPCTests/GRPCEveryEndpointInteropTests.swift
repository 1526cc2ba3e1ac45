import Foundation
import SignalChat
import SwitchboardGRPC
import SwitchboardRuntime
import Testing

/// Every RPC of the sample schema through its generated client and our gRPC transport,
/// answered by grpcio (`Tests/Peers/grpc_peer.py`, serving the `.proto` that `export-proto`
/// writes), in the clear and over TLS. grpcio logs the request as it re-serializes it: decoded
/// as the request's type it must be the request sent, so the fields the WebSocket route binds
/// to the path, the query, a header or the whole body all reached the server inside the
/// message; keys and header-bound fields also arrive as metadata.
@Suite(.timeLimit(.minutes(5)))
struct GRPCEveryEndpointInteropTests {
    /// The authenticated transport's credentials, as the server must see them.
    static let authorization = "Basic dXNlcjpwYXNz"

    /// The sample schema's RPCs (its events are `GRPCEventTests`').
    enum Endpoint: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case lookUpUsernameHash, reserveUsernameHash, deleteUsernameHash
        case setKeys, getPreKeyCount, getPreKeys, sealedSenderGetPreKeys
        case sendMessage, sendSealedMessage
        case getProfile, setProfile
        case listChats
        case getHistory, sendChatMessage, markRead
        case getUploadForm

        var testDescription: String { rawValue }

        var descriptor: EndpointDescriptor {
            switch self {
            case .lookUpUsernameHash: Usernames.lookUpUsernameHash
            case .reserveUsernameHash: AccountUsernames.reserveUsernameHash
            case .deleteUsernameHash: AccountUsernames.deleteUsernameHash
            case .setKeys: Keys.setKeys
            case .getPreKeyCount: Keys.getPreKeyCount
            case .getPreKeys: Keys.getPreKeys
            case .sealedSenderGetPreKeys: SealedSenderKeys.getPreKeys
            case .sendMessage: Messages.sendMessage
            case .sendSealedMessage: SealedSenderMessages.sendSealedMessage
            case .getProfile: Profiles.getProfile
            case .setProfile: Profiles.setProfile
            case .listChats: ChatLobby.listChats
            case .getHistory: ChatRoom.getHistory
            case .sendChatMessage: ChatRoom.sendChatMessage
            case .markRead: ChatRoom.markRead
            case .getUploadForm: Attachments.getUploadForm
            }
        }
    }

    /// One call: what went, and what came back.
    struct Exchange: Sendable {
        /// The request as the client serializes it; empty for an endpoint that takes none.
        var sent: [UInt8]
        /// Whether bytes decode, as the request's type, to the request sent.
        var isSent: @Sendable ([UInt8]) -> Bool
        var succeeded: Bool
        /// The result, for failure messages.
        var result: String
        /// The response's first string field, which grpc_peer.py fills, for responses that have one.
        var answer: String?
        var expectedAnswer: String?
        /// Metadata the server must have got; a nil value: must not have got that name.
        var metadata: [String: String?]
    }

    static func exchange<Request: ProtoMessage, Success: Sendable, Failure: Error & Sendable>(
        _ request: Request, _ result: RequestResult<Success, Failure>, answer: (Success) -> String? = { _ in nil },
        expected: String? = nil, metadata: [String: String?]
    ) -> Exchange {
        Exchange(sent: request.serializedBytes(), isSent: { bytes in (try? Request(serializedBytes: bytes)) == request },
                 succeeded: result.isSuccess, result: "\(result)", answer: result.value.flatMap(answer), expectedAnswer: expected,
                 metadata: metadata)
    }

    /// `metadata` with `name` expected to be `value`.
    static func with(_ metadata: [String: String?], _ name: String, _ value: String) -> [String: String?] {
        var metadata = metadata
        metadata.updateValue(value, forKey: name)
        return metadata
    }

    /// What grpc_peer.py puts in a response's first string field: "ok" and the request's size.
    static func ok(_ request: some ProtoMessage) -> String { "ok \(request.serializedBytes().count)" }

    /// Calls `endpoint` with a request that sets every field the route binds (and more).
    static func call(_ endpoint: Endpoint, account: GRPCClientTransport<Authenticated>, anonymous: GRPCClientTransport<Unauthenticated>,
                     options: CallOptions) async -> Exchange {
        let signedIn: [String: String?] = ["authorization": authorization]
        let signedOut: [String: String?] = ["authorization": nil]
        let accessKey = AccessKey(Data((1...16).map { UInt8($0) }))
        let keyed = with(signedOut, "unidentified-access-key", accessKey.headerValue)
        let send = SendMessageRequest(destination: "aci-bob", timestamp: Date(timeIntervalSince1970: 1_700_000_000),
                                      messages: [OutgoingMessage(type: EnvelopeType(rawValue: 1), destinationDeviceId: 2, destinationRegistrationId: 77,
                                                                 content: Data([0, 1, 0xfe, 0xff])),
                                                 OutgoingMessage(type: EnvelopeType(rawValue: 3), destinationDeviceId: 3, content: Data([9]))],
                                      online: true, urgent: true, story: false)
        switch endpoint {
        case .lookUpUsernameHash:
            // Path-bound (base64url) over HTTP.
            let request = LookUpUsernameHashRequest(hash: Data((0..<32).map { UInt8($0) }))
            let result = await UsernamesClient(transport: anonymous).lookUpUsernameHash(request, options: options)
            return exchange(request, result, answer: { $0.uuid }, expected: request.hash.map { String(format: "%02x", $0) }.joined(),
                            metadata: signedOut)
        case .reserveUsernameHash:
            let request = ReserveUsernameHashRequest(usernameHashes: [Data(repeating: 1, count: 32), Data(repeating: 2, count: 32)])
            let result = await AccountUsernamesClient(transport: account).reserveUsernameHash(request, options: options)
            return exchange(request, result, metadata: signedIn)
        case .deleteUsernameHash:
            // No request message at all, and google.protobuf.Empty back.
            let result = await AccountUsernamesClient(transport: account).deleteUsernameHash(options: options)
            return exchange(ProtoEmpty(), result, metadata: signedIn)
        case .setKeys:
            // `identity` in the query, the rest as the body (`body *`).
            let request = SetKeysRequest(identity: .pni, preKeys: [EcPreKey(keyId: 1, publicKey: Data([5, 1])), EcPreKey(keyId: 2, publicKey: Data([5, 2]))],
                                         signedPreKey: SignedPreKey(keyId: 3, publicKey: Data([5, 3]), signature: Data([0xaa])),
                                         pqPreKeys: [SignedPreKey(keyId: 4, publicKey: Data([8, 4]), signature: Data([0xbb]))],
                                         pqLastResortPreKey: SignedPreKey(keyId: 5, publicKey: Data([8, 5]), signature: Data([0xcc])))
            let result = await KeysClient(transport: account).setKeys(request, options: options)
            return exchange(request, result, metadata: signedIn)
        case .getPreKeyCount:
            // Query-bound only.
            let request = PreKeyCountRequest(identity: .pni)
            let result = await KeysClient(transport: account).getPreKeyCount(request, options: options)
            return exchange(request, result, metadata: signedIn)
        case .getPreKeys:
            let request = GetPreKeysRequest(identifier: "aci-carol", deviceId: "*")
            let result = await KeysClient(transport: account).getPreKeys(request, options: options)
            return exchange(request, result, metadata: signedIn)
        case .sealedSenderGetPreKeys:
            // A key: metadata, not a field.
            let request = GetPreKeysRequest(identifier: "aci-carol", deviceId: "2")
            let result = await SealedSenderKeysClient(transport: anonymous).getPreKeys(request, accessKey: accessKey, options: options)
            return exchange(request, result, metadata: keyed)
        case .sendMessage:
            let result = await MessagesClient(transport: account).sendMessage(send, options: options)
            return exchange(send, result, metadata: signedIn)
        case .sendSealedMessage:
            let result = await SealedSenderMessagesClient(transport: anonymous).sendSealedMessage(send, accessKey: accessKey, options: options)
            return exchange(send, result, metadata: keyed)
        case .getProfile:
            let request = GetProfileRequest(identifier: "aci-carol", version: "v7")
            let result = await ProfilesClient(transport: account).getProfile(request, options: options)
            return exchange(request, result, answer: { $0.version }, expected: ok(request), metadata: signedIn)
        case .setProfile:
            // google.protobuf.Empty back.
            let request = SetProfileRequest(version: "v8", name: Data([1, 2, 3]), about: Data([4]), avatar: AvatarChange(rawValue: 2), badgeIds: ["b1", "b2"])
            let result = await ProfilesClient(transport: account).setProfile(request, options: options)
            return exchange(request, result, metadata: signedIn)
        case .listChats:
            // Query-bound only (`before_id`, `limit`).
            let request = ListChatsRequest(beforeId: "chat-9", limit: 25)
            let result = await ChatLobbyClient(transport: account).listChats(request, options: options)
            return exchange(request, result, answer: { $0.nextBeforeId }, expected: ok(request), metadata: signedIn)
        case .getHistory:
            // Path- and query-bound.
            let request = ChatHistoryRequest(chatId: "room-1", beforeId: "m-7", limit: 50)
            let result = await ChatRoomClient(transport: account).getHistory(request, options: options)
            return exchange(request, result, metadata: signedIn)
        case .sendChatMessage:
            // `clientMessageId` is bound to the Idempotency-Key header: in the message and in the metadata.
            let request = SendChatMessageRequest(chatId: "room-1", clientMessageId: "client-42", text: "hello \u{e9}", attachmentIds: ["a1", "a2"],
                                                 replyTo: "m-3")
            let result = await ChatRoomClient(transport: account).sendChatMessage(request, options: options)
            return exchange(request, result, answer: { $0.id }, expected: ok(request),
                            metadata: with(signedIn, "idempotency-key", "client-42"))
        case .markRead:
            // Path-bound chat, and google.protobuf.Empty back.
            let request = ReadReceipt(chatId: "room-1", upToMessageId: "m-9", readAt: ProtoTimestamp(seconds: 1_700_000_000, nanos: 5))
            let result = await ChatRoomClient(transport: account).markRead(request, options: options)
            return exchange(request, result, metadata: signedIn)
        case .getUploadForm:
            // No request message at all.
            let result = await AttachmentsClient(transport: account).getUploadForm(options: options)
            return exchange(ProtoEmpty(), result, answer: { $0.key }, expected: "ok 0", metadata: signedIn)
        }
    }

    @Test(arguments: Endpoint.allCases, GRPCPeer.Security.allCases)
    func everyEndpointReachesGrpcioWithTheWholeRequest(endpoint: Endpoint, security: GRPCPeer.Security) async throws {
        let peer = try await GRPCPeer.shared(security)
        let account: GRPCClientTransport<Authenticated> = try await GRPCInteropTests.transport(peer, security, metadata: ["Authorization": Self.authorization])
        let anonymous: GRPCClientTransport<Unauthenticated> = try await GRPCInteropTests.transport(peer, security)
        // Tells this call's event from every other test's on the shared peer.
        let token = "every:\(endpoint.rawValue):\(UUID().uuidString)"
        let exchange = await Self.call(endpoint, account: account, anonymous: anonymous,
                                       options: CallOptions(timeout: .seconds(30), headers: ["x-test": token]))
        account.close()
        anonymous.close()
        #expect(exchange.succeeded, "\(exchange.result)")
        #expect(exchange.answer == exchange.expectedAnswer, "\(exchange.result)")
        let logged = await peer.event { $0.metadata["x-test"] == token }
        let event = try #require(logged, "grpcio logged no call of \(endpoint)")
        #expect(event.method == "/" + endpoint.descriptor.rpcName)
        #expect(event.size == exchange.sent.count)
        let seen = try #require(event.requestBytes, "no request bytes in the event")
        #expect(exchange.isSent(seen), "grpcio got \(seen), the client sent \(exchange.sent)")
        for (name, expected) in exchange.metadata {
            #expect(event.metadata[name] == expected, "\(name) in \(event.metadata)")
        }
        #expect(event.metadata["user-agent"]?.hasPrefix("switchboard-grpc-swift") == true, "\(event.metadata)")
        #expect(event.cancelled == false)
    }

    /// The list above is every RPC the exported `.proto` declares (besides the event methods
    /// `SwitchboardEvents` and `SwitchboardAcknowledge`), so a new endpoint is not left out.
    @Test func theEndpointsAreEveryRPCOfTheSampleSchema() throws {
        let proto = try GRPCPeer.exportedProto()
        var service = ""
        var methods: Set<String> = []
        for line in proto.split(separator: "\n") {
            let words = line.split(separator: " ")
            guard words.count > 1 else { continue }
            if words[0] == "service" { service = String(words[1]) }
            if words[0] == "rpc", let name = words[1].split(separator: "(").first, !name.hasPrefix("Switchboard") {
                methods.insert("signal.chat.\(service)/\(name)")
            }
        }
        #expect(methods.count == Endpoint.allCases.count)
        #expect(methods == Set(Endpoint.allCases.map(\.descriptor.rpcName)))
    }
}
