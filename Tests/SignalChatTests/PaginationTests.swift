import Foundation
import SignalChat
import SwitchboardRuntime
import Testing

/// A lobby of `count` chats served newest first, a page at a time, as `GET /v1/chats` would:
/// `beforeId` is the last chat of the previous page, `nextBeforeId` is absent on the last page.
/// It records each request and fails the call numbered `failingCall` (1-based).
struct PagedLobby: ChatLobbyHandler {
    let chats: [ChatSummary]
    var failingCall: Int?
    let requests = Locked<[ListChatsRequest]>([])

    init(count: Int, failingCall: Int? = nil) {
        chats = (0..<count).map { ChatSummary(chatId: String(format: "chat-%04d", count - 1 - $0), title: "Chat \(count - 1 - $0)") }
        self.failingCall = failingCall
    }

    func listChats(_ request: ListChatsRequest, context: ServerContext) async throws(ChatLobby.ListChatsError) -> ListChatsResponse {
        let call = requests.withLock { calls in
            calls.append(request)
            return calls.count
        }
        if call == failingCall { throw .rateLimited(retryAfter: .seconds(7)) }
        let start = request.beforeId.flatMap { cursor in chats.firstIndex { $0.chatId == cursor }.map { $0 + 1 } } ?? 0
        let end = min(chats.count, start + Int(min(request.limit == 0 ? 20 : request.limit, 100)))
        let page = Array(chats[start..<end])
        return ListChatsResponse(chats: page, nextBeforeId: end < chats.count ? page.last?.chatId : nil)
    }
}

/// History served oldest first within a page, older pages before the page's first message,
/// with `hasMore` false on the oldest page.
struct PagedHistory: ChatRoomHandler {
    let messages: [ChatMessage]
    let requests = Locked<[ChatHistoryRequest]>([])

    init(count: Int) { messages = (0..<count).map { ChatMessage(id: "m\($0)", text: "message \($0)") } }

    func getHistory(_ request: ChatHistoryRequest, context: ServerContext) async throws(ChatRoom.GetHistoryError) -> ChatHistoryResponse {
        requests.withLock { $0.append(request) }
        if request.chatId != "room" { throw .notFound }
        let end = request.beforeId.flatMap { cursor in messages.firstIndex { $0.id == cursor } } ?? messages.count
        let start = max(0, end - Int(request.limit))
        return ChatHistoryResponse(messages: Array(messages[start..<end]), hasMore: start > 0)
    }

    func sendChatMessage(_ request: SendChatMessageRequest, context: ServerContext) async throws(ChatRoom.SendChatMessageError) -> ChatMessage { ChatMessage() }
    func markRead(_ request: ReadReceipt, context: ServerContext) async throws(ChatRoom.MarkReadError) {}
}

/// The generated `…Pages` and `…Items` methods against generated handlers in process.
@Suite struct PaginationTests {
    @Test func thousandItemsArriveInPagesOfFifty() async throws {
        let lobby = PagedLobby(count: 1_000)
        let client = ChatLobbyClient(transport: InProcessTransport(routes: lobby.routes))
        var ids: [String] = []
        for try await chat in client.listChatsItems(pageSize: 50) { ids.append(chat.chatId) }
        #expect(ids == lobby.chats.map(\.chatId))
        let requests = lobby.requests.withLock { $0 }
        #expect(requests.count == 20)
        #expect(requests.allSatisfy { $0.limit == 50 })
        #expect(requests.first?.beforeId == nil)
        // Each request starts after the previous page's last chat.
        #expect(requests.dropFirst().map(\.beforeId) == stride(from: 49, to: 999, by: 50).map { Optional(lobby.chats[$0].chatId) })
    }

    @Test func theLastPageIsShortAndEndsTheSequence() async throws {
        let lobby = PagedLobby(count: 1_010)
        let client = ChatLobbyClient(transport: InProcessTransport(routes: lobby.routes))
        var sizes: [Int] = []
        var last: ListChatsResponse?
        for try await page in client.listChatsPages(pageSize: 50) {
            sizes.append(page.chats.count)
            last = page
        }
        #expect(sizes == Array(repeating: 50, count: 20) + [10])
        #expect(last?.nextBeforeId == nil)
        #expect(lobby.requests.withLock { $0.count } == 21)
    }

    @Test func pagesAreFetchedOnlyAsTheyAreConsumed() async throws {
        let lobby = PagedLobby(count: 1_000)
        let client = ChatLobbyClient(transport: InProcessTransport(routes: lobby.routes))
        let items = client.listChatsItems(pageSize: 50)
        #expect(lobby.requests.withLock { $0.count } == 0)
        var taken = 0
        for try await _ in items {
            taken += 1
            if taken == 60 { break }
        }
        #expect(lobby.requests.withLock { $0.count } == 2)
    }

    @Test func anErrorInTheMiddleIsTypedAndEndsTheSequence() async throws {
        let lobby = PagedLobby(count: 1_000, failingCall: 5)
        let client = ChatLobbyClient(transport: InProcessTransport(routes: lobby.routes))
        var iterator = client.listChatsItems(pageSize: 50).makeAsyncIterator()
        var received = 0
        var failure: RequestError<ChatLobby.ListChatsError>?
        do {
            while try await iterator.next() != nil { received += 1 }
        } catch {
            failure = error
        }
        #expect(received == 200)
        #expect(failure == .endpoint(.rateLimited(retryAfter: .seconds(7))))
        // After the error the sequence is over; nothing more is fetched.
        #expect(try await iterator.next() == nil)
        #expect(lobby.requests.withLock { $0.count } == 5)
    }

