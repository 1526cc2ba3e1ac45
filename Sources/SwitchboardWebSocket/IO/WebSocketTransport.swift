import Foundation
import SwitchboardIO

/// Where a WebSocket URL points: scheme, host and port. Two URLs with the same endpoint can
/// share a preconnected transport even if their paths differ.
public struct WebSocketEndpoint: Sendable, Hashable, CustomStringConvertible {
    /// `true` for `wss://`.
    public var isSecure: Bool
    /// The host name or IP address, compared case-insensitively.
    public var host: String
    /// The URL's port, or the scheme's default: 443 for `wss://`, 80 for `ws://`.
    public var port: Int
    /// The path and query the upgrade request asks for.
    public var requestPath: String

    /// Reads a `ws://` or `wss://` URL.
    public init(_ url: URL) throws(WebSocketError) {
        guard let scheme = url.scheme?.lowercased(), scheme == "ws" || scheme == "wss", let host = url.host, !host.isEmpty else {
            // Scheme and host only: a URL's user info and query may carry credentials.
            throw .invalidUpgradeResponse("not a ws:// or wss:// URL (scheme \(url.scheme ?? "none"), host \(url.host ?? "none"))")
        }
        isSecure = scheme == "wss"
        self.host = host
        port = url.port ?? (isSecure ? 443 : 80)
        // URLComponents keeps the path as written: `URL.path` drops a trailing slash, and
        // Signal's endpoint is `/v1/websocket/`.
        let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        let written = components?.percentEncodedPath ?? ""
        var path = written.isEmpty ? "/" : written
        if let query = components?.percentEncodedQuery { path += "?" + query }
        requestPath = path
    }

    /// Endpoints match when scheme, host and port do; the path is the upgrade's business.
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.isSecure == rhs.isSecure && lhs.host.lowercased() == rhs.host.lowercased() && lhs.port == rhs.port
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(isSecure)
        hasher.combine(host.lowercased())
        hasher.combine(port)
    }

    public var description: String { "\(isSecure ? "wss" : "ws")://\(host):\(port)" }
}

/// A connected socket (TCP, and TLS for `wss://`) that has not been upgraded yet.
/// Either ``WebSocketClient/upgrade(_:url:options:)`` takes it over or ``close()`` must be
/// called; closing twice is harmless.
public final class WebSocketTransport: @unchecked Sendable {
    /// The scheme, host and port the transport was opened for.
    public let endpoint: WebSocketEndpoint
    let channel: any ByteChannel
    /// Holds what the channel reads until the upgrade takes it over.
    let parked: ParkedReader
    /// When DNS, TCP and TLS finished, to judge whether a preconnected socket is too old.
    public let openedAt: ContinuousClock.Instant

    /// Where the socket is in its life; a transport is upgraded or closed exactly once.
    enum State: Sendable { case open, upgraded, closed }
    private let state = LockedState(State.open)

    init(endpoint: WebSocketEndpoint, channel: any ByteChannel, parked: ParkedReader) {
        self.endpoint = endpoint
        self.channel = channel
        self.parked = parked
        openedAt = .now
    }

    var currentState: State { state.value }

    /// Hands the socket to a connection; `false` if it was closed or taken already.
    func claim() -> Bool { state.transition(from: .open, to: .upgraded) }

    /// Closes the socket without upgrading it; a transport already upgraded is left alone.
    public func close() {
        if state.transition(from: .open, to: .closed) { channel.close(reason: nil) }
    }
}
