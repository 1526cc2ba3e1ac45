/// How an endpoint pages, generated from the `paginate` block of its schema: where the
/// items of a page are, which request field carries the cursor, and how the next page's
/// request follows from a response.
public struct Pagination<Request: Sendable, Response: Sendable, Item: Sendable>: Sendable {
    /// The items of one page.
    public let items: @Sendable (Response) -> [Item]
    /// The request's cursor as text (`nil` for the first page), which lets a sequence notice
    /// a server that hands out a cursor twice and would otherwise page for ever.
    public let cursor: @Sendable (Request) -> String?
    /// What follows `response`, the answer to `request`: the next page's request, the end,
    /// or a response that says more pages follow without a cursor to fetch them.
    public let continuation: @Sendable (_ request: Request, _ response: Response) -> PageContinuation<Request>

    /// Describes how an endpoint pages, telling the last page from one that cannot be
    /// followed (what generated code uses).
    public init(
        items: @escaping @Sendable (Response) -> [Item],
        cursor: @escaping @Sendable (Request) -> String?,
        continuation: @escaping @Sendable (_ request: Request, _ response: Response) -> PageContinuation<Request>
    ) {
        self.items = items
        self.cursor = cursor
        self.continuation = continuation
    }

    /// Describes how an endpoint pages: `nextRequest` gives the request for the page after
    /// `response`, or `nil` when `response` is the last page.
    public init(
        items: @escaping @Sendable (Response) -> [Item],
        cursor: @escaping @Sendable (Request) -> String?,
        nextRequest: @escaping @Sendable (_ request: Request, _ response: Response) -> Request?
    ) {
        self.init(items: items, cursor: cursor) { request, response in
            nextRequest(request, response).map { .next($0) } ?? .last
        }
    }
}
