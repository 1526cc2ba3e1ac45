import Foundation
import SignalChat
import SwitchboardRuntime
import Testing

/// Client and server interceptor chains, through generated clients and handlers.
@Suite struct InterceptorTests {
    /// Records when it sees a call go in and come out, and may add a header.
    struct Recording: ClientInterceptor {
        let name: String
        let trace: Locked<[String]>
        var addHeader: (String, String)?

        func intercept(
            _ request: RPCRequest, next: @Sendable (RPCRequest) async throws(TransportError) -> RPCResponse
        ) async throws(TransportError) -> RPCResponse {
            trace.withLock { $0.append("\(name) in") }
            var request = request
            if let (header, value) = addHeader { request.headers.set(header, value) }
            let response = try await next(request)
            trace.withLock { $0.append("\(name) out \(response.status)") }
            return response
        }
    }

    /// Records the headers each request reached the handler with.
    struct HeaderSpy: ServerInterceptor {
        let seen: Locked<[String]>
        func intercept(
            _ request: ServerRequest, context: ServerContext, next: @Sendable (ServerRequest, ServerContext) async -> RPCResponse
        ) async -> RPCResponse {
            seen.withLock { $0.append("\(context.endpoint?.rpcName ?? "-") \(request.headers["Authorization"] ?? "-")") }
            return await next(request, context)
        }
    }

