/// Why a WebSocket connection could not be made or had to end.
public enum WebSocketError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The peer broke RFC 6455; the connection fails with `code` (1002, 1007 or 1009).
    case protocolViolation(code: WebSocketCloseCode, reason: String)
    /// The server answered the upgrade with something other than 101, such as Signal's
    /// 403 (bad credentials), 499 (app expired) or 429 with `Retry-After`. `body` is what
    /// arrived of the response's body, at most its `Content-Length` (and 64 KiB): shorter than
    /// that header says when the connection ended or the connect deadline passed first, which
    /// callers that read the body should check (a body cut short is not a whole one).
    case upgradeRejected(status: Int, headers: [HTTPHeaderField], body: [UInt8])
    /// A 101 response that fails validation (wrong accept key, missing headers).
    case invalidUpgradeResponse(String)
    /// A malformed HTTP head during the handshake: received, or one this side was asked to
    /// send (a header value with a line break, say).
    case invalidHTTP(String)
    /// The connection is closed; `info` says how.
    case closed(WebSocketCloseInfo)
    /// A socket or TLS failure.
    case io(String)
    /// A connect, handshake or close deadline passed.
    case timeout(String)

    public var description: String {
        switch self {
        case let .protocolViolation(code, reason): return "protocol violation (\(code)): \(reason)"
        case let .upgradeRejected(status, _, _): return "upgrade rejected with status \(status)"
        case let .invalidUpgradeResponse(reason): return "invalid upgrade response: \(reason)"
        case let .invalidHTTP(reason): return "invalid HTTP: \(reason)"
        case let .closed(info): return "closed with \(info.code) \(info.reason)"
        case let .io(reason): return "I/O error: \(reason)"
        case let .timeout(what): return "timed out: \(what)"
        }
    }
}

/// One HTTP header, name as received.
public struct HTTPHeaderField: Sendable, Hashable {
    /// The header's name, as sent; compare it case-insensitively.
    public var name: String
    /// The header's value.
    public var value: String
    /// Creates a header field.
    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

extension Array where Element == HTTPHeaderField {
    /// The first value of `name`, compared case-insensitively as HTTP requires.
    public func value(named name: String) -> String? {
        let lowered = name.lowercased()
        return first { $0.name.lowercased() == lowered }?.value
    }

    /// Every value of `name`, in order, compared case-insensitively.
    public func values(named name: String) -> [String] {
        let lowered = name.lowercased()
        return filter { $0.name.lowercased() == lowered }.map(\.value)
    }
}
