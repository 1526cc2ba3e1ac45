/// Headers a server handler, or a server interceptor, adds to its response: an `ETag`, a
/// request id, rate-limit figures. Reach it as ``ServerContext/responseHeaders``; what it
/// holds when the handler returns goes out with the answer, success or declared error,
/// after the response's own headers (over gRPC as metadata: initial metadata with a
/// success, trailers with an error).
///
/// `Content-Type` and `Content-Length` belong to the body and are not taken from here.
// Sendable: its headers are only reached under its stripe of `StripedLock`.
public final class ServerResponseHeaders: @unchecked Sendable {
    private var headers = RPCHeaders()

    /// No headers yet.
    public init() {}

    /// Adds a header, after any of the same name.
    public func add(_ name: String, _ value: String) {
        StripedLock.withLock(for: self) { headers.add(name, value) }
    }

    /// Sets a header, replacing any of the same name (compared case-insensitively).
    public func set(_ name: String, _ value: String) {
        StripedLock.withLock(for: self) { headers.set(name, value) }
    }

    /// The headers added so far.
    public var fields: RPCHeaders { StripedLock.withLock(for: self) { headers } }

    /// Adds the headers to `response`, leaving its body's own headers alone.
    func apply(to response: inout RPCResponse) {
        let added = fields
        guard !added.fields.isEmpty else { return }
        for (name, value) in added where !RPCHeaders.namesMatch(name, "Content-Type") && !RPCHeaders.namesMatch(name, "Content-Length") {
            response.headers.add(name, value)
        }
    }
}
