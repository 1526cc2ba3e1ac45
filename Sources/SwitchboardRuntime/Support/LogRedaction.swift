import SwitchboardHTTPSyntax

/// What descriptions, `dump` and `Mirror` may show of requests, responses and headers.
///
/// Header values are shown only for names known to carry no secret; every other value
/// (`Authorization`, access keys, cookies, any header an app invents) reads `[REDACTED]`.
/// A default of "hidden" is the safe one: a new credential header leaks nothing.
public enum LogRedaction {
    /// What stands in for a hidden value.
    public static let placeholder = "[REDACTED]"

    /// Header names (lowercased) whose values are shown.
    public static let visibleHeaderNames: Set<String> = [
        "accept", "accept-encoding", "cache-control", "connection", "content-encoding", "content-length",
        "content-type", "date", "host", "location", "retry-after", "sec-websocket-extensions",
        "sec-websocket-protocol", "sec-websocket-version", "server", "upgrade", "user-agent",
        "x-signal-agent", "x-signal-timestamp",
    ]

    /// Whether a header's value may be shown.
    public static func showsValue(ofHeader name: String) -> Bool {
        // Asked for every header of every gRPC call: compared without hashing. (A name whose
        // lowercase form has another length, such as one with a Kelvin sign, is hidden.)
        visibleNames.containsLowercased(name)
    }

    private static let visibleNames = HTTPFieldNameSet(visibleHeaderNames)

    /// `name: value`, the value redacted unless the name is known to be harmless.
    public static func header(_ name: String, _ value: String) -> String {
        "\(name): \(showsValue(ofHeader: name) ? value : placeholder)"
    }

    /// A body as its size only: bodies hold messages with sensitive fields.
    public static func body(_ count: Int) -> String { "\(count) bytes" }

    /// At most `limit` characters of a name read from input, so one hostile member name
    /// cannot put megabytes into a log line.
    public static func excerpt(_ text: String, limit: Int = 64) -> String {
        // Cut on scalars: one character can hold any number of combining marks.
        guard text.utf8.count > limit, text.unicodeScalars.count > limit else { return text }
        var cut = String.UnicodeScalarView()
        cut.append(contentsOf: text.unicodeScalars.prefix(limit))
        return String(cut) + "…"
    }
}
