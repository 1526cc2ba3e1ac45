#if canImport(CSwitchboardOpenSSL)
// Internal: the C types stay out of the module interface, so importers need no module map.
internal import CSwitchboardOpenSSL
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A server's certificate and key, loaded once and shared by its connections.
public final class TLSServerContext: @unchecked Sendable {
    package let context: OpaquePointer

    /// Loads a PEM certificate chain and private key (unencrypted: an encrypted key fails,
    /// rather than prompt for its passphrase). The error says why, in OpenSSL's words (a
    /// missing file, a key that does not match the certificate).
    public init(certificateChainPath: String, privateKeyPath: String) throws(NetworkError) {
        var reason = [CChar](repeating: 0, count: 256)
        guard let context = sb_server_context(certificateChainPath, privateKeyPath, &reason, reason.count) else {
            throw .io("cannot load the TLS certificate \(certificateChainPath) or key \(privateKeyPath): \(TLSEngine.text(of: reason))")
        }
        self.context = context
    }

    /// A server session for one accepted connection, or nil if OpenSSL cannot make one. With
    /// `allowHTTP2` (HTTP/2 and gRPC servers) ALPN chooses `h2`, else `http/1.1`; a client
    /// that offers neither is refused with `no_application_protocol` (RFC 7301), one that
    /// offers no ALPN at all is served. Chosen per session: one context may serve both kinds.
    package func makeSession(allowHTTP2: Bool = false) -> TLSSession? {
        guard let engine = try? TLSEngine(serverContext: context, allowHTTP2: allowHTTP2) else { return nil }
        return TLSSession(engine)
    }

    deinit { SSL_CTX_free(context) }
}
#else

/// A server's certificate and key. Server-side TLS needs the OpenSSL shim (Linux).
public final class TLSServerContext: @unchecked Sendable {
    /// Always fails on platforms without the OpenSSL shim.
    public init(certificateChainPath: String, privateKeyPath: String) throws(NetworkError) {
        throw .io("server-side TLS is only available with the system OpenSSL")
    }

    package func makeSession(allowHTTP2: Bool = false) -> TLSSession? { nil }
}
#endif
