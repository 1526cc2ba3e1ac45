#if canImport(CSwitchboardOpenSSL)
// Internal: the C types stay out of the module interface, so importers need no module map.
internal import CSwitchboardOpenSSL
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// TLS over a TCP socket, through the system OpenSSL: verifies the chain (system store
/// or a caller's CA), checks the host name, sends SNI and offers ALPN `http/1.1`.
///
/// OpenSSL does not allow concurrent reads and writes on one connection, so the socket
/// is non-blocking: each call holds the lock only while OpenSSL runs and waits in `poll`
/// without it, letting the reader thread and writers take turns.
final class TLSStream: ByteStream, @unchecked Sendable {
    private let socket: TCPSocket
    private let ssl: OpaquePointer
    private let context: OpaquePointer
    private let lock = NSLock()
    private var isClosed = false
    private var readDeadline: ContinuousClock.Instant?

    func setReadDeadline(_ deadline: ContinuousClock.Instant?) throws(WebSocketError) {
        lock.withLock { readDeadline = deadline }
    }

    /// Milliseconds until the read deadline, or -1 for none.
    private func readTimeout() throws(WebSocketError) -> Int32 {
        guard let deadline = lock.withLock({ readDeadline }) else { return -1 }
        let remaining = deadline - ContinuousClock.now
        guard remaining > .zero else { throw .timeout("read") }
        return max(1, remaining.pollMilliseconds)
    }

    /// Connects TLS over `socket` as a client, finishing the handshake before `deadline`.
    init(clientOver socket: TCPSocket, host: String, options: TLSOptions, deadline: ContinuousClock.Instant) throws(WebSocketError) {
        guard let context = sb_client_context() else { throw .io("cannot create a TLS context") }
        if let pem = options.trustedCertificatesPEM {
            let added = pem.withCString { sb_trust_pem(context, $0, Int32(strlen($0))) }
            guard added > 0 else {
                SSL_CTX_free(context)
                throw .io("no certificates in the trusted PEM")
            }
        } else {
            sb_trust_system_store(context)
        }
        guard let ssl = SSL_new(context) else {
            SSL_CTX_free(context)
            throw .io("cannot create a TLS session")
        }
        self.socket = socket
        self.ssl = ssl
        self.context = context
        let name = options.serverName ?? host
        // Only what inet_pton takes is an address: "127.1" also resolves to loopback, but
        // as a name it must match the certificate, or nothing would be checked at all.
        let literal = name.hasPrefix("[") && name.hasSuffix("]") ? String(name.dropFirst().dropLast()) : name
        let isAddress = TCPSocket.isAddressLiteral(literal)
        SSL_set_fd(ssl, socket.descriptor)
        guard sb_set_server_name(ssl, isAddress ? literal : name, isAddress ? 1 : 0) == 1 else {
            throw .io("cannot check the certificate against the name \"\(name)\"")
        }
        sb_offer_http11(ssl)
        socket.setNonBlocking()
        try handshake(deadline: deadline) { SSL_connect($0) }
    }

    /// Accepts TLS over `socket` as a server.
    init(serverOver socket: TCPSocket, context: TLSServerContext, deadline: ContinuousClock.Instant) throws(WebSocketError) {
        guard let ssl = SSL_new(context.context) else { throw .io("cannot create a TLS session") }
        SSL_CTX_up_ref(context.context)
        self.socket = socket
        self.ssl = ssl
        self.context = context.context
        SSL_set_fd(ssl, socket.descriptor)
        socket.setNonBlocking()
        try handshake(deadline: deadline) { SSL_accept($0) }
    }

    deinit {
        SSL_free(ssl)
        SSL_CTX_free(context)
    }

    /// The SNI name a client sent (server side).
    var requestedServerName: String? {
        lock.withLock { sb_requested_server_name(ssl).map { String(cString: $0) } }
    }

