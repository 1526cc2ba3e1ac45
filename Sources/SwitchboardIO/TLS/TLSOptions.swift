/// How a `wss://` connection verifies the server.
public struct TLSOptions: Sendable, Hashable {
    /// PEM certificates to trust instead of the system store (a pinned CA, or a test CA).
    public var trustedCertificatesPEM: String?
    /// The name to send as SNI and to check the certificate against; defaults to the URL's host.
    public var serverName: String?

    /// Trusts the system store unless `trustedCertificatesPEM` is given.
    public init(trustedCertificatesPEM: String? = nil, serverName: String? = nil) {
        self.trustedCertificatesPEM = trustedCertificatesPEM
        self.serverName = serverName
    }
}
