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

#if !canImport(CSwitchboardOpenSSL)
/// A server's certificate and key. Server-side TLS needs the OpenSSL shim (Linux).
public final class TLSServerContext: @unchecked Sendable {
    /// Always fails on platforms without the OpenSSL shim.
    public init(certificateChainPath: String, privateKeyPath: String) throws(WebSocketError) {
        throw .io("server-side TLS is only available with the system OpenSSL")
    }
}
#endif
