import Foundation
@testable import SwitchboardRuntime
import Testing

/// An opt-in limit on the pages a sequence fetches, and iteration that stays on the caller's
/// actor between pages.
@Suite struct PageLimitAndIsolationTests {
    struct NoError: Error {}

    /// Page n holds `itemsPerPage` items; the feed has `pages` pages (an endless one for `nil`).
    static func feed(pages: Int?, itemsPerPage: Int = 1, fetched: Locked<Int> = Locked(0)) -> PageSequence<Int, Int, Int, NoError> {
        let pagination = Pagination<Int, Int, Int>(
            items: { page in (0..<itemsPerPage).map { page * itemsPerPage + $0 } },
            cursor: { $0 == 0 ? nil : String($0) },
            nextRequest: { request, _ in pages.map { request + 1 < $0 } ?? true ? request + 1 : nil })
        return PageSequence(firstRequest: 0, pagination: pagination) { request in
            fetched.withLock { $0 += 1 }
            return .success(request)
        }
    }

    @Test func aLimitedSequenceFailsAfterItsLastPageWhenTheServerOffersMore() async throws {
        let fetched = Locked(0)
        var pages: [Int] = []
        var failure: RequestError<NoError>?
        do {
            for try await page in Self.feed(pages: nil, fetched: fetched).limitedTo(pages: 5) { pages.append(page) }
        } catch {
            failure = error
        }
        #expect(pages == [0, 1, 2, 3, 4])
        #expect(fetched.current == 5, "nothing is fetched past the limit")
        guard case let .transport(.unexpectedResponse(reason)) = failure else {
            Issue.record("an endless feed must not pass for complete at the limit, got \(String(describing: failure))")
            return
        }
        #expect(reason.contains("5 pages"))
    }

    @Test func aFeedThatEndsWithinTheLimitEndsQuietly() async throws {
        var pages: [Int] = []
        for try await page in Self.feed(pages: 5).limitedTo(pages: 5) { pages.append(page) }
        #expect(pages == [0, 1, 2, 3, 4])
        var items: [Int] = []
        for try await item in Self.feed(pages: 3, itemsPerPage: 2).limitedTo(pages: 10).items { items.append(item) }
        #expect(items == [0, 1, 2, 3, 4, 5])
    }

    @Test func aLimitBelowOneFetchesOnePage() async throws {
        let sequence = Self.feed(pages: nil).limitedTo(pages: 0)
        #expect(sequence.maximumPages == 1)
        var iterator = sequence.makeAsyncIterator()
        #expect(try await iterator.next() == 0)
        await #expect(throws: RequestError<NoError>.self) { _ = try await iterator.next() }
    }

    /// Counts every job the actor runs: each hop onto it is one.
    final class CountingExecutor: SerialExecutor, @unchecked Sendable {
        let queue = DispatchQueue(label: "switchboard.test.counting-executor")
        let jobs = Locked(0)
        func enqueue(_ job: UnownedJob) {
            jobs.withLock { $0 += 1 }
            queue.async { job.runSynchronously(on: self.asUnownedSerialExecutor()) }
        }
        func asUnownedSerialExecutor() -> UnownedSerialExecutor { UnownedSerialExecutor(ordinary: self) }
    }

    actor Reader {
        let executor = CountingExecutor()
        nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

        func readItems(_ sequence: PageItemSequence<Int, Int, Int, NoError>) async throws -> [Int] {
            var items: [Int] = []
            for try await item in sequence { items.append(item) }
            return items
        }
    }

    @Test func itemsOfAFetchedPageReachAnActorWithoutLeavingIt() async throws {
        let reader = Reader()
        // Two pages of 200 items: only the two fetches (and the call itself) hop, not each item.
        let items = try await reader.readItems(Self.feed(pages: 2, itemsPerPage: 200).items)
        #expect(items == Array(0..<400))
        let hops = reader.executor.jobs.current
        #expect(hops < 20, "each item left the actor and came back: \(hops) jobs")
    }
}
