import Foundation
import SwitchboardWebSocket

/// What happens to a chat connection as a whole, in order: `connected` first, `disconnected` last.
public enum ChatConnectionEvent: Sendable, Hashable {
    /// The upgrade succeeded; what the server said in its response headers.
    case connected(ChatUpgradeInfo)
    /// The connection ended, and why.
    case disconnected(ChatConnectionError)
}

/// The server's upgrade response, as Signal's server fills it in.
public struct ChatUpgradeInfo: Sendable, Hashable {
    /// `X-Signal-Timestamp`: the server's clock in milliseconds, for skew correction.
    public var serverTimestamp: Date?
    /// `X-Signal-Alert` values, one per header or comma-separated (such as `critical-idle-primary-device`).
    public var alerts: [String]
    /// Every header of the upgrade response, in order.
    public var headers: [HTTPHeaderField]

    /// Reads Signal's headers from an upgrade response; malformed values are left out, not fatal.
    public init(headers: [HTTPHeaderField]) {
        self.headers = headers
        serverTimestamp = headers.value(named: "X-Signal-Timestamp").flatMap { UInt64($0.trimmingCharacters(in: .whitespaces)) }
            .map { Date(timeIntervalSince1970: Double($0) / 1000) }
        alerts = headers.values(named: "X-Signal-Alert")
            .flatMap { $0.split(separator: ",") }
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
    }
}

/// Something odd the connection saw and survived; for logs (`ChatConnectionOptions.diagnostics`).
public enum ChatDiagnostic: Sendable, Hashable, CustomStringConvertible {
    /// A response for no pending request: late after a timeout or cancellation, or a server bug.
    case unknownResponseID(UInt64)
    /// A frame that is not a valid envelope; it was dropped.
    case undecodableFrame(String)
    /// A text message, which Signal's protocol never sends; it was dropped.
    case unexpectedTextMessage
    /// A push no handler knows; it was answered 404.
    case unknownPush(verb: String, path: String)
    /// A push that arrived as the connection ended, or past the push queue's limit (which
    /// ends the connection); left unacknowledged for redelivery.
    case droppedPush(path: String)
    /// A push for a known event whose payload does not decode; answered 400 and reported
    /// here. The server keeps what was not answered 2xx and sends it again on a later connection.
    case undecodablePush(path: String, reason: String)
    /// A push whose listener failed (threw); answered 500, so the server keeps it for a
    /// later connection while the pushes after it (and queue-empty) go on.
    case pushHandlerFailed(path: String, reason: String)
    /// This many diagnostics were not reported: more came in one window than
    /// `ChatConnectionOptions.diagnosticsLimit` allows.
    case suppressed(count: Int)

    public var description: String {
        switch self {
        case let .unknownResponseID(id): return "response for unknown request id \(id) ignored"
        case let .undecodableFrame(detail): return "undecodable frame dropped: \(detail)"
        case .unexpectedTextMessage: return "text message dropped"
        case let .unknownPush(verb, path): return "unknown push \(verb) \(path) answered 404"
        case let .undecodablePush(path, reason): return "push \(path) answered 400: \(reason)"
        case let .pushHandlerFailed(path, reason): return "push \(path) answered 500, its listener failed: \(reason)"
        case let .suppressed(count): return "\(count) more diagnostics suppressed (past the diagnostics limit)"
        case let .droppedPush(path): return "push \(path) not handled on this connection (it was ending); left for redelivery"
        }
    }
}
