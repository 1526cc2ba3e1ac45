import Foundation
import SignalChat
import SwitchboardRuntime
import Testing

/// Deadlines, cancellation, status mapping and per-RPC routing, through generated clients.
@Suite struct TransportBehaviourTests {
    @Test func deadlinesTurnIntoTimeouts() async {
        let client = ChatRoomClient(transport: InProcessTransport<Authenticated>(routes: TestChatRoom().routes))
        let started = ContinuousClock.now
        let result = await client.sendChatMessage(SendChatMessageRequest(chatId: "c", text: "slow"), options: CallOptions(timeout: .milliseconds(50)))
        guard case .failure(.timeout) = result else {
            Issue.record("expected a timeout, got \(result)")
            return
        }
        // The handler sleeps 60 s; the caller must not wait for it. (The bound is loose because
        // parallel CPU-heavy tests can delay the timer on this 2-core machine.)
        #expect(ContinuousClock.now - started < .seconds(30))
    }

    /// A call with nothing bound to headers sends `Accept` and `Content-Type`; a call option's
    /// header joins its own call only, not the list such calls share.
    @Test func generatedCallsSendTheirContentHeadersAndOnlyTheirOwnExtras() async throws {
        let fake = FakeServerTransport<Authenticated>()
        let client = MessagesClient(transport: fake)
        let protobuf = BodyEncoding.protobuf.contentType
        for extra in [nil, "trace-1", nil] {
            let options = CallOptions(headers: extra.map { ["X-Trace": $0] } ?? [:])
            let call = Task { await client.sendMessage(SendMessageRequest(destination: "d"), options: options) }
            let request = try await fake.nextRequest()
            var expected = [(name: "Accept", value: protobuf), (name: "Content-Type", value: protobuf)]
            if let extra { expected.append((name: "X-Trace", value: extra)) }
            #expect(request.headers.fields.map { "\($0.name): \($0.value)" } == expected.map { "\($0.name): \($0.value)" })
            fake.respond(to: request.id, status: 200, body: SendMessageResponse(needsSync: true))
            #expect(try await call.value.get().needsSync)
        }
        #expect(BodyEncoding.protobuf.requestHeaders(withBody: true).fields.count == 2)
    }

    @Test func cancellationFailsTheCallAndDropsThePendingRequest() async throws {
        let fake = FakeServerTransport<Unauthenticated>()
        let client = UsernamesClient(transport: fake)
        let call = Task { await client.lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([1]))) }
        _ = try await fake.nextRequest()
        #expect(fake.pendingCount == 1)
        call.cancel()
        guard case .failure(.cancelled) = await call.value else {
            Issue.record("expected cancelled")
            return
        }
        // The fake sees the sender cancelled too; poll briefly, bounded.
        for _ in 0..<100 where fake.pendingCount > 0 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(fake.pendingCount == 0)
    }

    @Test func undeclaredStatusesMapToSharedFailures() async throws {
        let fake = FakeServerTransport<Unauthenticated>()
        let client = SealedSenderKeysClient(transport: fake)
        let request = GetPreKeysRequest(identifier: "a", deviceId: "1")
        let key = AccessKey(Data([1]))
        func answer(_ response: RPCResponse) async throws -> RequestResult<PreKeyBundle, SealedSenderKeys.GetPreKeysError> {
            async let result = client.getPreKeys(request, accessKey: key)
            let incoming = try await fake.nextRequest()
            fake.respond(to: incoming.id, with: response)
            return await result
        }
        guard case let .failure(.retryLater(after)) = try await answer(RPCResponse(status: 429, headers: ["Retry-After": "12"])) else {
            Issue.record("undeclared 429 is retry later")
            return
        }
        #expect(after == .seconds(12))
        guard case .failure(.serverError(status: 500)) = try await answer(RPCResponse(status: 500)) else {
            Issue.record("500 is a server error")
            return
        }
        guard case .failure(.undecodableResponse) = try await answer(RPCResponse(status: 200, body: Data([0xFF, 0xFF]))) else {
            Issue.record("a garbage body is undecodable")
            return
        }
        guard case .nonSuccess(.unrecognized(status: 451, body: Data("x".utf8))) = try await answer(RPCResponse(status: 451, body: Data("x".utf8))) else {
            Issue.record("451 is unrecognized")
            return
        }
        guard case .nonSuccess(.notFound) = try await answer(RPCResponse(status: 404)) else {
            Issue.record("404 is declared")
            return
        }
    }

    @Test func routingSendsEachRPCToItsTransport() async throws {
        let websocket = FakeServerTransport<Unauthenticated>()
        let grpc = InProcessTransport<Unauthenticated>(routes: TestUsernames().routes)
        let routing = RoutingTransport<Unauthenticated>(default: websocket)
        routing.route(Usernames.lookUpUsernameHash, to: grpc)
        #expect(routing.transport(for: Usernames.lookUpUsernameHash.rpcName) is InProcessTransport<Unauthenticated>)
        let usernames = UsernamesClient(transport: routing)
        #expect(try await usernames.lookUpUsernameHash(hash: TestUsernames.known).uuid.hasPrefix("aci-for-"))
        #expect(websocket.pendingCount == 0)

        // Other endpoints still use the default.
        let keys = SealedSenderKeysClient(transport: routing)
        async let result = keys.getPreKeys(GetPreKeysRequest(identifier: "b", deviceId: "1"), accessKey: AccessKey(Data([2])))
        let incoming = try await websocket.nextRequest()
        #expect(incoming.endpoint.rpcName == "signal.chat.SealedSenderKeys/GetPreKeys")
        websocket.respond(to: incoming.id, status: 404)
        guard case .nonSuccess(.notFound) = await result else {
            Issue.record("expected the fake's 404")
            return
        }

        // Switching back at run time.
        routing.route(Usernames.lookUpUsernameHash.rpcName, to: nil)
        async let again = usernames.lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([3])))
        let viaDefault = try await websocket.nextRequest()
        #expect(viaDefault.endpoint == Usernames.lookUpUsernameHash)
        websocket.respond(to: viaDefault.id, status: 404)
        _ = await again

        // A whole service at once, and back.
        routing.route(SealedSenderKeys.descriptor, to: grpc)
        #expect(SealedSenderKeys.descriptor.endpoints.allSatisfy { routing.transport(for: $0.rpcName) is InProcessTransport<Unauthenticated> })
        routing.route(SealedSenderKeys.descriptor, to: nil)
        #expect(SealedSenderKeys.descriptor.endpoints.allSatisfy { routing.transport(for: $0.rpcName) as AnyObject? === websocket })

        let nowhere = UsernamesClient(transport: RoutingTransport<Unauthenticated>(default: nil))
        guard case .failure(.unroutable(rpcName: "signal.chat.Usernames/LookUpUsernameHash")) = await nowhere.lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([4]))) else {
            Issue.record("no route is unroutable")
            return
        }
    }
}

