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
    /// The protocol a client offering h2 then http/1.1 agrees on with `serverSession`.
    func negotiated(with serverSession: TLSSession) async throws -> String? {
        let (first, second) = try #require(TestSockets.pair())
        let pair = [first, second]
        let trust = try String(contentsOfFile: await TestCertificates.file("ca.pem"), encoding: .utf8)
        let clientSession = TLSSession(try TLSEngine(clientTrusting: trust, serverName: "localhost", applicationProtocols: ["h2", "http/1.1"]))
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
        try #require(outcome.value! == nil, "handshake failed: \(String(describing: outcome.value))")
        return client.negotiatedProtocol
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
    #endif
}
