import SwitchboardHTTPSyntax

/// Headers a server handler, or a server interceptor, adds to its response: an `ETag`, a
/// request id, rate-limit figures. Reach it as ``ServerContext/responseHeaders``; what it
/// holds when the response leaves the router goes out with it, success or error, whoever
/// answered (the handler, or an interceptor that refused the call): on the WebSocket as the
/// response's headers, over gRPC as metadata (initial metadata with a success, trailers
/// with an error).
///
/// They join the response as the handler's answer leaves it, inside any interceptors: an
/// interceptor that replaces that response with one of its own replaces them too (headers it
/// adds here itself still go out).
///
/// A name or value no transport could carry the same way is refused (`add` and `set` say
/// `false`): a name that is not an HTTP token, a value with CR, LF or NUL, and the names
/// the transports own (`Content-Type` and `Content-Length`, which belong to the body, and
/// anything starting `grpc-`, `switchboard-` or `:`).
// Sendable: its headers are only reached under its stripe of `StripedLock`.
public final class ServerResponseHeaders: @unchecked Sendable {
    // Stored state below is reached only under its lock or on the loop's thread, which
    // already makes each access exclusive: `@exclusivity(unchecked)` drops the runtime's own
    // check, about 80 instructions an access and 5% of a call (docs/performance.md).
    @exclusivity(unchecked) private var added = RPCHeaders()
    /// Names given to `set`: they replace a header of that name the response carries itself.
    @exclusivity(unchecked) private var replacing: [String] = []

    /// No headers yet.
    public init() {}

    /// Adds a header, after any of the same name; `false` if it was refused.
    @discardableResult
    public func add(_ name: String, _ value: String) -> Bool {
        guard Self.isSendable(name: name, value: value) else { return false }
        StripedLock.withLock(for: self) { added.add(name, value) }
        return true
    }

    /// Sets a header, replacing any of the same name (compared case-insensitively), the
    /// response's own included; `false` if it was refused.
    @discardableResult
    public func set(_ name: String, _ value: String) -> Bool {
        guard Self.isSendable(name: name, value: value) else { return false }
        StripedLock.withLock(for: self) {
            added.set(name, value)
            if !replacing.contains(where: { RPCHeaders.namesMatch($0, name) }) { replacing.append(name) }
        }
        return true
    }

    /// The headers added so far and not yet sent.
    public var fields: RPCHeaders { StripedLock.withLock(for: self) { added } }

    /// Moves what it holds into `response` (and forgets it, so a second application, after
    /// the interceptors, adds only what they added since).
    func apply(to response: inout RPCResponse) {
        let (fields, replaced): (RPCHeaders, [String]) = StripedLock.withLock(for: self) {
            defer {
                added = RPCHeaders()
                replacing = []
            }
            return (added, replacing)
        }
        guard !fields.fields.isEmpty else { return }
        for name in replaced { response.headers.remove(name) }
        for (name, value) in fields { response.headers.add(name, value) }
    }

    /// Whether every transport can carry the header as given.
    static func isSendable(name: String, value: String) -> Bool {
        guard HTTPSyntax.isToken(name), !HTTPSyntax.hasNULCROrLF(value) else { return false }
        let lowered = name.lowercased()
        return lowered != "content-type" && lowered != "content-length" && !lowered.hasPrefix("grpc-") && !lowered.hasPrefix("switchboard-")
    }

}