/// A call routed to another transport gets that transport's default timeout, not the
/// default route's (from the runtime review: an override's 1 s default waited 30 s).
@Suite(.timeLimit(.minutes(1))) struct RoutedTimeoutTests {
    struct Silent: RPCTransport {
        typealias Auth = Unauthenticated
        let defaultRequestTimeout: Duration
        func send(_ request: RPCRequest) async throws(TransportError) -> RPCResponse {
            try? await Task.sleep(for: .seconds(60))
            throw .cancelled
        }
    }

    /// Answers at once, noting which task sent the request.
    final class TaskNoting: DeadlineEnforcingTransport, @unchecked Sendable {
        typealias Auth = Unauthenticated
        let senders = Locked<[Int]>([])
        func send(_ request: RPCRequest) async throws(TransportError) -> RPCResponse {
            senders.withLock { $0.append(withUnsafeCurrentTask { $0?.hashValue ?? 0 }) }
            return RPCResponse(status: 404, message: "Not Found")
        }
    }

    @Test func aTransportThatEnforcesDeadlinesIsCalledInTheCallersTaskThroughRouting() async {
        // No task of its own per call: routing does not cost the race RPCCall runs for
        // transports that leave deadlines to it.
        let noting = TaskNoting()
        let routing = RoutingTransport<Unauthenticated>(default: nil)
        routing.route(SealedSenderKeys.getPreKeys, to: noting)
        let caller = withUnsafeCurrentTask { $0?.hashValue ?? -1 }
        let result = await SealedSenderKeysClient(transport: routing).getPreKeys(GetPreKeysRequest(identifier: "x", deviceId: "1"),
                                                                                accessKey: AccessKey(Data(repeating: 1, count: 16)))
        guard case .nonSuccess(.notFound) = result else {
            Issue.record("\(result)")
            return
        }
        #expect(noting.senders.current == [caller])
    }

    @Test func aRoutedCallTakesItsTransportsDefaultTimeout() async {
        let routing = RoutingTransport<Unauthenticated>(default: Silent(defaultRequestTimeout: .seconds(30)))
        // An endpoint with no timeout of its own in the schema, so the transport's decides.
        let rpcName = SealedSenderKeys.getPreKeys.rpcName
        #expect(SealedSenderKeys.getPreKeys.defaultTimeout == nil)
        routing.route(rpcName, to: Silent(defaultRequestTimeout: .milliseconds(300)))
        #expect(routing.defaultRequestTimeout(for: rpcName) == .milliseconds(300))
        #expect(routing.defaultRequestTimeout(for: "other.Service/Method") == .seconds(30))
        #expect(routing.intercepted(by: []).defaultRequestTimeout(for: rpcName) == .milliseconds(300), "through interceptors too")
        let started = ContinuousClock.now
        let result = await SealedSenderKeysClient(transport: routing).getPreKeys(GetPreKeysRequest(identifier: "x", deviceId: "1"), accessKey: AccessKey(Data(repeating: 1, count: 16)))
        #expect(result.transportError == .timeout)
        #expect(ContinuousClock.now - started < .seconds(8), "the override's 300 ms, not the default's 30 s")
    }
}
