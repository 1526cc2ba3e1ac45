import SwitchboardHTTPSyntax

/// Which header values descriptions, `dump` and `Mirror` may show: only those of names known
/// to carry no secret; `Authorization` and anything unknown read `[REDACTED]`. The same rule
/// as `LogRedaction` in SwitchboardRuntime (a test holds the two lists equal); this module
/// does not depend on that one.
enum HeaderRedaction {
    static let placeholder = "[REDACTED]"

    /// Header names (lowercased) whose values are shown.
    static let visibleHeaderNames: Set<String> = [
        "accept", "accept-encoding", "cache-control", "connection", "content-encoding", "content-length",
        "content-type", "date", "host", "location", "retry-after", "sec-websocket-extensions",
        "sec-websocket-protocol", "sec-websocket-version", "server", "upgrade", "user-agent",
        "x-signal-agent", "x-signal-timestamp",
    ]

    static func value(_ value: String, ofHeader name: String) -> String {
        // The same comparison as `LogRedaction`'s.
        visibleNames.containsLowercased(name) ? value : placeholder
    }

    private static let visibleNames = HTTPFieldNameSet(visibleHeaderNames)

    /// A path with its query string (where Signal's old API put credentials) hidden.
    static func path(_ path: String) -> String {
        guard let mark = path.firstIndex(of: "?") else { return path }
        return path[..<mark] + "?" + placeholder
    }
}

extension HTTPHeaderField: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// `name: value`, with the value redacted unless the name is known to be harmless.
    public var description: String { "\(name): \(HeaderRedaction.value(value, ofHeader: name))" }
    public var debugDescription: String { description }
    public var customMirror: Mirror {
        Mirror(self, children: ["name": name, "value": HeaderRedaction.value(value, ofHeader: name)], displayStyle: .struct)
    }
}

extension WebSocketHandshake.ClientRequest: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The request with its query string and secret header values redacted.
    public var description: String {
        "GET \(isSecure ? "wss" : "ws")://\(host):\(port)\(HeaderRedaction.path(path)) \(headers)"
    }
    public var debugDescription: String { description }
    public var customMirror: Mirror {
        Mirror(self, children: ["host": host, "port": port, "path": HeaderRedaction.path(path), "isSecure": isSecure,
                                "headers": headers, "subprotocols": subprotocols], displayStyle: .struct)
    }
}

extension WebSocketHandshake.ServerRequest: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The request with its query string and secret header values redacted.
    public var description: String { "GET \(HeaderRedaction.path(path)) \(headers)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror {
        Mirror(self, children: ["path": HeaderRedaction.path(path), "headers": headers, "subprotocols": subprotocols], displayStyle: .struct)
    }
}
