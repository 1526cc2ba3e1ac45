import Foundation
@testable import SwitchboardRuntime
import Testing

/// The cursors a page sequence keeps to stop a short cycle are bounded in count and bytes, so
/// a server handing out long cursors cannot grow the client's memory without end.
@Suite struct PageCursorMemoryTests {
    struct NoError: Error {}

    /// Page n's request carries cursor `n` padded to `cursorBytes`; the feed never ends.
    static func endless(cursorBytes: Int, pages: Int) -> PageSequence<Int, Int, Int, NoError> {
        let pagination = Pagination<Int, Int, Int>(
            items: { [$0] },
            cursor: { page in page == 0 ? nil : String(page) + String(repeating: "-", count: max(0, cursorBytes - String(page).utf8.count)) },
            nextRequest: { request, _ in request + 1 < pages ? request + 1 : nil })
        return PageSequence(firstRequest: 0, pagination: pagination) { request in .success(request) }
    }

    @Test func rememberedCursorsStayWithinTheByteBound() async throws {
        var iterator = Self.endless(cursorBytes: 100_000, pages: 60).makeAsyncIterator()
        var pages = 0
        var mostBytes = 0
        while try await iterator.next() != nil {
            pages += 1
            mostBytes = max(mostBytes, iterator.recentBytes)
            #expect(iterator.recentCursors.count == iterator.recentOrder.count - iterator.recentStart)
        }
        #expect(pages == 60)
        // 60 cursors of 100 kB are 6 MB; the default keeps at most 1 MiB of them.
        #expect(mostBytes <= 1 << 20)
        #expect(mostBytes >= 900_000)
    }

    @Test func theBoundsAreOptions() async throws {
        var iterator = Self.endless(cursorBytes: 10, pages: 500).rememberingCursors(8, bytes: 1 << 20).makeAsyncIterator()
        var pages = 0
        while try await iterator.next() != nil {
            pages += 1
            #expect(iterator.recentCursors.count <= 8)
        }
        #expect(pages == 500)
        var small = Self.endless(cursorBytes: 10, pages: 50).rememberingCursors(1000, bytes: 35).makeAsyncIterator()
        while try await small.next() != nil { #expect(small.recentBytes <= 35) }
    }

    @Test func aRememberedCursorStillStopsACycle() async throws {
        // 1 -> 2 -> 3 -> 1: caught before page 1 is fetched twice.
        let pagination = Pagination<Int, Int, Int>(
            items: { [$0] }, cursor: { $0 == 0 ? nil : String($0) }, nextRequest: { request, _ in request == 3 ? 1 : request + 1 })
        var fetched: [Int] = []
        await #expect(throws: RequestError<NoError>.self) {
            for try await page in PageSequence<Int, Int, Int, NoError>(firstRequest: 0, pagination: pagination, fetch: { .success($0) }) {
                fetched.append(page)
            }
        }
        #expect(fetched == [0, 1, 2, 3])
    }
}
