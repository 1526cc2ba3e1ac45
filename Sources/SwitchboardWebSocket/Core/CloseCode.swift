/// A close status code (RFC 6455 §7.4), including application codes such as Signal's
/// 4401 (reauthentication required) and 4409 (connected elsewhere).
public struct WebSocketCloseCode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    /// Creates a code from its number.
    public init(_ rawValue: UInt16) { self.rawValue = rawValue }

    /// The connection did what it was opened for.
    public static let normalClosure = Self(1000)
    /// The endpoint is going away, such as a server shutting down.
    public static let goingAway = Self(1001)
    /// The peer broke the protocol.
    public static let protocolError = Self(1002)
    /// The peer sent a kind of message the endpoint cannot accept.
    public static let unsupportedData = Self(1003)
    /// Reported when a close frame had no code; never sent.
    public static let noStatusReceived = Self(1005)
    /// Reported when the connection dropped without a close frame; never sent.
    public static let abnormalClosure = Self(1006)
    /// A message's data did not match its type, such as invalid UTF-8 in a text message.
    public static let invalidPayload = Self(1007)
    /// A message broke the endpoint's policy; used when no more specific code fits.
    public static let policyViolation = Self(1008)
    /// A message was too big to process.
    public static let messageTooBig = Self(1009)
    /// The client required an extension the server did not negotiate.
    public static let mandatoryExtension = Self(1010)
    /// The server met an unexpected condition.
    public static let internalError = Self(1011)
    /// Signal: the credentials were invalidated.
    public static let reauthenticationRequired = Self(4401)
    /// Signal: another connection with the same credentials replaced this one.
    public static let connectedElsewhere = Self(4409)

    /// Whether a peer may send this code in a close frame.
    public var isValidOnTheWire: Bool {
        switch rawValue {
        case 1000...1003, 1007...1014, 3000...4999: return true
        default: return false
        }
    }

    public var description: String { String(rawValue) }
}

/// How a connection ended.
public struct WebSocketCloseInfo: Sendable, Hashable {
    /// The code the peer sent, or 1005/1006 when it sent none or the connection dropped.
    public var code: WebSocketCloseCode
    /// The peer's reason text, or a local explanation when the connection dropped.
    public var reason: String
    /// Whether the close handshake completed in both directions.
    public var wasClean: Bool

    /// Creates close information from its values.
    public init(code: WebSocketCloseCode, reason: String, wasClean: Bool) {
        self.code = code
        self.reason = reason
        self.wasClean = wasClean
    }
}
