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

    /// A cycle too long to remember (nothing remembered here) is caught after repeating at
    /// most twice its length or as many pages as came before it, whichever is more, as the
    /// documentation says (from the pagination review: it said "within twice its length",
    /// which a long run before the cycle breaks).
    @Test func aCycleTooLongToRememberStopsWithinTheDocumentedBound() async throws {
        for (before, length) in [(130, 10), (0, 7), (5, 100), (4_100, 1_100), (1, 1)] {
            // Pages 1...before+length, then back to before+1.
            let pagination = Pagination<Int, Int, Int>(
                items: { [$0] }, cursor: { $0 == 0 ? nil : String($0) },
                nextRequest: { request, _ in request == before + length ? before + 1 : request + 1 })
            let fetches = Locked(0)
            let pages = PageSequence<Int, Int, Int, NoError>(firstRequest: 0, pagination: pagination) { request in
                fetches.withLock { $0 += 1 }
                return .success(request)
            }.rememberingCursors(0, bytes: 0)
            await #expect(throws: RequestError<NoError>.self) { for try await _ in pages {} }
            // The first page has no cursor; then `before` pages, the cycle once, and the repeats.
            let repeated = fetches.current - 1 - before - length
            #expect(repeated >= 0 && repeated <= max(2 * length, before + 1), "before \(before), cycle \(length): \(repeated) pages repeated")
        }
    }

    /// `next()` throws `cancelled` without fetching once the iterating task is cancelled,
    /// and the items iterator hands out no more of a page it already has (from the
    /// pagination review: the rest of the page came out, and a fetch that ignores
    /// cancellation paged on).
    @Test func cancellingTheIteratingTaskEndsIterationAtOnce() async throws {
        let fetches = Locked(0)
        let pagination = Pagination<Int, [Int], Int>(items: { $0 }, cursor: { $0 == 0 ? nil : String($0) }, nextRequest: { request, _ in request + 1 })
        // A fetch of the caller's own that ignores cancellation: 100 items a page, for ever.
        let sequence = PageSequence<Int, [Int], Int, NoError>(firstRequest: 0, pagination: pagination) { request in
            fetches.withLock { $0 += 1 }
            return .success(Array(request * 100..<(request + 1) * 100))
        }
        let outcome = await Task { () -> (first: Int?, afterCancel: String, pages: String) in
            var items = sequence.items.makeAsyncIterator()
            let first = try? await items.next()
            withUnsafeCurrentTask { $0?.cancel() }
            var afterCancel = "no error"
            do { _ = try await items.next() } catch { afterCancel = "\(error)" }
            var pageIterator = sequence.makeAsyncIterator()
            var pages = "no error"
            do { _ = try await pageIterator.next() } catch { pages = "\(error)" }
            return (first, afterCancel, pages)
        }.value
        #expect(outcome.first == 0)
        #expect(outcome.afterCancel == "\(RequestError<NoError>.transport(.cancelled))")
        #expect(outcome.pages == "\(RequestError<NoError>.transport(.cancelled))")
        #expect(fetches.current == 1)
    }

    /// `maximumConsecutiveEmptyPages: 0` follows no empty page (it was raised to 1), and an
    /// empty last page is never an error, whatever the bound.
    @Test func zeroEmptyPagesFollowsNoneAndAnEmptyLastPageEndsQuietly() async throws {
        // Page 0 empty, page 1 holds 7, page 2 empty and last.
        let pagination = Pagination<Int, [Int], Int>(items: { $0 }, cursor: { $0 == 0 ? nil : String($0) },
                                                     nextRequest: { request, _ in request < 2 ? request + 1 : nil })
        let sequence = PageSequence<Int, [Int], Int, NoError>(firstRequest: 0, pagination: pagination) { request in .success(request == 1 ? [7] : []) }
        await #expect(throws: RequestError<NoError>.self) { for try await _ in sequence.items(maximumConsecutiveEmptyPages: 0) {} }
        var items: [Int] = []
        for try await item in sequence.items(maximumConsecutiveEmptyPages: 1) { items.append(item) }
        #expect(items == [7])
        // One empty page, the last: no error even at 0.
        let single = PageSequence<Int, [Int], Int, NoError>(
            firstRequest: 0, pagination: Pagination(items: { $0 }, cursor: { _ in nil }, nextRequest: { _, _ in nil })) { _ in .success([]) }
        var none = 0
        for try await _ in single.items(maximumConsecutiveEmptyPages: 0) { none += 1 }
        #expect(none == 0)
    }
}
