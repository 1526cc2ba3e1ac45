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

    /// A header no transport can carry as given is a typed refusal on both, before anything
    /// is sent, not a header dropped or read back as another (a colon in a name would split
    /// the WebSocket envelope's `name:value` line elsewhere); gRPC also refuses a name its
    /// metadata keys cannot spell, and a transport's own metadata is held to the same rules.
    @Test func headersNoTransportCanCarryAreRefusedOnBothTransports() async throws {
        let both = try await BothTransports(routes: ChatRoom.routes(EchoRoom()))
        let clients = [("websocket", ChatRoomClient(transport: both.webSocket)), ("grpc", ChatRoomClient(transport: both.grpc))]
        for headers: RPCHeaders in [["X-Split:Name": "v"], ["Caf\u{E9}": "v"], ["X-Note": "line\r\nX-Injected: 1"], ["X-Nul": "a\u{0}b"]] {
            for (name, client) in clients {
                let result = await client.sendChatMessage(Self.request, options: CallOptions(timeout: .seconds(60), headers: headers))
                guard case let .invalidRequest(reason)? = result.transportError else {
                    Issue.record("\(name), \(headers): expected a refusal, got \(result)")
                    continue
                }
                #expect(reason.contains("header"), "\(name): \(reason)")
            }
        }
        // A token gRPC metadata cannot spell: refused over gRPC, carried over the WebSocket.
        let tokenOnly = CallOptions(timeout: .seconds(60), headers: ["X-Tag!": "v"])
        #expect(try await clients[0].1.sendChatMessage(Self.request, options: tokenOnly).get().id == "from-the-message")
        if case .invalidRequest? = await clients[1].1.sendChatMessage(Self.request, options: tokenOnly).transportError {} else {
            Issue.record("gRPC must refuse a metadata key with '!'")
        }
        // Reserved names are the transport's own: still dropped, not refused.
        let reserved = CallOptions(timeout: .seconds(60), headers: ["Content-Type": "text/plain", "grpc-timeout": "1S"])
        #expect(try await clients[1].1.sendChatMessage(Self.request, options: reserved).get().id == "from-the-message")
        var options = GRPCClientOptions()
        options.metadata.add("Bad Name", "v")
        let badMetadata = GRPCClientTransport<Unauthenticated>(host: "127.0.0.1", port: both.grpcServer.port, options: options)
        if case .invalidRequest? = await UsernamesClient(transport: badMetadata).lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([1]))).transportError {} else {
            Issue.record("a transport's unsendable metadata must fail its calls")
        }
        do {
            let subscription = try await badMetadata.subscribe(toEventsOf: "signal.chat.Messages") { _ in .withhold(reason: "test") }
            subscription.cancel()
            Issue.record("a transport's unsendable metadata must fail its subscriptions")
        } catch {
            if case .invalidRequest = error {} else { Issue.record("expected invalidRequest, got \(error)") }
        }
        #expect(badMetadata.connectionsOpened == 0, "nothing was sent")
        badMetadata.close()
        await both.close()
    }
}
