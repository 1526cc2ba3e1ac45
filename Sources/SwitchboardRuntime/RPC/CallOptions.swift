/// Per-call settings.
public struct CallOptions: Sendable, Hashable {
    /// Overrides the endpoint's timeout and the transport's default; `nil` keeps them.
    public var timeout: Duration?
    /// Extra headers, added after the schema-bound ones; a name they share with a
    /// schema-bound header replaces its values (all values given here for it go out).
    public var headers: RPCHeaders
    /// Where the response's status, headers and trailers (and the metadata a failure came
    /// with) are kept for the caller to read after the call (see ``ResponseCapture``); `nil`
    /// keeps nothing.
    public var responseCapture: ResponseCapture?

    /// Creates options.
    public init(timeout: Duration? = nil, headers: RPCHeaders = [:], responseCapture: ResponseCapture? = nil) {
        self.timeout = timeout
        self.headers = headers
        self.responseCapture = responseCapture
    }
}