    @Test func aTransportFailureInTheMiddleIsTyped() async throws {
        let mock = MockChatLobbyService()
        mock.listChatsMock.enqueue(
            .success(ListChatsResponse(chats: [ChatSummary(chatId: "a")], nextBeforeId: "a")),
            .failure(.timeout))
        var received: [String] = []
        await #expect(throws: RequestError<ChatLobby.ListChatsError>.transport(.timeout)) {
            for try await chat in mock.listChatsItems() { received.append(chat.chatId) }
        }
        #expect(received == ["a"])
        #expect(mock.listChatsMock.calls.map(\.beforeId) == [nil, "a"])
    }

    @Test func aServerRepeatingACursorIsStoppedWithATypedError() async throws {
        let mock = MockChatLobbyService()
        // Two cursors handed out in a cycle: a naive pager would never stop.
        mock.listChatsMock.stub { request in
            .success(ListChatsResponse(chats: [ChatSummary(chatId: "x")], nextBeforeId: request.beforeId == "a" ? "b" : "a"))
        }
        var pages = 0
        await #expect(throws: RequestError<ChatLobby.ListChatsError>.self) {
            for try await _ in mock.listChatsPages() { pages += 1 }
        }
        #expect(pages == 3) // first page, "a", "b"; "a" again is refused before it is sent
        #expect(mock.listChatsMock.callCount == 3)
    }

    @Test func aLongerCursorCycleIsCaughtToo() async throws {
        let mock = MockChatLobbyService()
        // Cursors c0 -> c1 -> ... -> c6 -> c2 -> ...: a cycle of five after a tail of two.
        mock.listChatsMock.stub { request in
            let index = Int(request.beforeId?.dropFirst() ?? "") ?? -1
            let next = index == 6 ? 2 : index + 1
            return .success(ListChatsResponse(chats: [ChatSummary(chatId: "x")], nextBeforeId: "c\(next)"))
        }
        var pages = 0
        await #expect(throws: RequestError<ChatLobby.ListChatsError>.self) {
            for try await _ in mock.listChatsPages() { pages += 1 }
        }
        // First page, c0 ... c6; c2 again is refused before it is sent: no page comes twice
        // (from the runtime review: Brent's check alone handed out c2 ... c6 twice).
        #expect(pages == 8, "\(pages)")
        #expect(mock.listChatsMock.callCount == 8)
    }

    @Test func endlessEmptyPagesWithFreshCursorsStopTheItems() async throws {
        let mock = MockChatLobbyService()
        mock.listChatsMock.stub { request in
            let index = Int(request.beforeId?.dropFirst() ?? "") ?? 0
            return .success(ListChatsResponse(chats: [], nextBeforeId: "n\(index + 1)"))
        }
        await #expect(throws: RequestError<ChatLobby.ListChatsError>.self) {
            for try await _ in mock.listChatsItems() {}
        }
        #expect(mock.listChatsMock.callCount == 101)
        // The bound is an option.
        mock.listChatsMock.reset()
        mock.listChatsMock.stub { request in
            let index = Int(request.beforeId?.dropFirst() ?? "") ?? 0
            return .success(ListChatsResponse(chats: [], nextBeforeId: "n\(index + 1)"))
        }
        await #expect(throws: RequestError<ChatLobby.ListChatsError>.self) {
            for try await _ in mock.listChatsPages().items(maximumConsecutiveEmptyPages: 5) {}
        }
        #expect(mock.listChatsMock.callCount == 6)
        // Once it has thrown it is over: calling next() again fetches nothing more (from the
        // runtime review: it paged on for another hundred pages).
        mock.listChatsMock.reset()
        mock.listChatsMock.stub { request in
            let index = Int(request.beforeId?.dropFirst() ?? "") ?? 0
            return .success(ListChatsResponse(chats: [], nextBeforeId: "n\(index + 1)"))
        }
        var items = mock.listChatsPages().items(maximumConsecutiveEmptyPages: 2).makeAsyncIterator()
        await #expect(throws: RequestError<ChatLobby.ListChatsError>.self) { _ = try await items.next() }
        let calls = mock.listChatsMock.callCount
        #expect(try await items.next() == nil)
        #expect(mock.listChatsMock.callCount == calls)
    }

    @Test func anEmptyFirstPageEndsAtOnce() async throws {
        let lobby = PagedLobby(count: 0)
        let client = ChatLobbyClient(transport: InProcessTransport(routes: lobby.routes))
        var count = 0
        for try await _ in client.listChatsItems(pageSize: 50) { count += 1 }
        #expect(count == 0)
        #expect(lobby.requests.withLock { $0.count } == 1)
    }

    @Test func historyPagesBackFromTheOldestMessageUntilNoMore() async throws {
        let history = PagedHistory(count: 120)
        let client = ChatRoomClient(transport: InProcessTransport(routes: history.routes))
        var pages: [[String]] = []
        for try await page in client.getHistoryPages(ChatHistoryRequest(chatId: "room"), pageSize: 50) {
            pages.append(page.messages.map(\.id))
        }
        #expect(pages == [
            (70..<120).map { "m\($0)" },
            (20..<70).map { "m\($0)" },
            (0..<20).map { "m\($0)" },
        ])
        #expect(history.requests.withLock { $0.map(\.beforeId) } == [nil, "m70", "m20"])
        // The path binding travels on every page.
        #expect(history.requests.withLock { $0.allSatisfy { $0.chatId == "room" && $0.limit == 50 } })
    }

    @Test func aDeclaredErrorOnTheFirstPageIsTyped() async throws {
        let history = PagedHistory(count: 10)
        let client = ChatRoomClient(transport: InProcessTransport(routes: history.routes))
        await #expect(throws: RequestError<ChatRoom.GetHistoryError>.endpoint(.notFound)) {
            for try await _ in client.getHistoryItems(ChatHistoryRequest(chatId: "elsewhere")) {}
        }
    }
}
