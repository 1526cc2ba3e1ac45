#if canImport(Network) && !canImport(CSwitchboardOpenSSL)
import Foundation
import Network
import Security

/// TLS on Apple platforms, through Network.framework: DNS, TCP (no delay) and TLS in one
/// `NWConnection`, with SNI, ALPN (`http/1.1`, or `h2` for gRPC; what was agreed is
/// ``negotiatedProtocol``), and the chain and host name checked against
/// the system store or a caller's CA.
///
/// The trust decision is ours (a verify block), so a rejection names its reason (expired,
/// self-signed, host name mismatch) as the OpenSSL stream on Linux does.
///
/// `ByteStream` is blocking: reads wait on a condition that the connection's queue
/// signals. A read that times out leaves its receive outstanding, and what it brings is
/// kept for the next read, so a timeout never drops bytes.
final class NetworkTLSStream: ByteStream, @unchecked Sendable {
    private let connection: NWConnection
    private let queue: DispatchQueue
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var received: [UInt8] = []
    private var isReceiving = false
    private var hasEnded = false
    private var failure: NetworkError?
    private var readDeadline: ContinuousClock.Instant?
    private var state: NWConnection.State = .setup
    /// Why the verify block refused the server's certificate, if it did.
    private let rejection: LockedState<String?>
    /// What ALPN settled on, read once the handshake is done.
    private(set) var negotiatedProtocol: String?

    /// Connects to `host`:`port` and finishes the TLS handshake before `deadline`.
    init(host: String, port: Int, options: TLSOptions, applicationProtocols: [String] = ["http/1.1"],
         deadline: ContinuousClock.Instant) throws(NetworkError) {
        guard (1...65535).contains(port), let nwPort = NWEndpoint.Port(rawValue: UInt16(port)) else { throw .io("invalid port \(port)") }
        let serverName = options.serverName ?? host
        var anchors: [Data]?
        if let pem = options.trustedCertificatesPEM {
            anchors = PEMCertificates.der(in: pem)
            guard anchors?.isEmpty == false else { throw .io("no certificates in the trusted PEM") }
        }
        // Everything is configured before the connection exists, which copies its parameters.
        let tls = NWProtocolTLS.Options()
        let security = tls.securityProtocolOptions
        sec_protocol_options_set_tls_server_name(security, serverName)
        // TLS 1.2 at least, as the OpenSSL path requires: the system's own floor differs by release.
        sec_protocol_options_set_min_tls_protocol_version(security, .TLSv12)
        for name in applicationProtocols { sec_protocol_options_add_tls_application_protocol(security, name) }
        let queue = DispatchQueue(label: "Switchboard.NetworkTLSStream")
        let rejection = LockedState<String?>(nil)
        self.queue = queue
        self.rejection = rejection
        sec_protocol_options_set_verify_block(security, { [anchors] _, trust, complete in
            let reason = Self.evaluate(sec_trust_copy_ref(trust).takeRetainedValue(), serverName: serverName, anchors: anchors)
            if let reason { rejection.set(reason) }
            complete(reason == nil)
        }, queue)
        let tcp = NWProtocolTCP.Options()
        tcp.noDelay = true
        connection = NWConnection(host: NWEndpoint.Host(host), port: nwPort, using: NWParameters(tls: tls, tcp: tcp))
        // One handler for the connection's whole life, so no change of state falls between two.
        connection.stateUpdateHandler = { [weak self] state in
            self?.stateChanged(to: state)
        }
        connection.start(queue: queue)
        do throws(NetworkError) {
            try waitUntilReady(deadline: deadline)
        } catch {
            connection.cancel()
            throw error
        }
        if let metadata = connection.metadata(definition: NWProtocolTLS.definition) as? NWProtocolTLS.Metadata,
           let agreed = sec_protocol_metadata_get_negotiated_protocol(metadata.securityProtocolMetadata) {
            negotiatedProtocol = String(cString: agreed)
        }
    }

    deinit { connection.cancel() }

    /// Records the state for the connect; after the connect, a failure fails reads (rather
    /// than ending them cleanly) and a cancellation ends them.
    private func stateChanged(to newState: NWConnection.State) {
        condition.withLock {
            var wasReady = false
            if case .ready = state { wasReady = true }
            state = newState
            switch newState {
            case let .failed(error) where wasReady:
                failure = failure ?? .io("TLS connection failed: \(error)")
                hasEnded = true
            case .cancelled:
                hasEnded = true
            default:
                break
            }
            condition.broadcast()
        }
    }

