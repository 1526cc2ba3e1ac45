import Foundation
import SignalChat
import SwitchboardChat
import SwitchboardRuntime
import SwitchboardWebSocket
import Testing

struct LoopbackUsernames: UsernamesHandler {
    func lookUpUsernameHash(_ request: LookUpUsernameHashRequest, context: ServerContext) async throws(Usernames.LookUpUsernameHashError) -> LookUpUsernameHashResponse {
        guard request.hash == Data([1, 2, 3]) else { throw .notFound }
        return LookUpUsernameHashResponse(uuid: "alice")
    }
}

struct LoopbackChatRoom: ChatRoomHandler {
    func getHistory(_ request: ChatHistoryRequest, context: ServerContext) async throws(ChatRoom.GetHistoryError) -> ChatHistoryResponse {
        // Vary the work so responses overtake each other.
        try? await Task.sleep(for: .milliseconds(Int.random(in: 0...20)))
        return ChatHistoryResponse(messages: [ChatMessage(id: request.chatId, text: context.auth.rawValue)])
    }
    func sendChatMessage(_ request: SendChatMessageRequest, context: ServerContext) async throws(ChatRoom.SendChatMessageError) -> ChatMessage {
        if request.text == "hang" { try? await Task.sleep(for: .seconds(60)) }
        return ChatMessage(id: request.clientMessageId, text: request.text)
    }
    func markRead(_ request: ReadReceipt, context: ServerContext) async throws(ChatRoom.MarkReadError) {}
}

/// Holds every `sendChatMessage` until the gate opens.
struct GatedChatRoom: ChatRoomHandler {
    let gate: FirstAnswer<Void>
    func getHistory(_ request: ChatHistoryRequest, context: ServerContext) async throws(ChatRoom.GetHistoryError) -> ChatHistoryResponse {
        ChatHistoryResponse()
    }
    func sendChatMessage(_ request: SendChatMessageRequest, context: ServerContext) async throws(ChatRoom.SendChatMessageError) -> ChatMessage {
        await gate.value
        return ChatMessage(id: request.clientMessageId, text: request.text)
    }
    func markRead(_ request: ReadReceipt, context: ServerContext) async throws(ChatRoom.MarkReadError) {}
}

/// Generated clients over the real Signal-envelope transport and our WebSocket, on loopback.
@Suite(.serialized) struct ChatEndToEndTests {
    static let credentials = ChatClient.Credentials(username: "aci-1", deviceID: 2, password: "secret")

    func makeServer() throws -> ChatServer {
        try ChatServer(
            routes: LoopbackUsernames().routes + LoopbackChatRoom().routes,
            upgradeHeaders: { [HTTPHeaderField(name: "X-Signal-Timestamp", value: "1700000000000")] },
            authenticate: { authorization in
                guard let authorization else { return .anonymous }
                let expected = "Basic " + Data("aci-1.2:secret".utf8).base64EncodedString()
                return authorization == expected ? .account : .reject(status: 403, reason: "Forbidden")
            })
    }

