import Foundation
import PeerSupport
import SignalChat
import SwitchboardGRPC
import SwitchboardIO
import SwitchboardRuntime
import Testing

/// A call waits for a connection no longer than its own deadline, whatever the connect
/// timeout: a server that never answers holds the connect attempt, not the call.
@Suite(.timeLimit(.minutes(2)))
struct GRPCConnectDeadlineTests {
    @Test func aCallLeavesAConnectAttemptAtItsDeadline() async throws {
        // A full accept queue: the kernel drops the SYN, so the TCP connect itself hangs.
        let listener = try FullListenQueue()
        defer { listener.close() }
        var options = GRPCClientOptions()
        options.connectTimeout = .seconds(30)
        let transport = GRPCClientTransport<Unauthenticated>(host: "127.0.0.1", port: listener.port, options: options)
        defer { transport.close() }
        let started = ContinuousClock.now
        let result = await UsernamesClient(transport: transport).lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([1])), options: CallOptions(timeout: .milliseconds(300)))
        let took = ContinuousClock.now - started
        #expect(result.transportError == .timeout, "\(result)")
        #expect(took < .seconds(15), "the call waited \(took), as long as the connect attempt")
    }

    /// The other way round, over TCP alone: a connect the kernel never completes (a full
    /// accept queue drops the SYN) ends at `connectTimeout`, well before the call's deadline.
    @Test func aTCPConnectThatNeverCompletesEndsAtTheConnectTimeout() async throws {
        let listener = try FullListenQueue()
        defer { listener.close() }
        var options = GRPCClientOptions()
        options.connectTimeout = .milliseconds(300)
        let transport = GRPCClientTransport<Unauthenticated>(host: "127.0.0.1", port: listener.port, options: options)
        defer { transport.close() }
        let started = ContinuousClock.now
        let result = await UsernamesClient(transport: transport).lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([1])),
                                                                                     options: CallOptions(timeout: .seconds(30)))
        let took = ContinuousClock.now - started
        #expect(result.transportError == .disconnected(reason: DisconnectReason(.connectionLost, "connecting to 127.0.0.1:\(listener.port): timed out: TCP connect")),
                "\(result)")
        #expect(took >= .milliseconds(250) && took < .seconds(3), "ended after \(took): the connect timeout is 300 ms, the call's deadline 30 s")
        #expect(transport.connectionsOpened == 0)
    }

    /// Likewise when TCP connects but TLS does not: a server that never answers the ClientHello
    /// holds the connect for `connectTimeout` (DNS, TCP and TLS together), not for the call's
    /// much longer deadline, and the call fails with the connect's typed error.
    @Test func aTLSHandshakeThatNeverFinishesEndsAtTheConnectTimeout() async throws {
        let listener = try TCPListener()
        defer { listener.close() }
        // When the client closed its socket, as seen by the mute acceptor.
        let clientClosed = Locked<ContinuousClock.Instant?>(nil)
        Thread.detachNewThread {
            guard let socket = listener.accept() else { return }
            defer { socket.close() }
            // Reads the ClientHello and answers nothing, until the client gives up (10 s at most).
            try? socket.setReadDeadline(ContinuousClock.now.advanced(by: .seconds(10)))
            reading: while true {
                do throws(NetworkError) {
                    if try socket.read(maximum: 4096).isEmpty {
                        clientClosed.withLock { $0 = ContinuousClock.now }
                        break reading
                    }
                } catch {
                    break reading
                }
            }
        }
        var options = GRPCClientOptions()
        options.tls = TLSOptions(serverName: "localhost")
        options.connectTimeout = .milliseconds(300)
        let transport = GRPCClientTransport<Unauthenticated>(host: "127.0.0.1", port: listener.port, options: options)
        defer { transport.close() }
        let started = ContinuousClock.now
        let result = await UsernamesClient(transport: transport).lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([1])),
                                                                                     options: CallOptions(timeout: .seconds(30)))
        let took = ContinuousClock.now - started
        #expect(result.transportError == .disconnected(reason: DisconnectReason(.connectionLost, "connecting to 127.0.0.1:\(listener.port): timed out: TLS handshake")),
                "\(result)")
        #expect(took >= .milliseconds(250), "ended after \(took), before the connect timeout")
        #expect(took < .seconds(3), "ended after \(took): the connect timeout is 300 ms, the call's deadline 30 s")
        // The connect failed: no connection was opened, and its socket is closed.
        #expect(transport.connectionsOpened == 0)
        #expect(await eventually(within: .seconds(3)) { clientClosed.current != nil }, "the abandoned handshake's socket is closed")
    }
}

/// Over TLS, HTTP/2 only where ALPN agreed on `h2` (RFC 9113 §3.2): a server that agrees on
/// nothing is refused before the preface goes out, with a typed failure.
@Suite(.timeLimit(.minutes(2)))
struct GRPCALPNTests {
    @Test func aTLSServerWithoutALPNIsNotSentHTTP2() async throws {
        let peer = try PythonPeer(script: "tls_no_alpn_server.py",
                                  arguments: [await TestCertificates.file("good.pem"), await TestCertificates.file("good.key")])
        let port = try #require(await peer.firstLineAsync().flatMap { Int($0) })
        var options = GRPCClientOptions()
        options.tls = TLSOptions(trustedCertificatesPEM: try String(contentsOfFile: await TestCertificates.file("ca.pem"), encoding: .utf8),
                                 serverName: "localhost")
        let transport = GRPCClientTransport<Unauthenticated>(host: "127.0.0.1", port: port, options: options)
        defer { transport.close() }
        let result = await UsernamesClient(transport: transport).lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([1])),
                                                                                    options: CallOptions(timeout: .seconds(20)))
        guard case let .disconnected(reason)? = result.transportError else {
            Issue.record("expected a disconnected failure, got \(result)")
            return
        }
        #expect(reason.detail.contains("no ALPN protocol agreed"), "\(reason)")
        let (_, output) = await peer.finishAsync(timeout: 30)
        #expect(output.contains("NO PREFACE"), "\(output)")
    }
}
