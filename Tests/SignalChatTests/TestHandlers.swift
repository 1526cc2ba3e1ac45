import Foundation
import SignalChat
import SwitchboardRuntime

/// Server handlers for the in-process tests: they echo what they were sent, so a test
/// can see that path, query, header and body bindings survived the trip.
struct TestUsernames: UsernamesHandler {
    static let known = Data([0xFB, 0xFF, 0xBF, 0x00, 0x01])
    static let rateLimited = Data([0xFF])

    func lookUpUsernameHash(_ request: LookUpUsernameHashRequest, context: ServerContext) async throws(Usernames.LookUpUsernameHashError) -> LookUpUsernameHashResponse {
        if request.hash == Self.known { return LookUpUsernameHashResponse(uuid: "aci-for-" + request.hash.base64EncodedString()) }
        if request.hash == Self.rateLimited { throw .rateLimited(retryAfter: .seconds(30)) }
        if request.hash == Data([0x18]) { throw .unrecognized(status: 418, body: Data("teapot".utf8)) }
        throw .notFound
    }
}

struct TestChatRoom: ChatRoomHandler {
    func getHistory(_ request: ChatHistoryRequest, context: ServerContext) async throws(ChatRoom.GetHistoryError) -> ChatHistoryResponse {
        if request.chatId == "missing" { throw .notFound }
        // Echo the bound fields back as message texts.
        let echo = ["chat=\(request.chatId)", "before=\(request.beforeId ?? "nil")", "limit=\(request.limit)"]
        return ChatHistoryResponse(messages: echo.map { ChatMessage(text: $0) }, hasMore: request.limit > 0)
    }

    func sendChatMessage(_ request: SendChatMessageRequest, context: ServerContext) async throws(ChatRoom.SendChatMessageError) -> ChatMessage {
        if request.text.isEmpty { throw .invalid(ValidationError(field: "text", reason: "must not be empty")) }
        if request.text == "slow" { try? await Task.sleep(for: .seconds(60)) }
        return ChatMessage(id: request.clientMessageId, text: request.text, extras: ["chat": request.chatId], replyTo: request.replyTo)
    }

    func markRead(_ request: ReadReceipt, context: ServerContext) async throws(ChatRoom.MarkReadError) {
        if request.upToMessageId.isEmpty { throw .forbidden }
    }
}

struct TestKeys: KeysHandler {
    let uploads = Locked<[SetKeysRequest]>([])

    func setKeys(_ request: SetKeysRequest, context: ServerContext) async throws(Keys.SetKeysError) {
        uploads.withLock { $0.append(request) }
    }

    func getPreKeyCount(_ request: PreKeyCountRequest, context: ServerContext) async throws(Keys.GetPreKeyCountError) -> PreKeyCount {
        request.identity == .pni ? PreKeyCount(count: 7, pqCount: 2) : PreKeyCount(count: 100, pqCount: 50)
    }

    func getPreKeys(_ request: GetPreKeysRequest, context: ServerContext) async throws(Keys.GetPreKeysError) -> PreKeyBundle {
        guard request.identifier == "alice" else { throw .notFound }
        return PreKeyBundle(identityKey: Data([1, 2, 3]), devices: [PreKeyBundleDevice(deviceId: UInt32(request.deviceId) ?? 0)])
    }
}

struct TestSealedSenderKeys: SealedSenderKeysHandler {
    static let accessKey = AccessKey(Data(repeating: 7, count: 16))

    func getPreKeys(_ request: GetPreKeysRequest, context: ServerContext) async throws(SealedSenderKeys.GetPreKeysError) -> PreKeyBundle {
        guard context.key(AccessKey.self) == Self.accessKey else { throw .unauthorized }
        return PreKeyBundle(identityKey: Data([9]), devices: [])
    }
}
