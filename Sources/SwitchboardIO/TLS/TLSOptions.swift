/// How a `wss://` connection verifies the server.
public struct TLSOptions: Sendable, Hashable {
    /// PEM certificates to trust instead of the system store (a pinned CA, or a test CA).
    public var trustedCertificatesPEM: String?
    /// The name to send as SNI and to check the certificate against; defaults to the URL's host.
    public var serverName: String?
    /// Whether a reconnect resumes the last TLS session with the same server (on by default):
    /// it skips the certificate chain and its checks, which the first connection made under
    /// the same trust, name and address. Each session is resumed once at most (a resumed
    /// connection leaves a new one). Off, every connection makes a full handshake and none
    /// can be linked to another through a ticket. Network.framework (Apple platforms)
    /// decides for itself.
    public var resumesSessions: Bool
    /// Whose connections may resume each other's sessions: only those of the same scope, so a
    /// server cannot link connections of different scopes through a session ticket (Signal's
    /// unauthenticated connection and an account's, say; chat and gRPC clients set it from
    /// their credentials). nil is a scope of its own.
    public var sessionScope: String?

    /// Trusts the system store unless `trustedCertificatesPEM` is given.
    public init(trustedCertificatesPEM: String? = nil, serverName: String? = nil, resumesSessions: Bool = true, sessionScope: String? = nil) {
        self.trustedCertificatesPEM = trustedCertificatesPEM
        self.serverName = serverName
        self.resumesSessions = resumesSessions
        self.sessionScope = sessionScope
    }

    /// These options with `scope` added to their ``sessionScope`` (a caller's own scope kept).
    package func scoped(_ scope: String) -> TLSOptions {
        var scoped = self
        scoped.sessionScope = (sessionScope.map { $0 + " " } ?? "") + scope
        return scoped
    }

    /// Forgets every session kept for resumption (at logout, say): the next connection to
    /// each server makes a full handshake.
    public static func forgetResumableSessions() {
        #if canImport(CSwitchboardOpenSSL)
        TLSSessionCache.shared.removeAll()
        #endif
    }
}
