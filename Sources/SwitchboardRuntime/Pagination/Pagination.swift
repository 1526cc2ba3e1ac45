/// How an endpoint pages, generated from the `paginate` block of its schema: where the
/// items of a page are, which request field carries the cursor, and how the next page's
/// request follows from a response.
public struct Pagination<Request: Sendable, Response: Sendable, Item: Sendable>: Sendable {
    /// The items of one page.
    public let items: @Sendable (Response) -> [Item]
    /// The request's cursor as text (`nil` for the first page), which lets a sequence notice
    /// a server that hands out a cursor twice and would otherwise page for ever.
    public let cursor: @Sendable (Request) -> String?
    /// The request for the page after `response`, or `nil` when `response` is the last page.
    public let nextRequest: @Sendable (_ request: Request, _ response: Response) -> Request?

    /// Describes how an endpoint pages.
    public init(
        items: @escaping @Sendable (Response) -> [Item],
        cursor: @escaping @Sendable (Request) -> String?,
        nextRequest: @escaping @Sendable (_ request: Request, _ response: Response) -> Request?
    ) {
        self.items = items
        self.cursor = cursor
        self.nextRequest = nextRequest
    }
}
