import Foundation
import PeerSupport
import SignalChat
import SwitchboardGRPC
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
