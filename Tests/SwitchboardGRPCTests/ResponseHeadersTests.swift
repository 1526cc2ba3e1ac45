import Foundation
import SignalChat
import SwitchboardChat
import SwitchboardGRPC
import SwitchboardRuntime
import Testing

/// A handler's response headers (`ServerContext.responseHeaders`) reach the caller's
/// `ResponseCapture` on every transport, with a success and with a declared error: over the
/// WebSocket as the response's headers, over gRPC as metadata (initial with a success,
/// trailing with an error).
@Suite(.timeLimit(.minutes(3)))
struct ResponseHeadersTests {
    /// Answers with an ETag and a request id; `getHistory` fails with 404 and a reason header.
    struct TaggingRoom: ChatRoomHandler {
        func getHistory(_ request: ChatHistoryRequest, context: ServerContext) async throws(ChatRoom.GetHistoryError) -> ChatHistoryResponse {
            context.responseHeaders.add("X-Missing-Reason", "no such chat")
            throw .notFound
        }
        func sendChatMessage(_ request: SendChatMessageRequest, context: ServerContext) async throws(ChatRoom.SendChatMessageError) -> ChatMessage {
            context.responseHeaders.add("ETag", "\"v-\(request.clientMessageId)\"")
            context.responseHeaders.set("X-Request-Id", "first")
            context.responseHeaders.set("x-request-id", "r-42")
            // Belongs to the body: not taken from here.
            context.responseHeaders.add("Content-Type", "text/html")
            return ChatMessage(id: request.clientMessageId, text: request.text)
        }
        func markRead(_ request: ReadReceipt, context: ServerContext) async throws(ChatRoom.MarkReadError) {}
    }

    static let credentials = BothTransports.credentials

    @Test func handlerHeadersReachTheCallerOnEveryTransport() async throws {
        let routes = ChatRoom.routes(TaggingRoom())
        let both = try await BothTransports(routes: routes)
        let inProcess = InProcessTransport<Authenticated>(router: RPCRouter(routes: routes))
        let clients: [(String, ChatRoomClient)] = [("websocket", ChatRoomClient(transport: both.webSocket)), ("grpc", ChatRoomClient(transport: both.grpc)),
                                                   ("in-process", ChatRoomClient(transport: inProcess))]
        for (name, client) in clients {
            let capture = ResponseCapture()
            let message = try await client.sendChatMessage(SendChatMessageRequest(chatId: "c1", clientMessageId: "m1", text: "hi"),
                                                           options: CallOptions(timeout: .seconds(60), responseCapture: capture)).get()
            #expect(message.id == "m1", "\(name)")
            #expect(capture.status == 200, "\(name)")
            #expect(capture.headers["etag"] == "\"v-m1\"", "\(name): \(capture.headers)")
            #expect((try? capture.headers.onlyValue("X-Request-Id")) == "r-42", "\(name): \(capture.headers)")
            // The body's own content type (JSON for this service, protobuf over gRPC), not the handler's.
            #expect(capture.headers["Content-Type"].flatMap(BodyEncoding.init(contentType:)) != nil, "\(name): \(capture.headers)")

            let failure = ResponseCapture()
            let history = await client.getHistory(ChatHistoryRequest(chatId: "c1"), options: CallOptions(timeout: .seconds(60), responseCapture: failure))
            guard case .nonSuccess(.notFound) = history else {
                Issue.record("\(name): \(history)")
                continue
            }
            #expect(failure.status == 404, "\(name)")
            #expect(failure.headers.fields.filter { $0.name.lowercased() == "x-missing-reason" }.map(\.value) == ["no such chat"], "\(name): \(failure.headers)")
            // Over gRPC an error is trailers only: its metadata is trailing, and counted once.
            #expect(failure.trailers["X-Missing-Reason"] == (name == "grpc" ? "no such chat" : nil), "\(name): \(failure.trailers)")
            #expect(capture.trailers.fields.isEmpty, "\(name): a success's metadata came before its message: \(capture.trailers)")
        }
        await both.close()
    }

    /// Copies the ETag of the response it passes on into a header of its own.
    struct ETagWitness: ServerInterceptor {
        func intercept(_ request: ServerRequest, context: ServerContext,
                       next: @Sendable (ServerRequest, ServerContext) async -> RPCResponse) async -> RPCResponse {
            var response = await next(request, context)
            response.headers.add("X-Seen-ETag", response.headers["ETag"] ?? "none")
            return response
        }
    }

