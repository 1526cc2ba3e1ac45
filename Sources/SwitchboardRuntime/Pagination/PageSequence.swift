/// Every page of a paginated endpoint as an `AsyncSequence`, fetched one call at a time
/// as the sequence is iterated (nothing is fetched before the first `next()`).
///
/// The sequence ends after the page the schema's `paginate` rule calls the last. A call that
/// fails throws its ``RequestError`` (the endpoint's own error or a transport failure) and
/// ends the sequence; a new iterator starts again from the first request. A response that
/// says more pages follow but gives no cursor (``PageContinuation/inconsistent(_:)``) is
/// handed out, and the next `next()` throws ``TransportError/unexpectedResponse(_:)``: the
/// pages cannot all be fetched, and ending quietly would pass for having them. A server whose
/// cursors run in a cycle fails with ``TransportError/unexpectedResponse(_:)`` instead of
/// paging for ever: before repeating any cursor it still remembers (by default the last
/// 1,024, at most 1 MiB of them; see ``rememberingCursors(_:bytes:)``); a longer cycle after
/// repeating at most twice its length or as many pages as came before it, whichever is more.
/// Once the iterating task is cancelled, `next()` throws ``TransportError/cancelled`` without
/// fetching. ``limitedTo(pages:)`` caps how many pages are fetched at all.
///
/// Iterated from an actor (`for try await` on the main actor, say), the iterator stays on it
/// (`next(isolation:)`): only the fetch itself leaves it.
public struct PageSequence<Request: Sendable, Response: Sendable, Item: Sendable, EndpointError: Error & Sendable>: AsyncSequence, Sendable {
    /// Each element is one response.
    public typealias Element = Response

    /// The request of the first page.
    public let firstRequest: Request
    let pagination: Pagination<Request, Response, Item>
    let fetch: @Sendable (Request) async -> RequestResult<Response, EndpointError>
    /// How many recent cursors, and how many of their bytes, are kept to stop a short cycle.
    var rememberedCursors = 1024
    var rememberedCursorBytes = 1 << 20
    /// The most pages fetched; `nil` for no limit.
    public private(set) var maximumPages: Int?

    /// Pages starting at `firstRequest`, each fetched by `fetch` (a generated client's call).
    public init(
        firstRequest: Request, pagination: Pagination<Request, Response, Item>,
        fetch: @escaping @Sendable (Request) async -> RequestResult<Response, EndpointError>
    ) {
        self.firstRequest = firstRequest
        self.pagination = pagination
        self.fetch = fetch
    }

    /// The same pages, remembering at most `count` recent cursors holding at most `bytes`
    /// UTF-8 bytes in all to catch a repeated one before its page is fetched again. A cycle
    /// too long to remember is still caught, after repeating at most twice its length or as
    /// many pages as came before it, whichever is more. Both bounds keep a server's cursors
    /// from growing the client's memory without end.
    public func rememberingCursors(_ count: Int, bytes: Int) -> PageSequence {
        var copy = self
        copy.rememberedCursors = Swift.max(0, count)
        copy.rememberedCursorBytes = Swift.max(0, bytes)
        return copy
    }

    /// The same pages, fetching at most `count` of them (at least one): a server that still
    /// says more follow after the last of them fails the next `next()` with
    /// ``TransportError/unexpectedResponse(_:)``, so a feed that never ends, or ends later than
    /// the app can afford, cannot pass for complete. Without a limit a sequence pages as long
    /// as the server hands out new cursors.
    public func limitedTo(pages count: Int) -> PageSequence {
        var copy = self
        copy.maximumPages = Swift.max(1, count)
        return copy
    }

    /// The items of every page, in page order.
    public var items: PageItemSequence<Request, Response, Item, EndpointError> { PageItemSequence(pages: self) }

    /// The items of every page, following at most `maximumConsecutiveEmptyPages` empty pages in a row.
    public func items(maximumConsecutiveEmptyPages: Int) -> PageItemSequence<Request, Response, Item, EndpointError> {
        PageItemSequence(pages: self, maximumConsecutiveEmptyPages: maximumConsecutiveEmptyPages)
    }

