import Foundation
@testable import SwitchboardIO
import Testing

/// The PEM reader that feeds Network.framework's trust anchors, checked on every platform
/// against openssl's own DER output for the test CA and server certificates.
struct PEMCertificatesTests {
    /// `openssl x509 -outform DER` of the certificate in `path`.
    func opensslDER(_ path: String) throws -> Data {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("der-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: output) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["openssl", "x509", "-in", path, "-outform", "DER", "-out", output.path]
        try process.run()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "openssl x509 failed for \(path)")
        return try Data(contentsOf: output)
    }

    @Test func certificateBlocksDecodeToOpenSSLsDERInOrderSkippingKeysAndJunk() async throws {
        let ca = await TLSTests.certificateFile("ca.pem"), good = await TLSTests.certificateFile("good.pem")
        let key = await TLSTests.certificateFile("good.key")
        let text = try [ca, key, good].map { try String(contentsOfFile: $0, encoding: .utf8) }
        // A key block between them, CRLF line ends, and a truncated block at the end.
        let pem = (text[0] + "junk\n" + text[1] + text[2]).replacingOccurrences(of: "\n", with: "\r\n")
            + "-----BEGIN CERTIFICATE-----\nMIIB"
        let blocks = PEMCertificates.der(in: pem)
        #expect(blocks == [try opensslDER(ca), try opensslDER(good)])
    }

    @Test func textWithoutCertificatesHasNone() {
        #expect(PEMCertificates.der(in: "").isEmpty)
        #expect(PEMCertificates.der(in: "-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n").isEmpty)
        #expect(PEMCertificates.der(in: "-----END CERTIFICATE-----\n-----BEGIN CERTIFICATE-----\n").isEmpty)
    }
}