    @Test func clientInterceptorsRunInOrderAroundTheTransportAndCanAddHeaders() async throws {
        let trace = Locked<[String]>([])
        let seen = Locked<[String]>([])
        let server = InProcessTransport<Unauthenticated>(routes: TestUsernames().routes, interceptors: [HeaderSpy(seen: seen)])
        let client = UsernamesClient(transport: server, interceptors: [
            Recording(name: "outer", trace: trace),
            Recording(name: "auth", trace: trace, addHeader: ("Authorization", "Bearer token-1")),
        ])
        let result = await client.lookUpUsernameHash(LookUpUsernameHashRequest(hash: TestUsernames.known))
        #expect(result.value?.uuid == "aci-for-" + TestUsernames.known.base64EncodedString())
        #expect(trace.withLock { $0 } == ["outer in", "auth in", "auth out 200", "outer out 200"])
        #expect(seen.withLock { $0 } == ["signal.chat.Usernames/LookUpUsernameHash Bearer token-1"])
        // A declared error still arrives typed through the chain.
        let missing = await client.lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([9])))
        #expect(missing.endpointError == .notFound)
    }

    /// An interceptor may answer for the transport; the answer is typed like any other.
    struct Refusing: ClientInterceptor {
        func intercept(
            _ request: RPCRequest, next: @Sendable (RPCRequest) async throws(TransportError) -> RPCResponse
        ) async throws(TransportError) -> RPCResponse {
            if request.endpoint == Usernames.lookUpUsernameHash { return RPCResponse(status: 404) }
            throw .notConnected
        }
    }

    @Test func aClientInterceptorCanAnswerWithoutTheTransport() async {
        let calls = Locked(0)
        let server = InProcessTransport<Unauthenticated>(routes: TestUsernames().routes, interceptors: [CountingServer(calls: calls)])
        let client = UsernamesClient(transport: server.intercepted(by: [Refusing()]))
        #expect(await client.lookUpUsernameHash(LookUpUsernameHashRequest(hash: TestUsernames.known)).endpointError == .notFound)
        #expect(calls.withLock { $0 } == 0)
    }

    /// Refuses every call before it is sent, as one holding credentials does before it has any.
    struct NoCredentialsYet: ClientInterceptor {
        func intercept(
            _ request: RPCRequest, next: @Sendable (RPCRequest) async throws(TransportError) -> RPCResponse
        ) async throws(TransportError) -> RPCResponse {
            throw .invalidRequest("no credentials yet for \(request.endpoint.rpcName)")
        }
    }

    @Test func aClientInterceptorRefusesACallWithATransportErrorAndNothingIsSent() async {
        let calls = Locked(0)
        let server = InProcessTransport<Unauthenticated>(routes: TestUsernames().routes, interceptors: [CountingServer(calls: calls)])
        let client = UsernamesClient(transport: server, interceptors: [NoCredentialsYet()])
        let result = await client.lookUpUsernameHash(LookUpUsernameHashRequest(hash: TestUsernames.known))
        #expect(result.transportError == .invalidRequest("no credentials yet for signal.chat.Usernames/LookUpUsernameHash"))
        #expect(calls.withLock { $0 } == 0)
    }

    struct CountingServer: ServerInterceptor {
        let calls: Locked<Int>
        func intercept(
            _ request: ServerRequest, context: ServerContext, next: @Sendable (ServerRequest, ServerContext) async -> RPCResponse
        ) async -> RPCResponse {
            calls.withLock { $0 += 1 }
            return await next(request, context)
        }
    }

    /// Refuses every request without the right token, before the handler runs.
    struct TokenCheck: ServerInterceptor {
        func intercept(
            _ request: ServerRequest, context: ServerContext, next: @Sendable (ServerRequest, ServerContext) async -> RPCResponse
        ) async -> RPCResponse {
            guard request.headers["Authorization"] == "Bearer ok" else { return RPCResponse(status: 403, message: "Forbidden") }
            return await next(request, context)
        }
    }

    /// Sets a header the endpoint binds to a field of its request.
    struct SetsIdempotencyKey: ServerInterceptor {
        func intercept(
            _ request: ServerRequest, context: ServerContext, next: @Sendable (ServerRequest, ServerContext) async -> RPCResponse
        ) async -> RPCResponse {
            var request = request
            request.headers.set("Idempotency-Key", "from-interceptor")
            return await next(request, context)
        }
    }

    @Test func headersAServerInterceptorSetsReachTheHandlersBindings() async {
        let server = InProcessTransport<Authenticated>(routes: TestChatRoom().routes, interceptors: [SetsIdempotencyKey()])
        let sent = await ChatRoomClient(transport: server).sendChatMessage(SendChatMessageRequest(chatId: "c", clientMessageId: "from-client", text: "hi"))
        #expect(sent.value?.id == "from-interceptor")
    }

    @Test func serverInterceptorsWrapHandlersAndMaySkipThem() async {
        let calls = Locked(0)
        let router = RPCRouter(routes: TestChatRoom().routes, interceptors: [CountingServer(calls: calls), TokenCheck()])
        let room = ChatRoomClient(transport: InProcessTransport<Authenticated>(router: router))
        let refused = await room.markRead(ReadReceipt(chatId: "c", upToMessageId: "m"))
        #expect(refused.endpointError == .forbidden)
        let allowed = await room.markRead(ReadReceipt(chatId: "c", upToMessageId: "m"),
                                          options: CallOptions(headers: ["Authorization": "Bearer ok"]))
        #expect(allowed.isSuccess)
        // Both reached the outer interceptor; 404s and 405s reach none.
        #expect(calls.withLock { $0 } == 2)
        let unknown = await router.handle(ServerRequest(verb: "GET", path: "/nowhere"), auth: .account)
        #expect(unknown.status == 404)
        #expect(calls.withLock { $0 } == 2)
    }
}

/// The shipped logging interceptor: every call, served request and push, with nothing secret.
@Suite struct LoggingInterceptorTests {
    static let secret = "s3cr3t-value"

    struct Messages: MessagesHandler {
        /// What the handler received, to show the secret did travel.
        let received = Locked<[Data]>([])
        func sendMessage(_ request: SendMessageRequest, context: ServerContext) async throws(SignalChat.Messages.SendMessageError) -> SendMessageResponse {
            received.withLock { $0 += request.messages.map(\.content) }
            if request.destination == "gone" { throw .unauthorized }
            return SendMessageResponse(needsSync: true)
        }
    }

