import Foundation
import KitchenSink
import SwitchboardRuntime
import Testing

/// The kitchen sink's paged endpoints: an integer cursor read from the last item with a
/// `more` flag, and an opaque bytes token read from the response; and a string-addressed
/// push payload.
@Suite struct PaginationRuleTests {
    @Test func anIntegerCursorFollowsTheLastItemUntilMoreIsFalse() async throws {
        let mock = MockNumbersService()
        mock.listMock.stub { query in
            let start = query.after + 1
            let end = min(start + Int64(query.count) - 1, 25)
            return .success(NumberPage(numbers: (start...end).map { Numbered(number: $0) }, more: end < 25))
        }
        var numbers: [Int64] = []
        for try await item in mock.listItems(pageSize: 10) { numbers.append(item.number) }
        #expect(numbers == Array(1...25))
        #expect(mock.listMock.calls.map(\.after) == [0, 10, 20])
        #expect(mock.listMock.calls.allSatisfy { $0.count == 10 })
    }

    @Test func anAbsentMoreFlagMeansNoMorePages() async throws {
        let mock = MockNumbersService()
        mock.listMock.stub { _ in .success(NumberPage(numbers: [Numbered(number: 5)])) }
        var pages = 0
        for try await _ in mock.listPages() { pages += 1 }
        #expect(pages == 1)
    }

    /// A page that says more follow (`more`) but gives nothing to take the next cursor from
    /// is handed out whole; then paging fails with a typed error rather than end as if every
    /// page had come.
    @Test(arguments: [NumberPage(numbers: [], more: true), NumberPage(numbers: [Numbered(number: 3), Numbered(number: 0)], more: true)])
    func morePagesWithoutACursorFailAfterThePage(_ broken: NumberPage) async throws {
        let why = broken.numbers.isEmpty ? "the page has no items to take the next cursor from" : "the page's last item gives no `number`"
        let expected = "`more` says more pages follow, but \(why)"
        let mock = MockNumbersService()
        mock.listMock.enqueue(.success(NumberPage(numbers: [Numbered(number: 1), Numbered(number: 2)], more: true)), .success(broken))
        var items = mock.listItems(pageSize: 2).makeAsyncIterator()
        var numbers: [Int64] = []
        do {
            while let item = try await items.next() { numbers.append(item.number) }
            Issue.record("paging must fail when more pages are promised without a cursor")
        } catch {
            guard case let .transport(.unexpectedResponse(reason)) = error else {
                Issue.record("expected an unexpected response, got \(error)")
                return
            }
            #expect(reason == expected)
        }
        #expect(numbers == [1, 2] + broken.numbers.map(\.number), "every item fetched is handed out first")
        #expect(mock.listMock.callCount == 2)
        // Over: nothing more is fetched.
        #expect(try await items.next() == nil)
        #expect(mock.listMock.callCount == 2)

        // Pages: the broken page itself is handed out, and the failure comes after it.
        mock.listMock.enqueue(.success(broken))
        var pages = mock.listPages().makeAsyncIterator()
        #expect(try await pages.next() == broken)
        do {
            _ = try await pages.next()
            Issue.record("the page after a broken one must fail")
        } catch {
            guard case let .transport(.unexpectedResponse(reason)) = error else {
                Issue.record("expected an unexpected response, got \(error)")
                return
            }
            #expect(reason == expected)
        }
        #expect(try await pages.next() == nil)
        #expect(mock.listMock.callCount == 3)
    }

    /// Without a `more` flag a missing cursor is simply the end.
    @Test func withoutAMoreFlagAMissingCursorIsTheEnd() async throws {
        let mock = MockNumbersService()
        mock.listByTokenMock.enqueue(.success(NumberPage(numbers: [Numbered(number: 1)], more: true)))
        var count = 0
        for try await _ in mock.listByTokenPages() { count += 1 }
        #expect(count == 1)
        #expect(mock.listByTokenMock.callCount == 1)
    }

    @Test func aBytesTokenIsFollowedUntilItIsAbsentOrEmpty() async throws {
        let mock = MockNumbersService()
        mock.listByTokenMock.enqueue(
            .success(NumberPage(numbers: [Numbered(number: 1)], nextToken: Data([0xFF, 0x00]))),
            .success(NumberPage(numbers: [Numbered(number: 2)], nextToken: Data())),
            .success(NumberPage(numbers: [Numbered(number: 3)])))
        var numbers: [Int64] = []
        for try await item in mock.listByTokenItems() { numbers.append(item.number) }
        // An empty token is no token: the second page is the last.
        #expect(numbers == [1, 2])
        #expect(mock.listByTokenMock.calls.map(\.token) == [nil, Data([0xFF, 0x00])])
    }

    @Test func theTokenTravelsAsBase64URLInTheQuery() async throws {
        let seen = Locked<[String]>([])
        let transport = RecordingTransport { request in
            seen.withLock { $0.append(request.path) }
            let page = seen.withLock { $0.count } == 1 ? NumberPage(numbers: [Numbered(number: 1)], nextToken: Data([0xFB, 0xFF])) : NumberPage()
            return RPCResponse(status: 200, headers: ["Content-Type": "application/x-protobuf"], body: page.serializedData())
        }
        var count = 0
        for try await _ in NumbersClient(transport: transport).listByTokenPages() { count += 1 }
        #expect(count == 2)
        #expect(seen.withLock { $0 } == ["/numbers/by-token", "/numbers/by-token?token=-_8"])
    }

    @Test func aStringAddressedPushPayloadIsCheckedByItsField() {
        let notice = Notice(account: "alice", body: "hello")
        #expect(Notice.decode(notice.serializedData(), encoding: .protobuf, loggedInUser: "alice") == .success(notice))
        #expect(Notice.decode(notice.serializedData(), encoding: .protobuf, loggedInUser: "bob") == .failure(.addressedToAnotherUser("alice")))
    }
}

/// A transport answering every request with `respond`.
private struct RecordingTransport: RPCTransport {
    typealias Auth = Unauthenticated
    let respond: @Sendable (RPCRequest) -> RPCResponse
    func send(_ request: RPCRequest) async throws(TransportError) -> RPCResponse { respond(request) }
}