    @Test func unauthenticatedCallsRoundTrip() async throws {
        let server = try makeServer()
        defer { server.stop() }
        let connection = try await ChatClient.connectUnauthenticated(to: server.url)
        let usernames = UsernamesClient(transport: connection)
        #expect(try await usernames.lookUpUsernameHash(hash: Data([1, 2, 3])).uuid == "alice")
        guard case .nonSuccess(.notFound) = await usernames.lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([9]))) else {
            Issue.record("404 must map to notFound")
            return
        }
        #expect(connection.upgradeHeaders.contains(HTTPHeaderField(name: "X-Signal-Timestamp", value: "1700000000000")))
        await connection.close()
    }

    @Test func credentialsAreCheckedAtTheUpgrade() async throws {
        let server = try makeServer()
        defer { server.stop() }
        do {
            _ = try await ChatClient.connectAuthenticated(to: server.url, credentials: .init(username: "aci-1", deviceID: 2, password: "wrong"))
            Issue.record("bad credentials must be refused")
        } catch {
            #expect(error == .credentialsRejected)
        }
        let connection = try await ChatClient.connectAuthenticated(to: server.url, credentials: Self.credentials)
        let page = try await ChatRoomClient(transport: connection).getHistory(chatId: "c1")
        #expect(page.messages.first?.text == "account")
        await connection.close()
    }

    @Test func concurrentRequestsAreMatchedById() async throws {
        let server = try makeServer()
        defer { server.stop() }
        let connection = try await ChatClient.connectAuthenticated(to: server.url, credentials: Self.credentials)
        let room = ChatRoomClient(transport: connection)
        let ids = try await withThrowingTaskGroup(of: (String, String).self) { group in
            for index in 0..<64 {
                group.addTask { ("chat-\(index)", try await room.getHistory(chatId: "chat-\(index)").messages.first?.id ?? "") }
            }
            var pairs: [(String, String)] = []
            for try await pair in group { pairs.append(pair) }
            return pairs
        }
        #expect(ids.count == 64 && ids.allSatisfy { $0.0 == $0.1 })
        await connection.close()
    }

    /// The server's push ids and our request ids are separate spaces: a push whose id equals
    /// a pending request's is answered as a push, and the request still gets its own answer.
    @Test func pushIdsAndRequestIdsNeverMix() async throws {
        let gate = FirstAnswer<Void>()
        let server = try ChatServer(routes: GatedChatRoom(gate: gate).routes)
        defer { server.stop() }
        let pushes = Locked<[String]>([])
        let connection = try await ChatClient.connectAuthenticated(to: server.url, credentials: Self.credentials) { push in
            pushes.withLock { $0.append(push.path) }
            return .ok
        }
        let client = try #require(await server.client(at: 0))
        let room = ChatRoomClient(transport: connection)
        // Our ids 0 and 1 are pending; the server's first pushes carry its ids 1 and 2.
        async let first = room.sendChatMessage(SendChatMessageRequest(chatId: "c", clientMessageId: "m0", text: "zero"))
        try await Task.sleep(for: .milliseconds(100))
        async let second = room.sendChatMessage(SendChatMessageRequest(chatId: "c", clientMessageId: "m1", text: "one"))
        try await Task.sleep(for: .milliseconds(100))
        let acks = [await client.push(ServerRequest(verb: "PUT", path: "/api/v1/one")), await client.push(ServerRequest(verb: "PUT", path: "/api/v1/two"))]
        #expect(acks.map { $0?.status } == [200, 200], "each push is answered with its own id")
        #expect(pushes.withLock { $0 } == ["/api/v1/one", "/api/v1/two"])
        _ = gate.offer(())
        let answers = [await first, await second].map { result -> String? in
            guard case let .success(message) = result else { return nil }
            return message.text
        }
        #expect(answers == ["zero", "one"], "each request gets its own answer, not a push's")
        await connection.close()
    }

    @Test func pendingRequestsFailWhenTheServerGoesAway() async throws {
        let server = try makeServer()
        let connection = try await ChatClient.connectAuthenticated(to: server.url, credentials: Self.credentials)
        let room = ChatRoomClient(transport: connection)
        async let hanging = room.sendChatMessage(SendChatMessageRequest(chatId: "c", clientMessageId: "m", text: "hang"))
        try await Task.sleep(for: .milliseconds(200))
        server.stop()
        guard case .failure(.disconnected) = await hanging else {
            Issue.record("a pending request must fail with disconnected")
            return
        }
        guard case .failure(.disconnected) = await room.getHistory(ChatHistoryRequest(chatId: "after")) else {
            Issue.record("later requests fail at once")
            return
        }
    }

    @Test func deadlinesAndCancellationAreEnforcedByTheConnection() async throws {
        let server = try makeServer()
        defer { server.stop() }
        let connection = try await ChatClient.connectAuthenticated(to: server.url, credentials: Self.credentials)
        let room = ChatRoomClient(transport: connection)
        let hang = SendChatMessageRequest(chatId: "c", clientMessageId: "m", text: "hang")
        // A long deadline first, then a short one: the shorter must still fire on time.
        let long = Task { await room.sendChatMessage(hang, options: CallOptions(timeout: .seconds(30))) }
        try await Task.sleep(for: .milliseconds(50))
        let started = ContinuousClock.now
        guard case .failure(.timeout) = await room.sendChatMessage(hang, options: CallOptions(timeout: .milliseconds(200))) else {
            Issue.record("a request past its deadline fails with timeout")
            return
        }
        #expect(started.duration(to: .now) < .seconds(25), "generous bound: the short deadline fired, not the 30 s one")
        long.cancel()
        guard case .failure(.cancelled) = await long.value else {
            Issue.record("a cancelled call fails with cancelled")
            return
        }
        // The connection is still good after both.
        #expect(try await room.getHistory(chatId: "after").messages.count == 1)
        await connection.close()
    }

    /// A push handler may call the server on the same connection: responses keep flowing
    /// while it runs.
    final class AskingListener: MessagesEventListener, @unchecked Sendable {
        let room = Locked<ChatRoomClient?>(nil)
        let answers = Locked<[Int]>([])
        func incomingMessage(_ payload: Envelope, context: EventContext) async throws {
            guard let room = room.current else { throw CancellationError() }
            let history = try await room.getHistory(chatId: payload.serverGuid ?? "", options: CallOptions(timeout: .seconds(20)))
            answers.withLock { $0.append(history.messages.count) }
        }
        func queueEmpty(context: EventContext) async throws {}
    }

    @Test func aPushHandlerCanMakeRequestsOnItsOwnConnection() async throws {
        let server = try makeServer()
        defer { server.stop() }
        let listener = AskingListener()
        let connection = try await ChatClient.connectAuthenticated(to: server.url, credentials: Self.credentials) { request in
            await Messages.dispatch(request, to: listener)
        }
        listener.room.withLock { $0 = ChatRoomClient(transport: connection) }
        let client = try #require(await server.client(at: 0))
        let started = ContinuousClock.now
        for index in 0..<3 {
            let push = ServerRequest(verb: "PUT", path: "/api/v1/message", body: Envelope(serverGuid: "room-\(index)").serializedData())
            #expect(await client.push(push, timeout: .seconds(20))?.status == 200)
        }
        #expect(listener.answers.current == [1, 1, 1])
        #expect(started.duration(to: .now) < .seconds(15), "no handler waited for its request's deadline")
        #expect(await server.client(at: 5, timeout: .milliseconds(1)) == nil, "a tiny timeout for a client that never comes returns nil")
        await connection.close()
    }

    final class SlowListener: MessagesEventListener, @unchecked Sendable {
        let started = Locked(false)
        let finished = Locked(false)
        func incomingMessage(_ payload: Envelope, context: EventContext) async throws {
            started.withLock { $0 = true }
            try? await Task.sleep(for: .milliseconds(300))
            finished.withLock { $0 = true }
        }
        func queueEmpty(context: EventContext) async throws {}
    }

    /// A connection whose listener is busy with one push (started, not finished); the
    /// server's side of the push is `push`.
    func pushToASlowListener(serverGuid: String) async throws
        -> (ChatServer, SlowListener, ChatConnection<Authenticated>, ChatServer.Client, Task<RPCResponse?, Never>) {
        let server = try makeServer()
        var handedOver = false
        defer { if !handedOver { server.stop() } }
        let listener = SlowListener()
        let connection = try await ChatClient.connectAuthenticated(to: server.url, credentials: Self.credentials) { request in
            await Messages.dispatch(request, to: listener)
        }
        let client = try #require(await server.client(at: 0))
        let push = Task { await client.push(ServerRequest(verb: "PUT", path: "/api/v1/message", body: Envelope(serverGuid: serverGuid).serializedData())) }
        for _ in 0..<2000 where !listener.started.current { try await Task.sleep(for: .milliseconds(5)) }
        handedOver = true
        return (server, listener, connection, client, push)
    }

    @Test func theConnectionIsFinishedOnlyAfterARunningHandlerReturns() async throws {
        let (server, listener, connection, client, push) = try await pushToASlowListener(serverGuid: "slow")
        defer { server.stop() }
        client.kill()
        let reason = await connection.waitUntilFinished()
        #expect(listener.finished.current, "finished means no handler is still running")
        #expect(reason == connection.disconnectReason)
        #expect(await push.value == nil, "the server never got an answer for it")
    }

    @Test func closingLetsTheRunningHandlerSendItsAnswer() async throws {
        let (server, listener, connection, _, push) = try await pushToASlowListener(serverGuid: "last")
        defer { server.stop() }
        await connection.close()
        #expect(listener.finished.current)
        #expect(await push.value?.status == 200, "the answer left before the close frame")
    }

    final class OrderedListener: MessagesEventListener, @unchecked Sendable {
        let order = Locked<[String]>([])
        func incomingMessage(_ payload: Envelope, context: EventContext) async throws {
            if payload.serverGuid == "fail" { throw CancellationError() }
            order.withLock { $0.append(payload.serverGuid ?? "") }
        }
        func queueEmpty(context: EventContext) async throws { order.withLock { $0.append("empty") } }
    }

    @Test func pushesArriveInOrderAndAreAcknowledgedAfterHandling() async throws {
        let server = try makeServer()
        defer { server.stop() }
        let listener = OrderedListener()
        let connection = try await ChatClient.connectAuthenticated(to: server.url, credentials: Self.credentials) { request in
            await Messages.dispatch(request, to: listener)
        }
        let client = try #require(await server.client(at: 0))
        var acks: [Int?] = []
        for index in 0..<20 {
            let push = ServerRequest(verb: "PUT", path: "/api/v1/message", body: Envelope(serverGuid: "m\(index)").serializedData())
            acks.append(await client.push(push)?.status)
        }
        #expect(acks == Array(repeating: 200, count: 20))
        let failed = await client.push(ServerRequest(verb: "PUT", path: "/api/v1/message", body: Envelope(serverGuid: "fail").serializedData()), timeout: .seconds(10))
        #expect(failed?.status == 500, "a push whose handler throws is answered 500: not acknowledged, not left hanging")
        #expect(await client.push(ServerRequest(verb: "PUT", path: "/api/v1/queue/empty"))?.status == 200)
        #expect(await client.push(ServerRequest(verb: "PUT", path: "/api/v1/unknown"))?.status == 404)
        let response = await client.push(ServerRequest(verb: "PUT", path: "/api/v1/queue/empty"))
        #expect(response?.message == "OK", "responses always carry a reason phrase")
        #expect(listener.order.current == (0..<20).map { "m\($0)" } + ["empty", "empty"])
        await connection.close()
    }
}
