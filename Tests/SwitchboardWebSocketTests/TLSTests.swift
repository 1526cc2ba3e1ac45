import Foundation
import PeerSupport
@testable import SwitchboardIO
import SwitchboardWebSocket
import Testing

/// `wss://` against a Python TLS server started by the test, with a CA and certificates
/// that `openssl` makes for each run (Tests/Peers/make_test_certs.sh).
@Suite(.serialized) struct TLSTests {
    /// The path of a generated file: `good.pem`, `expired.key`...
    static func certificateFile(_ name: String) async -> String {
        await TestCertificates.file(name)
    }

    /// Starts a TLS echo server with `name`.pem/.key; returns it and its port.
    func server(_ name: String, tls12Only: Bool = false) async throws -> (PythonPeer, Int) {
        let peer = try PythonPeer(script: "wss_echo_server.py", arguments: [
            await Self.certificateFile("\(name).pem"), await Self.certificateFile("\(name).key"),
        ] + (tls12Only ? ["tls12"] : []))
        let port = try #require(await peer.firstLineAsync().flatMap(Int.init), "the TLS server did not start")
        return (peer, port)
    }

    /// Connects over `wss://`, trusting the test CA unless `trustingTestCA` is false.
    func connect(_ port: Int, host: String = "localhost", trustingTestCA: Bool = true) async throws(WebSocketError) -> WebSocketConnection {
        let trust = trustingTestCA ? (try? String(contentsOfFile: await Self.certificateFile("ca.pem"), encoding: .utf8)) ?? "" : nil
        return try await WebSocketClient.connect(
            to: URL(string: "wss://\(host):\(port)/")!,
            options: .init(connectTimeout: .seconds(10), tls: TLSOptions(trustedCertificatesPEM: trust)))
    }

    func rejection(_ body: () async throws(WebSocketError) -> WebSocketConnection) async -> String {
        do {
            let connection = try await body()
            connection.abort()
            return "connected"
        } catch {
            return error.description
        }
    }

    @Test func aTrustedCertificateConnectsAndSendsSNI() async throws {
        let (peer, port) = try await server("good")
        let connection = try await connect(port)
        var messages = connection.messages.makeAsyncIterator()
        try await connection.send(text: "über TLS")
        #expect(await messages.next() == .text("über TLS"))
        let big = Data((0..<200_000).map { UInt8($0 % 253) })
        try await connection.send(binary: big)
        #expect(await messages.next() == .binary(big))
        #expect(await connection.close().wasClean)
        let output = await peer.stopAsync()
        #expect(output.contains("SNI localhost"), "\(output)")
        #expect(output.contains("ALPN http/1.1"), "\(output)")
    }

    #if canImport(CSwitchboardOpenSSL)
    /// One connection that echoes a message and closes cleanly.
    func echoOnce(port: Int, tls: TLSOptions) async throws {
        let connection = try await WebSocketClient.connect(to: URL(string: "wss://localhost:\(port)/")!,
                                                           options: .init(connectTimeout: .seconds(10), tls: tls))
        var messages = connection.messages.makeAsyncIterator()
        try await connection.send(text: "hi")
        #expect(await messages.next() == .text("hi"))
        #expect(await connection.close().wasClean)
    }

    // Linux only: on Apple platforms Network.framework decides about resumption.
    /// A reconnect resumes the TLS session the connection before left, as the Python server
    /// sees it; with resumption off, or under another trust, the handshake is a full one.
    @Test func aReconnectResumesTheTLSSession() async throws {
        let (peer, port) = try await server("good")
        let ca = try String(contentsOfFile: await Self.certificateFile("ca.pem"), encoding: .utf8)
        func roundTrip(_ tls: TLSOptions) async throws { try await echoOnce(port: port, tls: tls) }
        let key = TLSSessionCache.key(trustedCertificatesPEM: ca, serverName: "localhost", host: "localhost", port: port,
                                      applicationProtocols: ["http/1.1"], scope: nil)
        try await roundTrip(TLSOptions(trustedCertificatesPEM: ca, resumesSessions: false)) // leaves nothing
        #expect(TLSSessionCache.shared.peek(key) == nil)
        try await roundTrip(TLSOptions(trustedCertificatesPEM: ca))                          // full, leaves a session
        let first = TLSSessionCache.shared.peek(key)
        #expect(first != nil)
        try await roundTrip(TLSOptions(trustedCertificatesPEM: ca + "\n"))                   // another trust: full
        try await roundTrip(TLSOptions(trustedCertificatesPEM: ca, sessionScope: "account")) // another scope: full
        try await roundTrip(TLSOptions(trustedCertificatesPEM: ca))                          // resumes
        // It leaves the new ticket it was given, not the one it used (RFC 8446 C.4).
        let second = TLSSessionCache.shared.peek(key)
        #expect(second != nil && second != first)
        try await roundTrip(TLSOptions(trustedCertificatesPEM: ca))                          // resumes what that one left
        try await roundTrip(TLSOptions(trustedCertificatesPEM: ca, resumesSessions: false)) // full
        TLSOptions.forgetResumableSessions()
        #expect(TLSSessionCache.shared.peek(key) == nil)
        try await roundTrip(TLSOptions(trustedCertificatesPEM: ca))                          // forgotten: full
        let output = await peer.stopAsync()
        let resumed = output.split(separator: "\n").filter { $0.hasPrefix("RESUMED") }.map { $0.hasSuffix("True") }
        #expect(resumed == [false, false, false, false, true, true, false, false], "\(output)")
    }