    func send(detail: LoggingInterceptor.Detail, destination: String = "bob") async -> (records: [LoggingInterceptor.Record], ok: Bool) {
        let records = Locked<[LoggingInterceptor.Record]>([])
        let logging = LoggingInterceptor(detail: detail) { record in records.withLock { $0.append(record) } }
        let handler = Messages()
        defer { #expect(handler.received.withLock { $0 } == [Data(Self.secret.utf8)], "the secret travels, so only redaction hides it") }
        let server = InProcessTransport<Authenticated>(routes: handler.routes, interceptors: [logging])
        let client = MessagesClient(transport: server, interceptors: [logging])
        let request = SendMessageRequest(
            destination: destination, messages: [OutgoingMessage(destinationDeviceId: 3, content: Data(Self.secret.utf8))])
        let result = await client.sendMessage(request, options: CallOptions(headers: ["Authorization": "Basic \(Self.secret)"]))
        return (records.withLock { $0 }, result.isSuccess)
    }

    @Test func headsModeLogsRoutesStatusesAndSizesOnly() async {
        let (records, ok) = await send(detail: .heads)
        #expect(ok)
        #expect(records.map(\.event) == [.callStarted, .requestServed, .callFinished])
        let started = records[0]
        #expect(started.subject == "signal.chat.Messages/SendMessage")
        #expect(started.details.hasPrefix("PUT /v1/messages/bob headers: ["))
        #expect(started.details.contains("Authorization: [REDACTED]"))
        #expect(started.details.hasSuffix(" bytes"))
        // The server logs the template, never the path the client filled in.
        #expect(records[1].details.hasPrefix("PUT /v1/messages/{destination} headers:"))
        #expect(records[1].details.contains("-> 200"))
        #expect(records[2].details.hasPrefix("200 OK in ") || records[2].details.hasPrefix("200 in "))
        #expect(records.allSatisfy { $0.level == .info })
        for record in records { #expect(!record.description.contains(Self.secret), "\(record)") }
    }

    @Test func bodiesModeDecodesBodiesWithSensitiveFieldsRedacted() async {
        let (records, _) = await send(detail: .bodies)
        let started = records[0].details
        #expect(started.contains("destinationDeviceId: 3"), "\(started)")
        #expect(started.contains("content: [REDACTED]"), "\(started)")
        #expect(records[2].details.contains("needsSync: true"), "\(records[2])")
        for record in records { #expect(!record.description.contains(Self.secret), "\(record)") }
    }

    @Test func failuresAndErrorStatusesAreWarnings() async {
        let (records, ok) = await send(detail: .heads, destination: "gone")
        #expect(!ok)
        #expect(records.map(\.level) == [.info, .warning, .warning])
        #expect(records[2].details.hasPrefix("401"))

        let failures = Locked<[LoggingInterceptor.Record]>([])
        let logging = LoggingInterceptor { record in failures.withLock { $0.append(record) } }
        let client = MessagesClient(transport: FailingTransport(), interceptors: [logging])
        let result = await client.sendMessage(SendMessageRequest(destination: "x"))
        #expect(result.transportError == .disconnected(reason: "gone"))
        #expect(failures.withLock { $0.map(\.event) } == [.callStarted, .callFailed])
        #expect(failures.withLock { $0.last?.details.hasSuffix("disconnected: gone") } == true)
    }

    /// A received path is logged as its size only: a push that matches no event may carry
    /// anything in its path, while a matched one is named by its event's path.
    @Test func pushesAreNamedByTheirEventsPathNeverTheirOwn() async {
        let records = Locked<[LoggingInterceptor.Record]>([])
        let logging = LoggingInterceptor(events: SignalChat.Messages.descriptor.events) { record in records.withLock { $0.append(record) } }
        let unmatched = ServerRequest(verb: "PUT", path: "/v1/secret/abc?token=xyz")
        let unknown: @Sendable (ServerRequest) async -> EventOutcome = { _ in .unknown }
        _ = await logging.intercept(unmatched, next: unknown)
        let matched = ServerRequest(verb: "PUT", path: "/api/v1/message", body: Data([1, 2]))
        let acknowledged: @Sendable (ServerRequest) async -> EventOutcome = { _ in .acknowledge(RPCResponse(status: 200, message: "OK")) }
        _ = await logging.intercept(matched, next: acknowledged)
        let logged = records.withLock { $0 }
        #expect(logged.count == 2)
        #expect(logged.first?.subject == "PUT (\(unmatched.path.utf8.count) bytes)")
        #expect(logged.first.map { !$0.description.contains("abc") && !$0.description.contains("secret") } == true, "\(logged)")
        #expect(logged.last?.subject == "PUT /api/v1/message")
    }

    struct FailingTransport: RPCTransport {
        typealias Auth = Authenticated
        func send(_ request: RPCRequest) async throws(TransportError) -> RPCResponse { throw .disconnected(reason: "gone") }
    }
}
