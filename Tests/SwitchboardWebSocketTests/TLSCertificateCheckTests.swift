import Foundation
import PeerSupport
import SwitchboardIO
import Testing

/// How a client checks a server's name, and what a server says when its certificate or key
/// cannot be loaded (from the TLS review).
@Suite(.timeLimit(.minutes(2)))
struct TLSCertificateCheckTests {
    #if os(Linux)
    static func session(_ certificate: String, _ key: String) async throws -> TLSSession {
        let context = try TLSServerContext(certificateChainPath: await TestCertificates.file(certificate),
                                           privateKeyPath: await TestCertificates.file(key))
        return try #require(context.makeSession())
    }

    /// Names come only from the certificate's DNS names, never its subject's common name, and
    /// a wildcard only as a whole left-most label (RFC 9525, as browsers and Python's `ssl`):
    /// OpenSSL's defaults took both.
    @Test func onlyWholeLabelDNSNamesMatch() async throws {
        let commonNameOnly = try await ServerALPNTests.handshake(try await Self.session("cnonly.pem", "cnonly.key"), serverName: "localhost")
        #expect(throws: ServerALPNTests.HandshakeFailure.self) { try commonNameOnly.get() }
        let partialWildcard = try await ServerALPNTests.handshake(try await Self.session("partial.pem", "partial.key"), serverName: "www.switchboard.test")
        #expect(throws: ServerALPNTests.HandshakeFailure.self) { try partialWildcard.get() }
        // The same CA's certificate with the name as a DNS name passes.
        #expect(try await ServerALPNTests.handshake(try await Self.session("good.pem", "good.key"), serverName: "localhost").get() == "http/1.1")
    }

    /// The reason is OpenSSL's, not one text for every failure; an encrypted key fails at once
    /// (OpenSSL's default would prompt on the terminal for its passphrase).
    @Test func aCertificateOrKeyThatCannotBeLoadedSaysWhy() async throws {
        func failure(_ certificate: String, _ key: String) async -> String {
            do {
                _ = try TLSServerContext(certificateChainPath: certificate, privateKeyPath: key)
                return "loaded"
            } catch {
                return "\(error)"
            }
        }
        let good = await TestCertificates.file("good.pem")
        #expect(await failure(good, await TestCertificates.file("other.key")).contains("mismatch"))
        #expect(await failure(good + ".missing", await TestCertificates.file("good.key")).contains("No such file"))
        let encrypted = await failure(good, await TestCertificates.file("encrypted.key"))
        #expect(encrypted != "loaded" && encrypted.contains("encrypted.key"), "\(encrypted)")
    }
    #endif
}
