import Foundation
import SignalChat
import SwitchboardChat
import SwitchboardGRPC
import SwitchboardRuntime
import Testing

/// A header that call options (or an interceptor) set for a header-bound field is the value
/// the handler sees over both transports: over gRPC the server reads header-bound fields from
/// the call's metadata when it carries them, as the WebSocket router reads them from headers
/// (from the interceptor review: over gRPC the handler saw the message's original value).
@Suite(.timeLimit(.minutes(3)))
struct GRPCHeaderBindingTests {
    /// Echoes the idempotency key it was given as the message id.
    struct EchoRoom: ChatRoomHandler {
        func getHistory(_ request: ChatHistoryRequest, context: ServerContext) async throws(ChatRoom.GetHistoryError) -> ChatHistoryResponse {
            ChatHistoryResponse()
        }
        func sendChatMessage(_ request: SendChatMessageRequest, context: ServerContext) async throws(ChatRoom.SendChatMessageError) -> ChatMessage {
            ChatMessage(id: request.clientMessageId, text: request.text)
        }
        func markRead(_ request: ReadReceipt, context: ServerContext) async throws(ChatRoom.MarkReadError) {}
    }

    static let request = SendChatMessageRequest(chatId: "c1", clientMessageId: "from-the-message", text: "hi")
    static let overriding = CallOptions(timeout: .seconds(60), headers: ["Idempotency-Key": "from-call-options"])

    @Test func callOptionsHeadersReachHeaderBoundFieldsOnBothTransports() async throws {
        let both = try await BothTransports(routes: ChatRoom.routes(EchoRoom()))
        for (name, client) in [("websocket", ChatRoomClient(transport: both.webSocket)), ("grpc", ChatRoomClient(transport: both.grpc))] {
            let plain = try await client.sendChatMessage(Self.request, options: CallOptions(timeout: .seconds(60))).get()
            #expect(plain.id == "from-the-message", "\(name)")
            let overridden = try await client.sendChatMessage(Self.request, options: Self.overriding).get()
            #expect(overridden.id == "from-call-options", "\(name): the handler saw \(overridden.id)")
        }
        await both.close()
    }
}
