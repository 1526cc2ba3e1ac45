import Foundation
import SwitchboardRuntime
import SwitchboardWebSocket

/// Why a chat connection could not open or had to end, in the chat server's terms.
///
/// Signal's server says these things with upgrade statuses and close codes; apps act on
/// them differently (re-register, show "linked elsewhere", back off), so each is a case.
public enum ChatConnectionError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The upgrade was refused with 401 or 403: the credentials are wrong or revoked.
    case credentialsRejected
    /// The upgrade was refused with 499: this app version is too old to connect.
    case appExpired
    /// The upgrade was refused with 429 (rate limited) or 503 (the server is full);
    /// `retryAfter` comes from `Retry-After` when present.
    case retryLater(retryAfter: Duration?)
    /// The server closed with 4401: the credentials must be refreshed.
    case reauthenticationRequired
    /// The server closed with 4409: another device connected with these credentials.
    case connectedElsewhere
    /// A side broke the protocol: 1002, 1007 (such as a response missing its message)
    /// or 1009 (a message too big).
    case protocolError(code: UInt16, reason: String)
    /// The upgrade was refused with a status that has no meaning of its own here.
    case upgradeRejected(status: Int)
    /// The connection closed with a code that has no meaning of its own here.
    case closed(code: UInt16, reason: String)
    /// The server stopped answering pings and keepalive requests, so the connection was dropped.
    case keepaliveTimedOut
    /// The connection could not be made or failed at the socket level.
    case transport(WebSocketError)

    /// Maps a failed WebSocket connect (upgrade statuses included).
    public init(connectFailure error: WebSocketError) {
        switch error {
        case let .upgradeRejected(status, headers, _):
            switch status {
            case 401, 403: self = .credentialsRejected
            case 499: self = .appExpired
            // 503: a server at its connection limit (WebSocketServer.Limits) says when to come back.
            case 429, 503: self = .retryLater(retryAfter: Self.retryAfter(in: headers))
            default: self = .upgradeRejected(status: status)
            }
        case let .protocolViolation(code, reason):
            self = .protocolError(code: code.rawValue, reason: reason)
        case let .closed(info):
            self = Self(closeInfo: info)
        default:
            self = .transport(error)
        }
    }

    /// Maps how an open connection ended.
    public init(closeInfo info: WebSocketCloseInfo) {
        switch info.code {
        case .reauthenticationRequired: self = .reauthenticationRequired
        case .connectedElsewhere: self = .connectedElsewhere
        case .protocolError, .invalidPayload, .messageTooBig: self = .protocolError(code: info.code.rawValue, reason: info.reason)
        default: self = .closed(code: info.code.rawValue, reason: info.reason)
        }
    }

    /// How the calls still waiting when the connection ended with this fail: another device
    /// taking over and revoked credentials are not worth calling again on a new connection.
    public var disconnectReason: DisconnectReason {
        switch self {
        case .connectedElsewhere: DisconnectReason(.connectedElsewhere, description)
        case .reauthenticationRequired, .credentialsRejected: DisconnectReason(.reauthenticationRequired, description)
        case .closed(code: WebSocketCloseCode.goingAway.rawValue, _): DisconnectReason(.goingAway, description)
        default: DisconnectReason(description)
        }
    }

    /// `Retry-After` read the way RPC responses read it (seconds or an HTTP date).
    static func retryAfter(in headers: [HTTPHeaderField]) -> Duration? {
        RPCResponse(status: 429, headers: RPCHeaders(headers.map { (name: $0.name, value: $0.value) })).retryAfter()
    }

    public var description: String {
        switch self {
        case .credentialsRejected: return "credentials rejected"
        case .appExpired: return "app expired"
        case let .retryLater(retryAfter?): return "retry later (after \(retryAfter))"
        case .retryLater(nil): return "retry later"
        case .reauthenticationRequired: return "reauthentication required (4401)"
        case .connectedElsewhere: return "connected elsewhere (4409)"
        case let .protocolError(code, reason): return "protocol error (\(code)): \(reason)"
        case let .upgradeRejected(status): return "upgrade rejected with status \(status)"
        case let .closed(code, reason): return reason.isEmpty ? "closed with \(code)" : "closed with \(code): \(reason)"
        case .keepaliveTimedOut: return "keepalive timed out"
        case let .transport(error): return error.description
        }
    }
}
