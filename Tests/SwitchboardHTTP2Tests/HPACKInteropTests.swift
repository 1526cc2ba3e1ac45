import Foundation
import PeerSupport
@testable import SwitchboardHTTP2
import Testing

/// HPACK against an implementation nobody here wrote: Python's `hpack` (python-hyper).
/// Two hundred header lists that repeat and vary as requests on one connection do; each side
/// decodes, in order on one table, what the other encoded.
@Suite(.timeLimit(.minutes(3)))
struct HPACKInteropTests {
    struct Job: Codable {
        var decode: [String]
        var encode: [[[String]]]
        var table_size: Int
    }

    struct Answer: Codable {
        var decoded: [[[String]]]
        var encoded: [String]
    }

    /// Lists like a gRPC client's: fixed pseudo-headers, paths from a small set, metadata
    /// with random names and values (some UTF-8, some long), a per-call timeout.
    static func headerLists(count: Int) -> [[HPACKHeader]] {
        var random = SeededGenerator(seed: 0x5EED000B)
        let paths = ["/chat.Messages/SendMessage", "/chat.Accounts/LookUpUsernameHash", "/grpc.health.v1.Health/Check"]
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz0123456789-")
        let valueAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789 !#$%&'()*+,-./:;<=>?@[]^_`{|}~é→")
        return (0..<count).map { _ in
            var list = [HPACKHeader(":method", "POST"), HPACKHeader(":scheme", "http"),
                        HPACKHeader(":path", paths.randomElement(using: &random)!), HPACKHeader(":authority", "127.0.0.1:50051"),
                        HPACKHeader("content-type", "application/grpc"), HPACKHeader("te", "trailers"),
                        HPACKHeader("grpc-timeout", "\(Int.random(in: 1...99_999_999, using: &random))u")]
            for _ in 0..<Int.random(in: 0...4, using: &random) {
                let name = "x-" + String((0..<Int.random(in: 1...12, using: &random)).map { _ in alphabet.randomElement(using: &random)! })
                let length = Bool.random(using: &random) ? Int.random(in: 0...20, using: &random) : Int.random(in: 100...3000, using: &random)
                let value = String((0..<length).map { _ in valueAlphabet.randomElement(using: &random)! })
                list.append(HPACKHeader(name, value))
            }
            if Int.random(in: 0..<10, using: &random) == 0 { list.append(HPACKHeader("authorization", "Bearer abc.def")) }
            return list
        }
    }

    @Test func bothDirectionsAgreeWithPythonHpack() async throws {
        let lists = Self.headerLists(count: 200)
        var encoder = HPACKEncoder()
        let ours: [String] = lists.map { list in
            var out: [UInt8] = []
            encoder.encode(list, into: &out)
            return out.map { String(format: "%02x", $0) }.joined()
        }
        let jobURL = try ScratchDirectory.make("hpack").appendingPathComponent("job.json")
        let job = Job(decode: ours, encode: lists.map { $0.map { [$0.name, $0.value] } }, table_size: 4096)
        try JSONEncoder().encode(job).write(to: jobURL)
        let peer = try PythonPeer(script: "hpack_peer.py", arguments: [jobURL.path])
        let result = await peer.finishAsync(timeout: 30)
        try #require(result.status == 0, "\(result.output)")
        let answer = try JSONDecoder().decode(Answer.self, from: Data(result.output.utf8))

        // Python decoded our blocks to the lists we encoded.
        #expect(answer.decoded == lists.map { $0.map { [$0.name, $0.value] } })
        // We decode Python's blocks to the lists it encoded.
        var decoder = HPACKDecoder()
        for (hex, list) in zip(answer.encoded, lists) {
            let block = try decoder.decode(HPACKVectorTests.bytes(hex))
            #expect(block.headers.map { [$0.name, $0.value] } == list.map { [$0.name, $0.value] })
        }
    }
}
