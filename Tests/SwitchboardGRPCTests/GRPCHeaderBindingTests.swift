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

    static let credentials = ChatClient.Credentials(username: "aci-1", deviceID: 1, password: "pw")
    static let request = SendChatMessageRequest(chatId: "c1", clientMessageId: "from-the-message", text: "hi")
    static let overriding = CallOptions(timeout: .seconds(60), headers: ["Idempotency-Key": "from-call-options"])

    @Test func callOptionsHeadersReachHeaderBoundFieldsOnBothTransports() async throws {
        let routes = ChatRoom.routes(EchoRoom())
        let chatServer = try ChatServer(routes: routes)
        defer { chatServer.stop() }
        let webSocket = try await ChatClient.connectAuthenticated(to: chatServer.url, credentials: Self.credentials)
        var grpcOptions = GRPCClientOptions()
        grpcOptions.metadata.add("Authorization", Self.credentials.authorization)
        let grpcServer = try GRPCServer(router: RPCRouter(routes: routes))
        let grpc = GRPCClientTransport<Authenticated>(host: "127.0.0.1", port: grpcServer.port, options: grpcOptions)
        for (name, client) in [("websocket", ChatRoomClient(transport: webSocket)), ("grpc", ChatRoomClient(transport: grpc))] {
            let plain = try await client.sendChatMessage(Self.request, options: CallOptions(timeout: .seconds(60))).get()
            #expect(plain.id == "from-the-message", "\(name)")
            let overridden = try await client.sendChatMessage(Self.request, options: Self.overriding).get()
            #expect(overridden.id == "from-call-options", "\(name): the handler saw \(overridden.id)")
        }
        await webSocket.close()
        grpc.close()
        await grpcServer.shutdown()
    }
}