    private func handshake(deadline: ContinuousClock.Instant, _ step: (OpaquePointer) -> Int32) throws(WebSocketError) {
        while true {
            let result = step(ssl)
            if result == 1 { return }
            let error = SSL_get_error(ssl, result)
            switch error {
            case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
                let remaining = deadline - ContinuousClock.now
                guard remaining > .zero else { throw .timeout("TLS handshake") }
                _ = wait(forWriting: error == SSL_ERROR_WANT_WRITE, milliseconds: Int32(clamping: remaining.components.seconds * 1000 + 1))
            default:
                if let reason = sb_verify_error(ssl) { throw .io("TLS certificate rejected: \(String(cString: reason))") }
                let detail = lastError()
                // What OpenSSL says when the answer is not TLS at all: plain HTTP, most likely.
                if detail.contains("wrong version number") || detail.contains("packet length too long") || detail.contains("http request") {
                    throw .io("TLS handshake failed: the server answered without TLS (is it ws:// rather than wss://?) (\(detail))")
                }
                throw .io("TLS handshake failed: \(detail.isEmpty ? "the server closed the connection" : detail)")
            }
        }
    }

    private func lastError() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        sb_last_error(&buffer, buffer.count)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Polls the socket; returns false when it closed.
    private func wait(forWriting: Bool, milliseconds: Int32 = -1) -> Bool {
        socket.handle.withDescriptor { number in
            var descriptor = pollfd(fd: number, events: Int16(forWriting ? POLLOUT : POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, milliseconds)
            return ready >= 0 && descriptor.revents & Int16(POLLNVAL) == 0
        } ?? false
    }

    /// Runs an OpenSSL call on the session under the lock, while the descriptor it uses is
    /// certain to be this socket's; `nil` once either is closed.
    private func withSession<T>(_ body: () -> T) -> T? {
        lock.withLock {
            if isClosed { return nil }
            return socket.handle.withDescriptor { _ in body() }
        }
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws(WebSocketError) -> Int {
        while true {
            let (count, error, closed): (Int32, Int32, Bool) = withSession {
                let count = SSL_read(ssl, buffer.baseAddress, Int32(clamping: buffer.count))
                return (count, count > 0 ? 0 : SSL_get_error(ssl, count), false)
            } ?? (0, SSL_ERROR_ZERO_RETURN, true)
            if count > 0 { return Int(count) }
            if closed { return 0 }
            switch error {
            case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
                guard wait(forWriting: error == SSL_ERROR_WANT_WRITE, milliseconds: try readTimeout()) else { return 0 }
            case SSL_ERROR_ZERO_RETURN:
                return 0
            default:
                if lock.withLock({ isClosed }) { return 0 }
                if error == SSL_ERROR_SYSCALL { return 0 } // the peer closed without close_notify
                throw .io("TLS read failed: \(lastError())")
            }
        }
    }

    func write(_ bytes: [UInt8]) throws(WebSocketError) {
        var offset = 0
        while offset < bytes.count {
            let (written, error): (Int32, Int32) = withSession {
                let written = bytes.withUnsafeBytes { SSL_write(ssl, $0.baseAddress! + offset, Int32(clamping: bytes.count - offset)) }
                return (written, written > 0 ? 0 : SSL_get_error(ssl, written))
            } ?? (-1, SSL_ERROR_ZERO_RETURN)
            if written > 0 {
                offset += Int(written)
                continue
            }
            switch error {
            case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
                guard wait(forWriting: error == SSL_ERROR_WANT_WRITE) else { throw .io("TLS connection closed") }
            default:
                throw .io("TLS write failed: \(error == SSL_ERROR_ZERO_RETURN ? "closed" : lastError())")
            }
        }
    }

    func close() {
        let first: Bool = lock.withLock {
            defer { isClosed = true }
            if !isClosed { _ = socket.handle.withDescriptor { _ in SSL_shutdown(ssl) } }
            return !isClosed
        }
        if first { socket.close() }
    }
}

/// A server's certificate and key, loaded once and shared by its connections.
public final class TLSServerContext: @unchecked Sendable {
    let context: OpaquePointer

    /// Loads a PEM certificate chain and private key.
    public init(certificateChainPath: String, privateKeyPath: String) throws(WebSocketError) {
        guard let context = sb_server_context(certificateChainPath, privateKeyPath) else {
            throw .io("cannot load the TLS certificate or key")
        }
        self.context = context
    }

    deinit { SSL_CTX_free(context) }
}
#endif