    /// Starts fetching from the first request.
    public func makeAsyncIterator() -> Iterator { Iterator(pending: firstRequest, sequence: self) }

    /// Fetches the next page when asked.
    public struct Iterator: AsyncIteratorProtocol {
        var pending: Request?
        let sequence: PageSequence
        /// Brent's cycle detection: a saved cursor, and how far past it the sequence may go
        /// before saving again (saves at steps 1, 3, 7, 15, ...). A cycle of length c entered
        /// after t pages is caught once a save falls inside it with a window of at least c:
        /// at most max(2c, t + 1) pages repeat, in constant memory however long the feed.
        var savedCursor: String?
        var stepsSinceSave = 0
        var stepsUntilSave = 1
        /// The most recent cursors, so a short cycle stops before any page comes twice: at
        /// most the sequence's count and bytes of them, the oldest forgotten first.
        var recentCursors: Set<String> = []
        var recentOrder: [String] = []
        var recentStart = 0
        var recentBytes = 0
        /// Why no page can follow the one handed out last, though it said more would.
        var inconsistency: String?
        /// Pages fetched so far, against the sequence's ``PageSequence/maximumPages``.
        var fetchedPages = 0

        init(pending: Request, sequence: PageSequence) {
            self.pending = pending
            self.sequence = sequence
        }

        /// The next page, `nil` after the last one; throws the call's error, or after a page
        /// that promised more without a cursor ``TransportError/unexpectedResponse(_:)``, and
        /// then ends.
        public mutating func next() async throws(RequestError<EndpointError>) -> Response? {
            try await next(isolation: nil)
        }

        /// As ``next()``, staying on the caller's actor (a `for try await` loop passes it).
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(RequestError<EndpointError>) -> Response? {
            if let inconsistency {
                self.inconsistency = nil
                throw .transport(.unexpectedResponse(inconsistency))
            }
            guard let request = pending else { return nil }
            pending = nil
            // Not left to the call: a fetch of the caller's own need not notice cancellation.
            if Task.isCancelled { throw .transport(.cancelled) }
            if let maximum = sequence.maximumPages, fetchedPages >= maximum {
                throw .transport(.unexpectedResponse("the server offered more than the \(maximum) pages this sequence fetches; paging stopped"))
            }
            if let cursor = sequence.pagination.cursor(request) {
                if cursor == savedCursor || recentCursors.contains(cursor) {
                    pending = nil
                    throw .transport(.unexpectedResponse("the server handed out a page cursor it had given before; paging stopped"))
                }
                remember(cursor)
                stepsSinceSave += 1
                if stepsSinceSave == stepsUntilSave {
                    savedCursor = cursor
                    stepsSinceSave = 0
                    stepsUntilSave *= 2
                }
            }
            fetchedPages += 1
            switch await sequence.fetch(request) {
            case let .success(response):
                switch sequence.pagination.continuation(request, response) {
                case let .next(next): pending = next
                case .last: break
                case let .inconsistent(reason): inconsistency = reason
                }
                return response
            case let .nonSuccess(error):
                throw .endpoint(error)
            case let .failure(error):
                throw .transport(error)
            }
        }

        /// Whether a further `next()` may fetch or throw: a page, or the error it owes.
        var hasMore: Bool { pending != nil || inconsistency != nil }

        private mutating func remember(_ cursor: String) {
            recentOrder.append(cursor)
            recentCursors.insert(cursor)
            recentBytes += cursor.utf8.count
            while recentStart < recentOrder.count
                && (recentOrder.count - recentStart > sequence.rememberedCursors || recentBytes > sequence.rememberedCursorBytes) {
                let oldest = recentOrder[recentStart]
                recentCursors.remove(oldest)
                recentBytes -= oldest.utf8.count
                recentOrder[recentStart] = ""
                recentStart += 1
            }
            // Forgotten slots (emptied) are dropped in bulk, so each entry moves at most once more.
            if recentStart > 64 && recentStart * 2 > recentOrder.count {
                recentOrder.removeFirst(recentStart)
                recentStart = 0
            }
        }
    }
}
