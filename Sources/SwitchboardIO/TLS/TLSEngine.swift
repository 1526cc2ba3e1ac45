#if canImport(CSwitchboardOpenSSL)
// Internal: the C types stay out of the module interface, so importers need no module map.
internal import CSwitchboardOpenSSL
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// TLS without I/O, through the system OpenSSL over memory buffers: ciphertext from the
/// network goes in with ``feed(_:)``, plaintext comes out of ``read(into:)``, plaintext to
/// send goes in with ``write(_:)``, and the ciphertext to put on the wire comes out of
/// ``takeOutput()``. An event loop moves the bytes, so no thread waits on a TLS socket.
///
/// Not thread-safe: its owner serializes every call.
package final class TLSEngine: @unchecked Sendable {
    private let ssl: OpaquePointer
    /// Shared with every session of the same trust (clients) or the server's context.
    let context: OpaquePointer
    /// Whether this is the server's side of the session.
    package let isServer: Bool
    /// Where a client leaves its session for the next connection to the same server, until
    /// it has done so; nil once stored, on servers, and when resumption is off.
    private var resumptionKey: String?
    /// The session offered for resumption, with a reference of our own until `deinit` (so no
    /// later session can take its address): kept again, it would be offered again, linking
    /// the connections that use it.
    private var offeredSession: OpaquePointer?
    /// The cache's generation when this session started: one `forgetResumableSessions()` has
    /// emptied since must not be refilled with this connection's ticket.
    private var cacheGeneration = 0

    /// What a step of the handshake needs next.
    package enum HandshakeStep: Equatable, Sendable {
        /// The handshake is complete.
        case done
        /// More ciphertext from the peer (after sending ``takeOutput()``).
        case wantInput
        /// It failed, for this reason.
        case failed(String)
    }

    /// What a read found.
    package enum ReadResult: Equatable, Sendable {
        /// This many bytes of plaintext.
        case bytes(Int)
        /// No whole record yet: feed more ciphertext.
        case wantInput
        /// The peer closed TLS (close_notify).
        case closed
        /// The session failed, for this reason.
        case failed(String)
    }

    /// A client session for `serverName` (a DNS name, checked against the certificate and
    /// sent as SNI, or an IP address, checked against the certificate's addresses), trusting
    /// `trustedCertificatesPEM` or else the system store, offering `applicationProtocols`
    /// through ALPN in order of preference.
    ///
    /// With a `resumptionKey` (see ``TLSSessionCache``), a session stored under it is resumed
    /// and this session is stored once it can be resumed.
    package init(clientTrusting trustedCertificatesPEM: String?, serverName: String,
                 applicationProtocols: [String] = ["http/1.1"], resumptionKey: String? = nil) throws(IOFailure) {
        let context = try ClientContexts.shared.context(trusting: trustedCertificatesPEM)
        guard let ssl = SSL_new(context) else {
            SSL_CTX_free(context)
            throw IOFailure("cannot create a TLS session")
        }
        self.ssl = ssl
        self.context = context
        isServer = false
        guard sb_use_memory_bios(ssl) == 1 else { throw IOFailure("cannot create TLS buffers") }
        // Only what inet_pton takes is an address: "127.1" also resolves to loopback, but
        // as a name it must match the certificate, or nothing would be checked at all.
        let literal = serverName.hasPrefix("[") && serverName.hasSuffix("]") ? String(serverName.dropFirst().dropLast()) : serverName
        let isAddress = SocketConnector.isAddressLiteral(literal)
        guard sb_set_server_name(ssl, isAddress ? literal : serverName, isAddress ? 1 : 0) == 1 else {
            throw IOFailure("cannot check the certificate against the name \"\(serverName)\"")
        }
        var wire: [UInt8] = []
        for name in applicationProtocols where (1...255).contains(name.utf8.count) {
            wire.append(UInt8(name.utf8.count))
            wire += name.utf8
        }
        if !wire.isEmpty { _ = sb_offer_alpn(ssl, wire, UInt32(wire.count)) }
        self.resumptionKey = resumptionKey
        cacheGeneration = TLSSessionCache.shared.generation
        if let resumptionKey, let session = TLSSessionCache.shared.take(resumptionKey) {
            // SSL_set_session takes a reference of its own; ours goes in `deinit`. A server
            // that refuses the session gets a full handshake, certificate checks and all.
            _ = SSL_set_session(ssl, session)
            offeredSession = session
        }
        SSL_set_connect_state(ssl)
    }


    /// Leaves the session for the next connection once it can be resumed: at the end of a
    /// TLS 1.2 handshake, or when a TLS 1.3 ticket has arrived (after the handshake).
    private func storeSessionIfResumable() {
        // At the end of a resumed handshake the session is still the one offered; TLS 1.3's
        // new ticket arrives later, as a session of its own.
        guard let key = resumptionKey, let session = SSL_get_session(ssl), session != offeredSession,
              SSL_SESSION_is_resumable(session) == 1, let owned = SSL_get1_session(ssl) else { return }
        resumptionKey = nil
        TLSSessionCache.shared.store(owned, for: key, generation: cacheGeneration)
    }

    /// A server session with `context`'s certificate and key (an `SSL_CTX`, retained here).
    /// A server session; with `allowHTTP2`, ALPN chooses `h2` for a client that offers it
    /// (HTTP/2 and gRPC servers), else only `http/1.1` (WebSocket servers).
    package init(serverContext context: OpaquePointer, allowHTTP2: Bool = false) throws(IOFailure) {
        guard let ssl = SSL_new(context) else { throw IOFailure("cannot create a TLS session") }
        SSL_CTX_up_ref(context)
        self.ssl = ssl
        self.context = context
        isServer = true
        guard sb_use_memory_bios(ssl) == 1 else { throw IOFailure("cannot create TLS buffers") }
        guard sb_session_allow_h2(ssl, allowHTTP2 ? 1 : 0) == 1 else { throw IOFailure("cannot set the session's ALPN choice") }
        SSL_set_accept_state(ssl)
    }

    deinit {
        SSL_free(ssl)
        SSL_CTX_free(context)
        if let offeredSession { SSL_SESSION_free(offeredSession) }
    }

    /// Advances the handshake with what was fed so far; send ``takeOutput()`` after each step.
    package func handshake() -> HandshakeStep {
        // OpenSSL's error queue is per thread and shared by every session on this loop:
        // SSL_get_error reads it, so each call starts from an empty one.
        ERR_clear_error()
        let result = SSL_do_handshake(ssl)
        if result == 1 {
            storeSessionIfResumable()
            // A resumed TLS 1.2 session gets no ticket after the handshake: nothing left to
            // wait for, so reads stop looking.
            if SSL_session_reused(ssl) == 1 && SSL_version(ssl) != TLS1_3_VERSION { resumptionKey = nil }
            return .done
        }
        switch SSL_get_error(ssl, result) {
        case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
            return .wantInput
        default:
            if let reason = sb_verify_error(ssl) { return .failed("TLS certificate rejected: \(String(cString: reason))") }
            let detail = lastError()
            // What OpenSSL says when the answer is not TLS at all: plain HTTP, most likely.
            if detail.contains("wrong version number") || detail.contains("packet length too long") || detail.contains("http request") {
                return .failed("TLS handshake failed: the server answered without TLS (is it ws:// rather than wss://?) (\(detail))")
            }
            return .failed("TLS handshake failed: \(detail.isEmpty ? "the peer closed the connection" : detail)")
        }
    }

    /// Hands ciphertext read from the network to the session.
    package func feed(_ ciphertext: UnsafeRawBufferPointer) {
        guard let base = ciphertext.baseAddress, !ciphertext.isEmpty else { return }
        var offset = 0
        while offset < ciphertext.count {
            let taken = sb_feed(ssl, base + offset, Int32(clamping: ciphertext.count - offset))
            guard taken > 0 else { return }
            offset += Int(taken)
        }
    }

    /// Decrypts the next plaintext into `buffer`.
    package func read(into buffer: UnsafeMutableRawBufferPointer) -> ReadResult {
        ERR_clear_error()
        let count = SSL_read(ssl, buffer.baseAddress, Int32(clamping: buffer.count))
        if resumptionKey != nil { storeSessionIfResumable() }
        if count > 0 { return .bytes(Int(count)) }
        switch SSL_get_error(ssl, count) {
        case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE: return .wantInput
        case SSL_ERROR_ZERO_RETURN: return .closed
        default: return .failed("TLS read failed: \(lastError())")
        }
    }

    /// Encrypts all of `plaintext`; the records wait in ``takeOutput()``. `false` if the
    /// session failed.
    package func write(_ plaintext: UnsafeRawBufferPointer) -> Bool {
        guard let base = plaintext.baseAddress else { return true }
        var offset = 0
        ERR_clear_error()
        while offset < plaintext.count {
            let written = SSL_write(ssl, base + offset, Int32(clamping: plaintext.count - offset))
            guard written > 0 else { return false }
            offset += Int(written)
        }
        return true
    }

    /// The ciphertext waiting to be sent, taken out of the session.
    package func takeOutput() -> [UInt8] {
        let pending = sb_pending_output(ssl)
        guard pending > 0 else { return [] }
        return [UInt8](unsafeUninitializedCapacity: Int(pending)) { buffer, count in
            count = Int(max(0, sb_drain(ssl, buffer.baseAddress, Int32(clamping: buffer.count))))
        }
    }

    /// Whether ciphertext waits to be sent.
    package var hasOutput: Bool { sb_pending_output(ssl) > 0 }

    /// Queues a close_notify for the peer.
    package func shutdown() {
        ERR_clear_error()
        _ = SSL_shutdown(ssl)
    }

    /// The SNI name a client sent (server side).
    package var requestedServerName: String? {
        sb_requested_server_name(ssl).map { String(cString: $0) }
    }

    private func lastError() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        sb_last_error(&buffer, buffer.count)
        return Self.text(of: buffer)
    }

    /// The text of an OpenSSL error buffer the shim filled (NUL-terminated).
    static func text(of buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The protocol ALPN settled on once the handshake is done, or nil if none was.
    package var negotiatedProtocol: String? {
        var length: UInt32 = 0
        guard let name = sb_selected_alpn(ssl, &length), length > 0 else { return nil }
        return String(decoding: UnsafeBufferPointer(start: name, count: Int(length)), as: UTF8.self)
    }

    /// Releases a context from ``loadServerContext(certificateChainPath:privateKeyPath:)``.
    package static func freeContext(_ context: OpaquePointer) {
        SSL_CTX_free(context)
    }
}

