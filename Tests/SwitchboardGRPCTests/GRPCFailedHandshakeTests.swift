import Foundation
import PeerSupport
@testable import SwitchboardGRPC
import SwitchboardIO
import SwitchboardRuntime
import Testing

/// A client whose TLS handshake fails (it speaks plain HTTP to a TLS port) frees its
/// connection slot at once: the server's connection is told the stream ended, instead of
/// holding the slot (and the address's share) until its 10 s SETTINGS timeout (from the I/O
/// review).
@Suite(.timeLimit(.minutes(1)))
struct GRPCFailedHandshakeTests {
    @Test func aFailedTLSHandshakeFreesTheConnectionAtOnce() async throws {
        var options = GRPCServerOptions()
        options.tls = try TLSServerContext(certificateChainPath: await TestCertificates.file("good.pem"),
                                           privateKeyPath: await TestCertificates.file("good.key"))
        let server = try GRPCServer(router: RPCRouter(routes: []), options: options)
        let socket = try TCPSocket.connect(host: "127.0.0.1", port: server.port, timeout: .seconds(5))
        defer { socket.close() }
        try socket.write(Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        #expect(await eventually(within: .seconds(5)) { server.connectionCount == 1 } || server.connectionCount == 0)
        let started = ContinuousClock.now
        #expect(await eventually(within: .seconds(9.5)) { server.connectionCount == 0 }, "\(server.connectionCount) still held")
        #expect(ContinuousClock.now - started < .seconds(9), "before the 10 s SETTINGS timeout")
        await server.shutdown(timeout: .seconds(1))
    }
}
