import Foundation
import SignalChat
import SwitchboardRuntime
import Testing

/// The frame-level fake: the test reads each request and answers it by id.
@Suite(.timeLimit(.minutes(3))) struct FakeServerTests {
    @Test func theTestSeesWhatTheClientSent() async throws {
        let fake = FakeServerTransport<Authenticated>()
        let client = ChatRoomClient(transport: fake)
        async let sent = client.sendChatMessage(SendChatMessageRequest(chatId: "room 7", clientMessageId: "id-1", text: "hi"))
        let request = try await fake.nextRequest()
        #expect(request.verb == "POST")
        #expect(request.path == "/v1/chats/room%207/messages")
        #expect(request.headers["Idempotency-Key"] == "id-1")
        #expect(request.headers["Content-Type"] == "application/json")
        // `body *` leaves out the fields bound to the path and headers.
        let body = try request.decodeBody(as: SendChatMessageRequest.self, encoding: .json)
        #expect(body == SendChatMessageRequest(text: "hi"))
        fake.respond(to: request.id, status: 200, body: ChatMessage(id: "server-1", text: "hi"), encoding: .json)
        #expect(await sent.value?.id == "server-1")
    }

    /// An answer is written in the request's endpoint's encoding unless the test says
    /// otherwise, as its server would write it (it was protobuf whatever the endpoint, so a
    /// JSON endpoint's answer failed as undecodable; from the mocks review).
    @Test func anAnswerTakesTheEndpointsEncoding() async throws {
        let fake = FakeServerTransport<Authenticated>()
        let client = ChatRoomClient(transport: fake)
        async let sent = client.sendChatMessage(SendChatMessageRequest(chatId: "room", clientMessageId: "id-2", text: "hi"))
        let request = try await fake.nextRequest()
        fake.respond(to: request.id, status: 200, body: ChatMessage(id: "server-2", text: "hi"))
        #expect(await sent.value?.id == "server-2")
    }

    @Test func responsesMatchRequestsByIdInAnyOrder() async throws {
        let fake = FakeServerTransport<Authenticated>()
        let client = KeysClient(transport: fake)
        async let first = client.getPreKeyCount(PreKeyCountRequest(identity: .aci))
        let a = try await fake.nextRequest()
        async let second = client.getPreKeyCount(PreKeyCountRequest(identity: .pni))
        let b = try await fake.nextRequest()
        #expect(a.path == "/v2/keys" && b.path == "/v2/keys?identity=PNI")
        fake.respond(to: b.id, status: 200, body: PreKeyCount(count: 2))
        fake.respond(to: a.id, status: 200, body: PreKeyCount(count: 1))
        #expect(await first.value?.count == 1)
        #expect(await second.value?.count == 2)
        fake.respond(to: 999, status: 200) // unknown ids are ignored
    }

    /// A header the call's options name replaces the schema-bound one of that name instead of
    /// going out beside it (from the runtime review: two Idempotency-Keys went out).
    @Test func anOptionHeaderReplacesABoundOne() async throws {
        let fake = FakeServerTransport<Authenticated>()
        let client = ChatRoomClient(transport: fake)
        async let sent = client.sendChatMessage(SendChatMessageRequest(chatId: "room", clientMessageId: "bound", text: "hi"),
                                                options: CallOptions(headers: ["idempotency-key": "chosen", "X-Trace": "1", "x-trace": "2"]))
        let request = try await fake.nextRequest()
        #expect(request.headers.filter { $0.name.lowercased() == "idempotency-key" }.map(\.value) == ["chosen"])
        #expect(request.headers.filter { $0.name.lowercased() == "x-trace" }.map(\.value) == ["1", "2"], "values given together all go")
        fake.respond(to: request.id, status: 200, body: ChatMessage(id: "s", text: "hi"), encoding: .json)
        #expect(await sent.value?.id == "s")
    }

    /// A request its client cancelled before the test read it is withdrawn: the next one read
    /// is the next live call (from the runtime review).
    @Test func aCancelledUnreadRequestIsWithdrawn() async throws {
        let fake = FakeServerTransport<Authenticated>()
        let client = KeysClient(transport: fake)
        let abandoned = Task { await client.getPreKeyCount(PreKeyCountRequest(identity: .aci)) }
        // Sent and waiting unread, or the test would cover a call cancelled before sending.
        for _ in 0..<2000 where fake.pendingCount == 0 { try await Task.sleep(for: .milliseconds(5)) }
        #expect(fake.pendingCount == 1)
        abandoned.cancel()
        _ = await abandoned.value
        async let live = client.getPreKeyCount(PreKeyCountRequest(identity: .pni))
        let request = try await fake.nextRequest()
        #expect(request.path == "/v2/keys?identity=PNI", "the cancelled call was handed out")
        fake.respond(to: request.id, status: 200, body: PreKeyCount(count: 2))
        #expect(await live.value?.count == 2)
    }

    @Test func disconnectFailsEveryPendingRequest() async throws {
        let fake = FakeServerTransport<Authenticated>()
        let client = ProfilesClient(transport: fake)
        async let one = client.getProfile(GetProfileRequest(identifier: "a", version: "1"))
        async let two = client.getProfile(GetProfileRequest(identifier: "b", version: "1"))
        _ = try await fake.nextRequest()
        _ = try await fake.nextRequest()
        fake.disconnect(reason: "socket closed")
        guard case .failure(.disconnected(reason: "socket closed")) = await one, case .failure(.disconnected) = await two else {
            Issue.record("pending requests must fail with disconnected")
            return
        }
        guard case .failure(.disconnected) = await client.getProfile(GetProfileRequest(identifier: "c", version: "1")) else {
            Issue.record("later requests fail at once")
            return
        }
    }

    @Test func waitingForARequestThatNeverComesTimesOut() async {
        let fake = FakeServerTransport<Authenticated>()
        await #expect(throws: TransportError.timeout) { try await fake.nextRequest(timeout: .milliseconds(50)) }
    }

    @Test func waitingAfterADisconnectSaysSoAndAWaitEndsWithItsTask() async throws {
        let fake = FakeServerTransport<Authenticated>()
        let waiting = Task { try await fake.nextRequest(timeout: .seconds(60)) }
        try await Task.sleep(for: .milliseconds(20))
        waiting.cancel()
        await #expect(throws: TransportError.cancelled) { try await waiting.value }
        fake.disconnect(reason: "gone")
        await #expect(throws: TransportError.disconnected(reason: "gone")) { try await fake.nextRequest(timeout: .seconds(60)) }
    }

    /// One wait's timeout must not end a later wait that still has time left.
    @Test func aTimedOutWaitLeavesLaterWaitsAlone() async throws {
        let fake = FakeServerTransport<Authenticated>()
        let early = Task { try? await fake.nextRequest(timeout: .milliseconds(200)) }
        try await Task.sleep(for: .milliseconds(100))
        // Generous: a loaded test run can hold a task back for seconds; only the early one must time out.
        let late = Task { try await fake.nextRequest(timeout: .seconds(30)) }
        #expect(await early.value == nil)
        try await Task.sleep(for: .milliseconds(300))
        async let sent = KeysClient(transport: fake).getPreKeyCount(PreKeyCountRequest(identity: .aci))
        let request = try await late.value
        fake.respond(to: request.id, status: 200, body: PreKeyCount(count: 3))
        #expect(await sent.value?.count == 3)
    }

    /// A request sent by a task cancelled already ends at once and leaves nothing pending.
    @Test func aRequestFromACancelledTaskEndsAtOnce() async {
        let fake = FakeServerTransport<Authenticated>()
        let endpoint = EndpointDescriptor(rpcName: "test.Echo/Echo", verb: "GET", pathTemplate: "/echo", auth: .none)
        let call = Task { () -> TransportError? in
            withUnsafeCurrentTask { $0?.cancel() }
            do throws(TransportError) {
                _ = try await fake.send(RPCRequest(endpoint: endpoint, path: "/echo"))
                return nil
            } catch {
                return error
            }
        }
        #expect(await call.value == .cancelled)
        #expect(fake.pendingCount == 0)
    }

    @Test func sensitivePathValuesAreRedactedForLogs() async throws {
        let fake = FakeServerTransport<Unauthenticated>()
        async let result = UsernamesClient(transport: fake).lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([0xFB, 0xFF])))
        let request = try await fake.nextRequest()
        #expect(request.path == "/v1/accounts/username_hash/-_8")
        #expect(request.logSafePath == "/v1/accounts/username_hash/[REDACTED]")
        fake.respond(to: request.id, status: 404)
        _ = await result
    }
}
