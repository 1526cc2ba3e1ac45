/// The items of every page of a paginated endpoint, in order, as an `AsyncSequence`:
/// pages are fetched only when the items already fetched run out. Errors and the end
/// are those of the underlying ``PageSequence``.
public struct PageItemSequence<Request: Sendable, Response: Sendable, Item: Sendable, EndpointError: Error & Sendable>: AsyncSequence, Sendable {
    /// Each element is one item of a page.
    public typealias Element = Item

    /// The pages the items come from.
    public let pages: PageSequence<Request, Response, Item, EndpointError>
    /// How many empty pages in a row the sequence follows before it fails.
    public let maximumConsecutiveEmptyPages: Int

    /// The items of `pages`, following at most `maximumConsecutiveEmptyPages` empty pages in a
    /// row (100 by default; 0 follows none): a server that hands out fresh cursors to empty
    /// pages for ever would otherwise hold one `next()` for ever. An empty last page is never
    /// an error.
    public init(pages: PageSequence<Request, Response, Item, EndpointError>, maximumConsecutiveEmptyPages: Int = 100) {
        self.pages = pages
        self.maximumConsecutiveEmptyPages = Swift.max(0, maximumConsecutiveEmptyPages)
    }

    /// Starts from the first page.
    public func makeAsyncIterator() -> Iterator {
        Iterator(pages: pages.makeAsyncIterator(), items: pages.pagination.items, maximumConsecutiveEmptyPages: maximumConsecutiveEmptyPages)
    }

    /// Hands out the current page's items, then fetches the next page.
    public struct Iterator: AsyncIteratorProtocol {
        var pages: PageSequence<Request, Response, Item, EndpointError>.Iterator
        let items: @Sendable (Response) -> [Item]
        var buffer: [Item] = []
        var position = 0
        var isFinished = false

        let maximumConsecutiveEmptyPages: Int

        init(pages: PageSequence<Request, Response, Item, EndpointError>.Iterator, items: @escaping @Sendable (Response) -> [Item], maximumConsecutiveEmptyPages: Int) {
            self.pages = pages
            self.items = items
            self.maximumConsecutiveEmptyPages = maximumConsecutiveEmptyPages
        }

        /// The next item, `nil` after the last page's last item; throws a page's error, and
        /// ``TransportError/cancelled`` once the iterating task is cancelled (items of a page
        /// already fetched are not handed out after it).
        public mutating func next() async throws(RequestError<EndpointError>) -> Item? {
            try await next(isolation: nil)
        }

        /// As ``next()``, staying on the caller's actor (a `for try await` loop passes it): items
        /// of a page already fetched are handed out without leaving it.
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(RequestError<EndpointError>) -> Item? {
            // Once it has thrown, it is over: calling again must not page on.
            if isFinished { return nil }
            if Task.isCancelled {
                isFinished = true
                throw .transport(.cancelled)
            }
            // Empty pages in the middle are skipped, but not without end.
            var emptyPages = 0
            while position == buffer.count {
                if emptyPages > maximumConsecutiveEmptyPages, pages.hasMore {
                    isFinished = true
                    throw .transport(.unexpectedResponse("\(emptyPages) pages in a row had no items; paging stopped"))
                }
                let page: Response?
                do throws(RequestError<EndpointError>) {
                    page = try await pages.next(isolation: actor)
                } catch {
                    isFinished = true
                    throw error
                }
                guard let page else { return nil }
                buffer = items(page)
                position = 0
                if buffer.isEmpty { emptyPages += 1 }
            }
            defer { position += 1 }
            return buffer[position]
        }
    }
}
