import Foundation
internal import SwitchboardThreads
#if canImport(CSwitchboardOpenSSL)
internal import CSwitchboardOpenSSL
#endif
#if canImport(Network)
import Network
#endif

/// Opens a client byte channel on an event loop: DNS and TCP, then TLS when options are
/// given, offering `applicationProtocols` through ALPN (WebSocket offers `http/1.1`, gRPC
/// `h2`). Shared by every client transport, so each gets the same deadlines and errors.
package enum ChannelOpener {
    /// What a server may send while TLS finishes, before anyone reads: an HTTP/2 server's
    /// SETTINGS, say. More is dropped (a WebSocket server should send nothing at all).
    package static let earlyByteLimit = 16 * 1024

    /// An open channel, not reading, and what it read while TLS finished (a server that
    /// speaks first, as HTTP/2 servers do, may already have sent something).
    package struct Opened: Sendable {
        package let channel: any ByteChannel
        /// On the channel's loop, before activating another delegate: the bytes read so
        /// far and why the channel ended, if it did.
        package let takeEarlyBytes: @Sendable () -> (bytes: [UInt8], ended: String?)
    }

    /// Opens the channel before `deadline`; the socket is closed if any step fails.
    /// Cancelling the calling task ends the TCP connect or the TLS handshake at once with
    /// `io("connect cancelled")` (not through Network.framework, which is not interrupted).
    package static func open(host: String, port: Int, tls: TLSOptions?, applicationProtocols: [String], loop: EventLoop,
                             deadline: ContinuousClock.Instant) async throws(NetworkError) -> Opened {
        #if canImport(Network) && !canImport(CSwitchboardOpenSSL)
        if let tls {
            // Network.framework resolves, connects and secures in one connection, and does its
            // own I/O: its bytes are pumped onto the loop.
            let opened: Result<NetworkTLSStream, NetworkError> = await withCheckedContinuation { continuation in
                do throws(SystemThread.StartError) {
                    try SystemThread.start(stackSize: 1 << 20) {
                        continuation.resume(returning: Result { () throws(NetworkError) in
                            try NetworkTLSStream(host: host, port: port, options: tls, applicationProtocols: applicationProtocols, deadline: deadline)
                        })
                    }
                } catch {
                    continuation.resume(returning: .failure(.io("connecting: \(error)")))
                }
            }
            return Opened(channel: PumpedChannel(stream: try opened.get(), loop: loop), takeEarlyBytes: { ([], nil) })
        }
        #endif
        let descriptor = try await SocketConnector.connect(host: host, port: port, deadline: deadline, loop: loop)
        guard let tls else { return Opened(channel: SocketChannel(descriptor: descriptor, loop: loop), takeEarlyBytes: { ([], nil) }) }
        #if canImport(CSwitchboardOpenSSL)
        let engine: TLSEngine
        do throws(IOFailure) {
            let serverName = tls.serverName ?? host
            let key = tls.resumesSessions
                ? TLSSessionCache.key(trustedCertificatesPEM: tls.trustedCertificatesPEM, serverName: serverName, host: host, port: port,
                                      applicationProtocols: applicationProtocols, scope: tls.sessionScope)
                : nil
            engine = try TLSEngine(clientTrusting: tls.trustedCertificatesPEM, serverName: serverName,
                                   applicationProtocols: applicationProtocols, resumptionKey: key)
        } catch {
            _ = SocketDescriptor.systemClose(descriptor)
            throw .io(error.description)
        }
        let channel = SocketChannel(descriptor: descriptor, loop: loop, tls: TLSSession(engine))
        let once = FirstOutcome<NetworkError>()
        let timer = loop.schedule(at: deadline) { once.offer(.timeout("TLS handshake")) }
        let parked = ParkedReader(limit: earlyByteLimit)
        parked.hold(channel) { reason in
            timer.cancel()
            once.offer(reason.map { .io($0) })
        }
        // Cancelling the task ends the handshake as the deadline does, as it ends the TCP connect.
        let failure = await withTaskCancellationHandler {
            await once.value
        } onCancel: {
            once.offer(.io("connect cancelled"))
        }
        if let failure {
            timer.cancel()
            channel.close(reason: nil)
            throw failure
        }
        channel.setReading(false)
        return Opened(channel: channel, takeEarlyBytes: { (parked.take(), parked.endReason) })
        #else
        _ = SocketDescriptor.systemClose(descriptor)
        throw .io("TLS needs the system OpenSSL (Linux) or Network.framework (Apple platforms)")
        #endif
    }
}