    /// Waits for `.ready`; a failure (or a wait for a better network) ends the connect.
    private func waitUntilReady(deadline: ContinuousClock.Instant) throws(NetworkError) {
        condition.lock()
        defer { condition.unlock() }
        while true {
            switch state {
            case .ready:
                return
            case let .failed(error), let .waiting(error):
                if let reason = rejection.value { throw .io("TLS certificate rejected: \(reason)") }
                throw .io("TLS connect failed: \(error)")
            case .cancelled:
                throw .io("TLS connect cancelled")
            default:
                guard condition.wait(until: Self.date(for: deadline)) || ContinuousClock.now < deadline else {
                    throw .timeout("TLS handshake")
                }
            }
        }
    }

    func setReadDeadline(_ deadline: ContinuousClock.Instant?) throws(NetworkError) {
        condition.withLock { readDeadline = deadline }
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws(NetworkError) -> Int {
        condition.lock()
        defer { condition.unlock() }
        while received.isEmpty {
            if let failure { throw failure }
            if hasEnded { return 0 }
            if !isReceiving { startReceive(maximum: max(buffer.count, 64 * 1024)) }
            if let deadline = readDeadline {
                guard ContinuousClock.now < deadline else { throw .timeout("read") }
                _ = condition.wait(until: Self.date(for: deadline))
            } else {
                condition.wait()
            }
        }
        let count = min(buffer.count, received.count)
        received.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
        received.removeFirst(count)
        return count
    }

    /// Asks for the next bytes; called with the condition locked.
    private func startReceive(maximum: Int) {
        isReceiving = true
        connection.receive(minimumIncompleteLength: 1, maximumLength: maximum) { [weak self] data, _, isComplete, error in
            guard let self else { return }
            condition.withLock {
                isReceiving = false
                if let data { received += data }
                if let error {
                    // A cancelled connection (our own close) ends quietly, like a closed socket.
                    if case .posix(.ECANCELED) = error { hasEnded = true } else { failure = .io("TLS read failed: \(error)") }
                } else if isComplete {
                    hasEnded = true
                }
                condition.broadcast()
            }
        }
    }

    func write(_ bytes: [UInt8]) throws(NetworkError) {
        let done = DispatchSemaphore(value: 0)
        let outcome = LockedState(NetworkError?.none)
        connection.send(content: Data(bytes), completion: .contentProcessed { error in
            if let error { outcome.set(.io("TLS write failed: \(error)")) }
            done.signal()
        })
        done.wait()
        if let error = outcome.value { throw error }
    }

    func close() {
        connection.cancel()
        end()
    }

    /// Wakes every reader: the connection is over.
    private func end() {
        condition.withLock {
            hasEnded = true
            condition.broadcast()
        }
    }

    // MARK: Trust

    /// Why `trust` fails for `serverName`, or `nil` when it holds. With `anchors`, only those
    /// certificates are trusted; otherwise the system store.
    private static func evaluate(_ trust: SecTrust, serverName: String, anchors: [Data]?) -> String? {
        _ = SecTrustSetPolicies(trust, SecPolicyCreateSSL(true, serverName as CFString))
        if let anchors {
            let certificates = anchors.compactMap { SecCertificateCreateWithData(nil, $0 as CFData) }
            _ = SecTrustSetAnchorCertificates(trust, certificates as CFArray)
            _ = SecTrustSetAnchorCertificatesOnly(trust, true)
        }
        var error: CFError?
        if SecTrustEvaluateWithError(trust, &error) { return nil }
        let description = error.map { CFErrorCopyDescription($0) as String } ?? "not trusted"
        switch error.map({ OSStatus(truncatingIfNeeded: CFErrorGetCode($0)) }) ?? errSecNotTrusted {
        case errSecCertificateExpired, errSecCertificateNotValidYet:
            return "certificate has expired or is not yet valid (\(description))"
        case errSecHostNameMismatch:
            return "Hostname mismatch (\(description))"
        default:
            return isSelfSigned(trust) ? "self-signed certificate (\(description))" : description
        }
    }

    /// Whether the server sent a lone certificate that issued itself.
    private static func isSelfSigned(_ trust: SecTrust) -> Bool {
        guard let chain = SecTrustCopyCertificateChain(trust) as? [SecCertificate], chain.count == 1,
              let subject = SecCertificateCopyNormalizedSubjectSequence(chain[0]),
              let issuer = SecCertificateCopyNormalizedIssuerSequence(chain[0]) else { return false }
        return (subject as Data) == (issuer as Data)
    }

    private static func date(for instant: ContinuousClock.Instant) -> Date {
        let remaining = ContinuousClock.now.duration(to: instant)
        return Date().addingTimeInterval(Double(remaining.components.seconds) + Double(remaining.components.attoseconds) / 1e18)
    }
}
#endif
