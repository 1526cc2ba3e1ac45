import Foundation
import PeerSupport
import SwitchboardIO
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Whether a server session may choose `h2` is the session's, not its context's: one
/// certificate context may serve a WebSocket server (http/1.1 only) and a gRPC server (h2) at
/// once, and the gRPC server must not make the WebSocket server agree to h2 (from the I/O review).
@Suite(.timeLimit(.minutes(2)))
struct ServerALPNTests {
    final class Quiet: ChannelDelegate, @unchecked Sendable {
        func channelRead(_ chunk: UnsafeRawBufferPointer) {}
        func channelEnded(reason: String?) {}
        func channelWriteFailed(_ reason: String) {}
    }

    /// How the client's handshake ended: `.some(nil)` once it succeeded.
    final class Outcome: @unchecked Sendable {
        private let lock = NSLock()
        private var ended: String??
        func set(_ failure: String?) { lock.withLock { ended = .some(failure) } }
        var value: String?? { lock.withLock { ended } }
    }

    #if os(Linux)
    /// A handshake over a socket pair between `serverSession` and a client trusting the test
    /// CA that asks for `serverName` and offers `protocols`: the protocol agreed on, or why
    /// the client's handshake failed.
    static func handshake(_ serverSession: TLSSession, serverName: String = "localhost",
                          offering protocols: [String] = ["h2", "http/1.1"]) async throws -> Result<String?, HandshakeFailure> {
        let (first, second) = try #require(TestSockets.pair())
        let pair = [first, second]
        let trust = try String(contentsOfFile: await TestCertificates.file("ca.pem"), encoding: .utf8)
        let clientSession = TLSSession(try TLSEngine(clientTrusting: trust, serverName: serverName, applicationProtocols: protocols))
        let server = SocketChannel(descriptor: pair[0], loop: EventLoopGroup.shared.next(), tls: serverSession)
        let client = SocketChannel(descriptor: pair[1], loop: EventLoopGroup.shared.next(), tls: clientSession)
        defer {
            client.close()
            server.close()
        }
        let outcome = Outcome()
        server.activate(delegate: Quiet())
        client.activate(delegate: Quiet()) { failure in outcome.set(failure) }
        try #require(await eventually { outcome.value != nil }, "no handshake")
        if let failure = outcome.value! { return .failure(HandshakeFailure(reason: failure)) }
        return .success(client.negotiatedProtocol)
    }

    struct HandshakeFailure: Error, Equatable {
        let reason: String
    }

    /// The protocol a client offering h2 then http/1.1 agrees on with `serverSession`.
    func negotiated(with serverSession: TLSSession) async throws -> String? {
        try await Self.handshake(serverSession).get()
    }

    @Test func oneContextChoosesPerSession() async throws {
        let context = try TLSServerContext(certificateChainPath: await TestCertificates.file("good.pem"),
                                           privateKeyPath: await TestCertificates.file("good.key"))
        let http2 = try #require(context.makeSession(allowHTTP2: true))
        let webSocket = try #require(context.makeSession())
        #expect(try await negotiated(with: http2) == "h2")
        #expect(try await negotiated(with: webSocket) == "http/1.1", "a session made after an h2 one still answers http/1.1 only")
        let later = try #require(context.makeSession())
        #expect(try await negotiated(with: later) == "http/1.1")
    }

    /// A client that offers only what a server does not serve is refused with
    /// no_application_protocol (RFC 7301 §3.2), not answered in another protocol: a gRPC
    /// session agreed to http/1.1 and then spoke HTTP/2 (from the TLS review). A client
    /// that offers no ALPN at all is served.
    @Test func aClientOfferingNothingServedIsRefused() async throws {
        let context = try TLSServerContext(certificateChainPath: await TestCertificates.file("good.pem"),
                                           privateKeyPath: await TestCertificates.file("good.key"))
        let grpcRefused = try await Self.handshake(try #require(context.makeSession(allowHTTP2: true)), offering: ["http/1.1"])
        #expect(throws: HandshakeFailure.self) { try grpcRefused.get() }
        let webSocketRefused = try await Self.handshake(try #require(context.makeSession()), offering: ["h2"])
        #expect(throws: HandshakeFailure.self) { try webSocketRefused.get() }
        if case let .failure(failure) = webSocketRefused { #expect(failure.reason.contains("no application protocol"), "\(failure.reason)") }
        #expect(try await Self.handshake(try #require(context.makeSession(allowHTTP2: true)), offering: []).get() == nil)
        #expect(try await Self.handshake(try #require(context.makeSession()), offering: []).get() == nil)
    }
    #endif
}
