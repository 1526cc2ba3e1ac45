/// What follows a page, as an endpoint's `paginate` rule reads it from the response.
public enum PageContinuation<Request: Sendable>: Sendable {
    /// The request for the next page.
    case next(Request)
    /// The page was the last one.
    case last
    /// The response contradicts itself: it says more pages follow (its `more` flag) but
    /// gives no cursor to fetch them with. The page is still handed out; then paging fails
    /// with ``TransportError/unexpectedResponse(_:)`` and this reason, rather than end as if
    /// every page had come.
    case inconsistent(String)
}