    @Test func interceptorsSeeTheHandlersHeadersOnceInTheResponse() async throws {
        let router = RPCRouter(routes: ChatRoom.routes(TaggingRoom()), interceptors: [ETagWitness()])
        for (name, transport) in [("path", InProcessTransport<Authenticated>(router: router))] {
            let capture = ResponseCapture()
            _ = try await ChatRoomClient(transport: transport).sendChatMessage(SendChatMessageRequest(chatId: "c1", clientMessageId: "m2", text: "hi"),
                                                                               options: CallOptions(responseCapture: capture)).get()
            #expect(capture.headers["X-Seen-ETag"] == "\"v-m2\"", "\(name): \(capture.headers)")
            #expect(capture.headers.fields.filter { $0.name == "ETag" }.count == 1, "\(name): \(capture.headers)")
        }
        // The whole-message path (gRPC's) too.
        let response = await router.handleMessage(rpcName: ChatRoom.sendChatMessage.rpcName,
                                                  body: SendChatMessageRequest(chatId: "c1", clientMessageId: "m3", text: "hi").serializedData(),
                                                  headers: ["Authorization": Self.credentials.authorization], auth: .account)
        #expect(response.headers["X-Seen-ETag"] == "\"v-m3\"", "\(response.headers)")
        #expect(response.headers.fields.filter { $0.name == "ETag" }.count == 1)
    }

    /// Refuses every call with 429 itself, naming a header before and after deciding.
    struct Refuser: ServerInterceptor {
        func intercept(_ request: ServerRequest, context: ServerContext,
                       next: @Sendable (ServerRequest, ServerContext) async -> RPCResponse) async -> RPCResponse {
            context.responseHeaders.set("Retry-After", "7")
            context.responseHeaders.add("X-Refused-By", "refuser")
            return RPCResponse(status: 429, headers: ["Retry-After": "5"], message: "Too Many Requests")
        }
    }

    /// Adds a header of its own after the handler has answered.
    struct LateTagger: ServerInterceptor {
        func intercept(_ request: ServerRequest, context: ServerContext,
                       next: @Sendable (ServerRequest, ServerContext) async -> RPCResponse) async -> RPCResponse {
            let response = await next(request, context)
            context.responseHeaders.add("X-Late", "after")
            return response
        }
    }

