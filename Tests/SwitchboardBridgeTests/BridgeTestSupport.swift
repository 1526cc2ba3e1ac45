import Foundation
import SignalChat
import SwitchboardBridge
import SwitchboardRuntime
import SwitchboardSchema

/// The repository's sample schema, compiled once.
enum SampleSchema {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("schema")
    static let schema: Schema = SchemaCompiler.compile(directory: directory).schema!
}

/// Generated handlers that say which endpoint served them and echo what they were sent.
struct BridgeBackend: UsernamesHandler, KeysHandler, ChatRoomHandler {
    static let knownHash = Data([0xFB, 0xFF, 0xBF, 0x00, 0x01])

    func lookUpUsernameHash(_ request: LookUpUsernameHashRequest, context: ServerContext) async throws(Usernames.LookUpUsernameHashError) -> LookUpUsernameHashResponse {
        if request.hash == Self.knownHash { return LookUpUsernameHashResponse(uuid: "aci-1") }
        if request.hash == Data([0xFF]) { throw .rateLimited(retryAfter: .seconds(30)) }
        if request.hash == Data([0x18]) { throw .unrecognized(status: 418, body: Data("teapot".utf8)) }
        if request.hash == Data([0x50]) { throw .unrecognized(status: 503, body: Data()) }
        // Slower than a short bridge timeout, well within the endpoint's own 10 s.
        if request.hash == Data([0x51]) {
            try? await Task.sleep(for: .milliseconds(600))
            return LookUpUsernameHashResponse(uuid: "aci-late")
        }
        throw .notFound
    }

    func setKeys(_ request: SetKeysRequest, context: ServerContext) async throws(Keys.SetKeysError) {}
    func getPreKeyCount(_ request: PreKeyCountRequest, context: ServerContext) async throws(Keys.GetPreKeyCountError) -> PreKeyCount {
        PreKeyCount(count: request.identity == .pni ? 7 : 3)
    }
    func getPreKeys(_ request: GetPreKeysRequest, context: ServerContext) async throws(Keys.GetPreKeysError) -> PreKeyBundle {
        PreKeyBundle(identityKey: Data("account:\(request.identifier)/\(request.deviceId)".utf8))
    }


    func getHistory(_ request: ChatHistoryRequest, context: ServerContext) async throws(ChatRoom.GetHistoryError) -> ChatHistoryResponse {
        ChatHistoryResponse(messages: [ChatMessage(id: request.beforeId ?? "none", text: "limit=\(request.limit)")], hasMore: true)
    }
    func sendChatMessage(_ request: SendChatMessageRequest, context: ServerContext) async throws(ChatRoom.SendChatMessageError) -> ChatMessage {
        if request.text.isEmpty { throw .invalid(ValidationError(field: "text", reason: "must not be empty")) }
        if request.text == "slow" { try? await Task.sleep(for: .seconds(30)) }
        return ChatMessage(id: request.clientMessageId, text: request.text, extras: ["chat": request.chatId])
    }
    func markRead(_ request: ReadReceipt, context: ServerContext) async throws(ChatRoom.MarkReadError) {}
}

/// The sealed-sender twin of `Keys.getPreKeys`: same route, authorized by the access key.
struct SealedKeysBackend: SealedSenderKeysHandler {
    func getPreKeys(_ request: GetPreKeysRequest, context: ServerContext) async throws(SealedSenderKeys.GetPreKeysError) -> PreKeyBundle {
        guard context.headers["Unidentified-Access-Key"] == Data([1, 2, 3]).base64EncodedString() else { throw .unauthorized }
        return PreKeyBundle(identityKey: Data("sealed:\(request.identifier)".utf8))
    }
}

extension StringBridge {
    /// A bridge over the backend, in process.
    static func inProcess(options: Options = Options()) -> StringBridge {
        let backend = BridgeBackend()
        return StringBridge(
            schema: SampleSchema.schema,
            transports: Transports(
                unauthenticated: InProcessTransport(routes: Usernames.routes(backend) + SealedSenderKeys.routes(SealedKeysBackend())),
                authenticated: InProcessTransport(routes: Keys.routes(backend) + ChatRoom.routes(backend))),
            options: options)
    }
}

/// A JSON document as a dictionary, for assertions.
func object(_ document: String?) -> [String: Any] {
    guard let document, let value = try? JSONSerialization.jsonObject(with: Data(document.utf8)) as? [String: Any] else { return [:] }
    return value
}
