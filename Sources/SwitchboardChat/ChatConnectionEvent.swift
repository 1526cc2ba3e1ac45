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