    /// A TLS 1.2 session is resumed once, as a TLS 1.3 ticket is: its session ID (or ticket)
    /// goes unencrypted in the ClientHello, so every connection that offered it could be tied
    /// together by anyone on the network. A resumed TLS 1.2 connection usually gets no new
    /// session to leave (a server that renews its ticket gives one), so the next is full.
    @Test func aTLS12SessionIsResumedOnce() async throws {
        let (peer, port) = try await server("good", tls12Only: true)
        let ca = try String(contentsOfFile: await Self.certificateFile("ca.pem"), encoding: .utf8)
        let options = TLSOptions(trustedCertificatesPEM: ca, sessionScope: "tls12-test")
        for _ in 0..<3 { try await echoOnce(port: port, tls: options) }
        let output = await peer.stopAsync()
        let lines = output.split(separator: "\n")
        #expect(lines.filter { $0.hasPrefix("VERSION") } == ["VERSION TLSv1.2", "VERSION TLSv1.2", "VERSION TLSv1.2"], "\(output)")
        let resumed = lines.filter { $0.hasPrefix("RESUMED") }.map { $0.hasSuffix("True") }
        #expect(resumed == [false, true, false], "\(output)")
    }
    #endif

    @Test func aSelfSignedCertificateIsRejected() async throws {
        let (peer, port) = try await server("self")
        let error = await rejection { () throws(WebSocketError) in try await connect(port) }
        #expect(error.contains("certificate rejected") && (error.contains("self-signed") || error.contains("self signed")), "\(error)")
        _ = await peer.stopAsync()
    }

    @Test func anExpiredCertificateIsRejected() async throws {
        let (peer, port) = try await server("expired")
        let error = await rejection { () throws(WebSocketError) in try await connect(port) }
        #expect(error.contains("certificate has expired"), "\(error)")
        _ = await peer.stopAsync()
    }

    @Test func aHostnameMismatchIsRejected() async throws {
        let (peer, port) = try await server("other")
        let error = await rejection { () throws(WebSocketError) in try await connect(port) }
        #expect(error.contains("certificate rejected") && error.lowercased().contains("hostname mismatch"), "\(error)")
        _ = await peer.stopAsync()
    }

    @Test func theSystemStoreDoesNotTrustTheTestCA() async throws {
        let (peer, port) = try await server("good")
        let error = await rejection { () throws(WebSocketError) in try await connect(port, trustingTestCA: false) }
        #expect(error.contains("certificate rejected"), "\(error)")
        _ = await peer.stopAsync()
    }

    @Test func ipAddressesAreCheckedAgainstTheCertificate() async throws {
        let (peer, port) = try await server("good")
        let connection = try await connect(port, host: "127.0.0.1")
        #expect(await connection.close().wasClean)
        _ = await peer.stopAsync()

        // other.pem names only other.example: no IP entry may stand in for 127.0.0.1.
        let (otherPeer, otherPort) = try await server("other")
        let error = await rejection { () throws(WebSocketError) in try await connect(otherPort, host: "127.0.0.1") }
        #expect(error.contains("certificate rejected") && error.lowercased().contains("mismatch"), "\(error)")
        _ = await otherPeer.stopAsync()
    }

    /// "127.1" resolves to loopback but is no address literal, so it must match as a name.
    @Test func aNumericLookingHostIsCheckedAsAName() async throws {
        let (peer, port) = try await server("other")
        let error = await rejection { () throws(WebSocketError) in try await connect(port, host: "127.1") }
        #expect(error.contains("certificate rejected") && error.lowercased().contains("mismatch"), "\(error)")
        _ = await peer.stopAsync()
    }

    #if os(Linux)
    // Server-side TLS comes from the OpenSSL shim, which only Linux builds have.
    @Test func ourServerSpeaksTLSToo() async throws {
        let context = try TLSServerContext(
            certificateChainPath: await Self.certificateFile("good.pem"), privateKeyPath: await Self.certificateFile("good.key"))
        let server = try WebSocketServer(tls: context) { connection in
            for await message in connection.messages { try? await connection.send(message) }
            await connection.close()
        }
        defer { server.stop() }
        let connection = try await connect(server.port)
        var messages = connection.messages.makeAsyncIterator()
        try await connection.send(text: "round trip")
        #expect(await messages.next() == .text("round trip"))
        #expect(await connection.close().wasClean)
    }

    /// Past its limit a TLS server answers 503 over TLS, as a plain one does in plaintext: it
    /// answered in plaintext, which the client read as a broken TLS record ~2 s later.
    @Test func aTLSServerPastItsLimitAnswers503OverTLS() async throws {
        let context = try TLSServerContext(
            certificateChainPath: await Self.certificateFile("good.pem"), privateKeyPath: await Self.certificateFile("good.key"))
        let server = try WebSocketServer(limits: .init(maximumConnections: 1), tls: context) { connection in
            for await message in connection.messages { try? await connection.send(message) }
            await connection.close()
        }
        defer { server.stop() }
        let held = try await connect(server.port)
        do {
            let refused = try await connect(server.port)
            refused.abort()
            Issue.record("a second connection must be refused")
        } catch let .upgradeRejected(status, headers, _) {
            #expect(status == 503)
            #expect(headers.value(named: "Retry-After") == "1")
        }
        #expect(held.isOpen, "the refusal leaves the held connection alone")
        await held.close()
    }
    #endif
}