/// Client contexts by what they trust (a PEM, or the system store), built once and shared by
/// every session, as OpenSSL intends: loading the trust store for every connection cost
/// milliseconds of CPU per connect, on whatever thread connected.
final class ClientContexts: @unchecked Sendable {
    static let shared = ClientContexts()
    /// Distinct trust configurations kept; more are built per session, not cached.
    static let maximumCount = 16

    private let lock = AdaptiveLock()
    private var contexts: [String: OpaquePointer] = [:]

    /// How many contexts are kept now.
    var count: Int { lock.withLock { contexts.count } }

    /// A context trusting `pem` or else the system store, with a reference for the caller.
    func context(trusting pem: String?) throws(IOFailure) -> OpaquePointer {
        let key = pem.map { "pem:" + $0 } ?? "system"
        if let cached = lock.withLock({ contexts[key] }) {
            SSL_CTX_up_ref(cached)
            return cached
        }
        guard let context = sb_client_context() else { throw IOFailure("cannot create a TLS context") }
        if let pem {
            let added = pem.withCString { sb_trust_pem(context, $0, Int32(strlen($0))) }
            guard added > 0 else {
                SSL_CTX_free(context)
                throw IOFailure("no certificates in the trusted PEM")
            }
        } else {
            sb_trust_system_store(context)
        }
        lock.withLock {
            guard contexts[key] == nil, contexts.count < Self.maximumCount else { return }
            contexts[key] = context
            SSL_CTX_up_ref(context)
        }
        return context
    }
}
#else
/// TLS needs the system OpenSSL, which only Linux builds link; elsewhere no session can be
/// made (Apple platforms use Network.framework), so these are never called.
package final class TLSEngine: @unchecked Sendable {
    package enum HandshakeStep: Equatable, Sendable { case done, wantInput, failed(String) }
    package enum ReadResult: Equatable, Sendable { case bytes(Int), wantInput, closed, failed(String) }
    package var isServer: Bool { false }
    package init(clientTrusting trustedCertificatesPEM: String?, serverName: String, applicationProtocols: [String] = ["http/1.1"],
                 resumptionKey: String? = nil) throws(IOFailure) {
        throw IOFailure("TLS over a socket needs the system OpenSSL")
    }
    package func handshake() -> HandshakeStep { .failed("no TLS") }
    package func feed(_ ciphertext: UnsafeRawBufferPointer) {}
    package func read(into buffer: UnsafeMutableRawBufferPointer) -> ReadResult { .failed("no TLS") }
    package func write(_ plaintext: UnsafeRawBufferPointer) -> Bool { false }
    package func takeOutput() -> [UInt8] { [] }
    package func shutdown() {}
    package var negotiatedProtocol: String? { nil }
}
#endif

/// Why an I/O step failed, in words for an error message.
package struct IOFailure: Error, Sendable, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}