    @Test func interceptorsThatAnswerThemselvesOrAddLateSendTheirHeaders() async throws {
        let request = SendChatMessageRequest(chatId: "c1", clientMessageId: "m4", text: "hi")
        let refusing = RPCRouter(routes: ChatRoom.routes(TaggingRoom()), interceptors: [Refuser()])
        let refused = ResponseCapture()
        let result = await ChatRoomClient(transport: InProcessTransport<Authenticated>(router: refusing))
            .sendChatMessage(request, options: CallOptions(responseCapture: refused))
        guard case .nonSuccess(.rateLimited(retryAfter: .seconds(7))) = result else {
            Issue.record("\(result): `set` should have replaced the response's own Retry-After")
            return
        }
        #expect(refused.status == 429)
        #expect(refused.headers.fields.filter { $0.name.lowercased() == "retry-after" }.map(\.value) == ["7"], "\(refused.headers)")
        #expect(refused.headers["X-Refused-By"] == "refuser")

        let late = RPCRouter(routes: ChatRoom.routes(TaggingRoom()), interceptors: [LateTagger()])
        for answer in [await late.handleMessage(rpcName: ChatRoom.sendChatMessage.rpcName, body: request.serializedData(),
                                                headers: ["Authorization": Self.credentials.authorization], auth: .account),
                       await late.handle(ServerRequest(verb: "POST", path: "/v1/chats/c1/messages",
                                                       headers: ["Idempotency-Key": "m4", "Content-Type": "application/json"],
                                                       body: Data(#"{"text":"hi"}"#.utf8)), auth: .account)] {
            #expect(answer.status == 200, "\(answer)")
            #expect(answer.headers.fields.filter { $0.name == "X-Late" }.map(\.value) == ["after"], "\(answer.headers)")
            #expect(answer.headers.fields.filter { $0.name == "ETag" }.count == 1, "\(answer.headers)")
        }
    }

    @Test func headersNoTransportCarriesAlikeAreRefused() {
        let headers = ServerResponseHeaders()
        #expect(!headers.add("grpc-status", "0"))
        #expect(!headers.add("Switchboard-Status", "404"))
        #expect(!headers.set("Content-Type", "text/html"))
        #expect(!headers.add("content-length", "3"))
        #expect(!headers.add(":status", "200"))
        #expect(!headers.add("Bad Name", "x"))
        #expect(!headers.add("X-Split", "a\r\nInjected: yes"))
        #expect(!headers.add("", "x"))
        #expect(headers.add("X-Fine_Name.1", "any text, even ünïcode"))
        #expect(headers.fields.fields.map(\.name) == ["X-Fine_Name.1"])
    }

    @Test func mocksFillTheCaptureFromTheirScriptedHeaders() async {
        let mock = MockChatRoomService()
        mock.sendChatMessageMock.stub(returning: .success(ChatMessage(id: "m5", text: "hi")))
        mock.sendChatMessageMock.setResponseHeaders(["ETag": "\"v5\""])
        let capture = ResponseCapture()
        let result = await mock.sendChatMessage(SendChatMessageRequest(chatId: "c1", clientMessageId: "m5", text: "hi"),
                                                options: CallOptions(responseCapture: capture))
        #expect(result.value?.id == "m5")
        #expect(capture.status == 200)
        #expect(capture.headers["ETag"] == "\"v5\"")
        mock.sendChatMessageMock.stub(returning: .failure(.timeout))
        _ = await mock.sendChatMessage(SendChatMessageRequest(chatId: "c1", clientMessageId: "m6", text: "hi"),
                                       options: CallOptions(responseCapture: capture))
        #expect(capture.status == nil)
        #expect(capture.headers.fields.isEmpty)
    }

    @Test func aCaptureKeepsNothingWithoutAResponse() async throws {
        let capture = ResponseCapture()
        capture.record(RPCResponse(status: 200, headers: ["ETag": "\"from-an-earlier-call\""], message: "OK"))
        // Nothing listens here: the call fails in the transport, with no response to keep,
        // and nothing from an earlier call stays.
        let grpc = GRPCClientTransport<Authenticated>(host: "127.0.0.1", port: 1)
        let result = await ChatRoomClient(transport: grpc).sendChatMessage(SendChatMessageRequest(chatId: "c1", clientMessageId: "m1", text: "hi"),
                                                                          options: CallOptions(timeout: .seconds(5), responseCapture: capture))
        guard case .failure = result else {
            Issue.record("\(result)")
            return
        }
        #expect(capture.status == nil)
        #expect(capture.headers.fields.isEmpty)
        grpc.close()
    }

    @Test func eachGRPCAttemptStartsItsCaptureEmpty() async {
        // What an earlier attempt of a retried call recorded (a status's metadata) does not
        // outlive the next attempt, which here fails with nothing to record.
        let capture = ResponseCapture()
        capture.record(status: nil, headers: ["x-request-id": "attempt-1"], trailers: ["x-request-id": "attempt-1"])
        let grpc = GRPCClientTransport<Authenticated>(host: "127.0.0.1", port: 1)
        var request = RPCRequest(endpoint: ChatRoom.sendChatMessage, path: "/", deadline: .now + .seconds(5),
                                 message: SendChatMessageRequest(chatId: "c1", clientMessageId: "m7", text: "hi"))
        request.responseCapture = capture
        await #expect(throws: TransportError.self) { _ = try await grpc.send(request) }
        #expect(capture.headers.fields.isEmpty && capture.trailers.fields.isEmpty, "\(capture.headers)")
        grpc.close()
    }

    @Test func aCallFromACancelledTaskLeavesNoEarlierResponseInTheCapture() async {
        let capture = ResponseCapture()
        capture.record(RPCResponse(status: 200, headers: ["ETag": "\"earlier\""], message: "OK"))
        let client = ChatRoomClient(transport: InProcessTransport<Authenticated>(router: RPCRouter(routes: ChatRoom.routes(TaggingRoom()))))
        let call = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await client.sendChatMessage(SendChatMessageRequest(chatId: "c1", clientMessageId: "m8", text: "hi"),
                                                options: CallOptions(responseCapture: capture))
        }
        guard case .failure(.cancelled) = await call.value else {
            Issue.record("expected cancelled")
            return
        }
        #expect(capture.status == nil && capture.headers.fields.isEmpty)
    }

    @Test func capturesAndOptionsCompareByIdentity() {
        let capture = ResponseCapture()
        #expect(CallOptions(responseCapture: capture) == CallOptions(responseCapture: capture))
        #expect(CallOptions(responseCapture: capture) != CallOptions(responseCapture: ResponseCapture()))
    }
}
