@testable import SwitchboardIO
import Testing

#if canImport(Glibc)
/// Client sessions of one trust configuration share one OpenSSL context instead of loading
/// the trust store for every connection (from the I/O review).
struct ClientContextTests {
    @Test func sessionsOfOneTrustShareTheirContext() throws {
        let first = try TLSEngine(clientTrusting: nil, serverName: "chat.example")
        let second = try TLSEngine(clientTrusting: nil, serverName: "other.example", applicationProtocols: ["h2"])
        #expect(first.context == second.context)
        #expect(ClientContexts.shared.count <= ClientContexts.maximumCount)
        #expect(throws: IOFailure.self) { try TLSEngine(clientTrusting: "not a certificate", serverName: "chat.example") }
    }
}
#endif
