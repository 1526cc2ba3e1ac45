#if canImport(CSwitchboardOpenSSL)
internal import CSwitchboardOpenSSL
import Foundation

/// TLS sessions a client may resume, one per server it talks to: a reconnect then skips the
/// certificate chain and its verification (and, over TLS 1.2, a round trip). Keyed by
/// everything that made the first session trustworthy (the trusted PEM or the system store,
/// the name checked, the address, the ALPN offer), so a session never lets a connection
/// skip a check that its own configuration would have made.
///
/// A session is taken out when a connection resumes it, not shared: TLS 1.3 asks clients not
/// to use a ticket twice (RFC 8446 §C.4), since a reused ticket links the connections. A
/// resumed TLS 1.3 connection leaves the new ticket it gets behind, never the one it used;
/// a resumed TLS 1.2 session is not kept again. Sessions are kept per
/// ``TLSOptions/sessionScope`` too, so connections of different scopes are not linked.
final class TLSSessionCache: @unchecked Sendable {
    static let shared = TLSSessionCache()
    /// Servers remembered; past it the oldest entry goes.
    static let maximumCount = 256

    private let lock = AdaptiveLock()
    private var sessions: [String: OpaquePointer] = [:]
    private var order: [String] = []
    private var forgotten = 0

    /// Bumped by ``removeAll()``: a session from a connection that started before it is not kept.
    var generation: Int { lock.withLock { forgotten } }

    /// The session stored for `key`, removed from the cache; the caller owns its reference.
    func take(_ key: String) -> OpaquePointer? {
        lock.withLock {
            guard let session = sessions.removeValue(forKey: key) else { return nil }
            order.removeAll { $0 == key }
            return session
        }
    }

    /// Keeps `session` (whose reference the cache now owns) for `key`, replacing any before,
    /// unless the cache was emptied since `generation` (then it is released).
    func store(_ session: OpaquePointer, for key: String, generation: Int) {
        let released: [OpaquePointer] = lock.withLock {
            guard generation == forgotten else { return [session] }
            var released: [OpaquePointer] = []
            if let old = sessions.updateValue(session, forKey: key) {
                // The same session again brings a second reference: one of the two goes.
                released.append(old)
                order.removeAll { $0 == key }
            }
            order.append(key)
            while order.count > Self.maximumCount {
                if let dropped = sessions.removeValue(forKey: order.removeFirst()) { released.append(dropped) }
            }
            return released
        }
        for session in released { SSL_SESSION_free(session) }
    }

    /// How many sessions are kept now.
    var count: Int { lock.withLock { sessions.count } }

    /// The session kept for `key`, left in place (for tests).
    func peek(_ key: String) -> OpaquePointer? { lock.withLock { sessions[key] } }

    /// Forgets every session.
    func removeAll() {
        let released: [OpaquePointer] = lock.withLock {
            defer { sessions = [:]; order = []; forgotten += 1 }
            return Array(sessions.values)
        }
        for session in released { SSL_SESSION_free(session) }
    }

    /// The cache key of a client session (see the type's comment), within `scope`
    /// (``TLSOptions/sessionScope``).
    static func key(trustedCertificatesPEM: String?, serverName: String, host: String, port: Int, applicationProtocols: [String],
                    scope: String?) -> String {
        [scope.map { "scope:" + $0 } ?? "-", trustedCertificatesPEM.map { "pem:" + $0 } ?? "system", serverName, "\(host):\(port)",
         applicationProtocols.joined(separator: ",")]
            .joined(separator: "\u{0}")
    }
}
#endif
