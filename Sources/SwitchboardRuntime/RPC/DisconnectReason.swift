/// Why a call's connection ended before its answer came (``TransportError/disconnected(reason:)``):
/// what kind of end it was, for code to act on (as libsignal's `Disconnected` variants), and
/// the words, for logs.
public struct DisconnectReason: Sendable, Hashable, CustomStringConvertible, ExpressibleByStringInterpolation {
    /// What kind of end it was.
    public enum Kind: Sendable, Hashable {
        /// The connection broke, or ended for a reason not listed here.
        case connectionLost
        /// The connection is going away, or no longer takes the call: WebSocket 1001, or HTTP/2
        /// leaving the call's stream unprocessed (a GOAWAY from the server, this side's own,
        /// stream ids used up, or the server refusing the stream with REFUSED_STREAM while the
        /// connection stays up). The gRPC transport sends such a call once more (on a new
        /// connection if this one is going away) and reports this only when that attempt is
        /// not taken either.
        case goingAway
        /// This side closed it (the app's `close()`, a closed transport).
        case closedLocally
        /// Another device connected with these credentials (Signal's 4409).
        case connectedElsewhere
        /// The credentials must be refreshed before connecting again (Signal's 4401).
        case reauthenticationRequired
    }

    /// What kind of end it was.
    public var kind: Kind
    /// What happened, in words.
    public var detail: String

    /// A reason of `kind`, described by `detail`.
    public init(_ kind: Kind, _ detail: String) {
        self.kind = kind
        self.detail = detail
    }

    /// A lost connection described by `detail`.
    public init(_ detail: String) {
        self.init(.connectionLost, detail)
    }

    /// A lost connection described by the literal.
    public init(stringLiteral value: String) {
        self.init(value)
    }

    /// Whether calling again (on a new connection) may work: not after another device took
    /// over, nor while the credentials need refreshing, nor once this side closed.
    public var isRetryable: Bool {
        switch kind {
        case .connectionLost, .goingAway: return true
        case .closedLocally, .connectedElsewhere, .reauthenticationRequired: return false
        }
    }

    public var description: String { detail }
}
