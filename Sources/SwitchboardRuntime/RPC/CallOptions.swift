/// Per-call settings.
public struct CallOptions: Sendable, Hashable {
    /// Overrides the endpoint's timeout and the transport's default; `nil` keeps them.
    public var timeout: Duration?
    /// Extra headers, added after the schema-bound ones; a name they share with a
    /// schema-bound header replaces its values (all values given here for it go out).
    public var headers: RPCHeaders

    /// Creates options.
    public init(timeout: Duration? = nil, headers: RPCHeaders = [:]) {
        self.timeout = timeout
        self.headers = headers
    }
}
