import Foundation
@testable import SwitchboardHTTP2
import Testing

/// HPACK against RFC 7541's own examples (Appendix C), byte for byte in both directions,
/// including the dynamic table's size after each block.
@Suite struct HPACKVectorTests {
    static func bytes(_ hex: String) -> [UInt8] {
        let digits = Array(hex.filter { !$0.isWhitespace })
        return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(digits[$0...$0 + 1]), radix: 16)! }
    }

    static func fields(_ pairs: [(String, String)]) -> [HPACKHeader] { pairs.map { HPACKHeader($0.0, $0.1) } }

    // C.1: integers.
    @Test func integersAsInTheExamples() throws {
        var out: [UInt8] = []
        HPACKInteger.encode(10, prefixBits: 5, flags: 0, into: &out)
        #expect(out == [0x0A])
        out = []
        HPACKInteger.encode(1337, prefixBits: 5, flags: 0, into: &out)
        #expect(out == [0x1F, 0x9A, 0x0A])
        out = []
        HPACKInteger.encode(42, prefixBits: 8, flags: 0, into: &out)
        #expect(out == [0x2A])
        for (encoded, prefix, expected) in [([UInt8]([0x1F, 0x9A, 0x0A]), 5, 1337), ([0x0A], 5, 10), ([0x2A], 8, 42)] {
            var index = 0
            let value = try encoded.withUnsafeBytes { try HPACKInteger.decode($0, at: &index, prefixBits: prefix) }
            #expect(value == expected)
            #expect(index == encoded.count)
        }
    }

    // C.2: single representations.
    @Test func literalRepresentations() throws {
        var decoder = HPACKDecoder()
        let indexed = try decoder.decode(Self.bytes("400a 6375 7374 6f6d 2d6b 6579 0d63 7573 746f 6d2d 6865 6164 6572"))
        #expect(indexed.headers == Self.fields([("custom-key", "custom-header")]))
        #expect(decoder.dynamicTableSize.size == 55)

        var plain = HPACKDecoder()
        #expect(try plain.decode(Self.bytes("040c 2f73 616d 706c 652f 7061 7468")).headers == Self.fields([(":path", "/sample/path")]))
        #expect(plain.dynamicTableSize.size == 0)

        var never = HPACKDecoder()
        let secret = try never.decode(Self.bytes("1008 7061 7373 776f 7264 0673 6563 7265 74"))
        #expect(secret.headers == [HPACKHeader("password", "secret", indexing: .never)])
        #expect(never.dynamicTableSize.size == 0)
        // A never-indexed field goes out the same way, and is redacted in descriptions.
        var encoder = HPACKEncoder(huffman: .never)
        var out: [UInt8] = []
        encoder.encode([HPACKHeader("password", "secret", indexing: .never)], into: &out)
        #expect(out == Self.bytes("1008 7061 7373 776f 7264 0673 6563 7265 74"))
        #expect(secret.headers[0].description == "password: <redacted>")

        var single = HPACKDecoder()
        #expect(try single.decode([0x82]).headers == Self.fields([(":method", "GET")]))
    }

    struct Sequence {
        var name: String
        var tableSize: Int
        var huffman: HPACKEncoder.HuffmanUse
        var blocks: [(hex: String, headers: [(String, String)], tableSize: Int)]
    }

    static let request: [[(String, String)]] = [
        [(":method", "GET"), (":scheme", "http"), (":path", "/"), (":authority", "www.example.com")],
        [(":method", "GET"), (":scheme", "http"), (":path", "/"), (":authority", "www.example.com"), ("cache-control", "no-cache")],
        [(":method", "GET"), (":scheme", "https"), (":path", "/index.html"), (":authority", "www.example.com"), ("custom-key", "custom-value")],
    ]
    static let response: [[(String, String)]] = [
        [(":status", "302"), ("cache-control", "private"), ("date", "Mon, 21 Oct 2013 20:13:21 GMT"), ("location", "https://www.example.com")],
        [(":status", "307"), ("cache-control", "private"), ("date", "Mon, 21 Oct 2013 20:13:21 GMT"), ("location", "https://www.example.com")],
        [(":status", "200"), ("cache-control", "private"), ("date", "Mon, 21 Oct 2013 20:13:22 GMT"), ("location", "https://www.example.com"),
         ("content-encoding", "gzip"), ("set-cookie", "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1")],
    ]

    static let sequences: [Sequence] = [
        Sequence(name: "C.3 requests without Huffman", tableSize: 4096, huffman: .never, blocks: [
            ("8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d", request[0], 57),
            ("8286 84be 5808 6e6f 2d63 6163 6865", request[1], 110),
            ("8287 85bf 400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65", request[2], 164),
        ]),
        Sequence(name: "C.4 requests with Huffman", tableSize: 4096, huffman: .always, blocks: [
            ("8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff", request[0], 57),
            ("8286 84be 5886 a8eb 1064 9cbf", request[1], 110),
            ("8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf", request[2], 164),
        ]),
        Sequence(name: "C.5 responses without Huffman", tableSize: 256, huffman: .never, blocks: [
            ("4803 3330 3258 0770 7269 7661 7465 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32 3120 474d 546e 1768 7474 7073 3a2f 2f77 7777 2e65 7861 6d70 6c65 2e63 6f6d", response[0], 222),
            ("4803 3330 37c1 c0bf", response[1], 222),
            ("88c1 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32 3220 474d 54c0 5a04 677a 6970 7738 666f 6f3d 4153 444a 4b48 514b 425a 584f 5157 454f 5049 5541 5851 5745 4f49 553b 206d 6178 2d61 6765 3d33 3630 303b 2076 6572 7369 6f6e 3d31", response[2], 215),
        ]),
        Sequence(name: "C.6 responses with Huffman", tableSize: 256, huffman: .always, blocks: [
            ("4882 6402 5885 aec3 771a 4b61 96d0 7abe 9410 54d4 44a8 2005 9504 0b81 66e0 82a6 2d1b ff6e 919d 29ad 1718 63c7 8f0b 97c8 e9ae 82ae 43d3", response[0], 222),
            ("4883 640e ffc1 c0bf", response[1], 222),
            ("88c1 6196 d07a be94 1054 d444 a820 0595 040b 8166 e084 a62d 1bff c05a 839b d9ab 77ad 94e7 821d d7f2 e6c7 b335 dfdf cd5b 3960 d5af 2708 7f36 72c1 ab27 0fb5 291f 9587 3160 65c0 03ed 4ee5 b106 3d50 07", response[2], 215),
        ]),
    ]

    @Test(arguments: sequences.indices)
    func decodesTheExampleSequence(_ index: Int) throws {
        let sequence = Self.sequences[index]
        var decoder = HPACKDecoder(maximumTableSize: sequence.tableSize)
        for block in sequence.blocks {
            let decoded = try decoder.decode(Self.bytes(block.hex))
            #expect(decoded.headers == Self.fields(block.headers), "\(sequence.name)")
            #expect(decoder.dynamicTableSize.size == block.tableSize, "\(sequence.name)")
        }
    }

    @Test(arguments: sequences.indices)
    func encodesTheExampleSequenceByteForByte(_ index: Int) throws {
        let sequence = Self.sequences[index]
        // The examples index every field; a table of 256 starts at that size, as a peer's
        // SETTINGS would have set it before the first block.
        var encoder = HPACKEncoder(tableSizeCap: 4096, huffman: sequence.huffman, indexesEverything: true)
        if sequence.tableSize != 4096 {
            encoder.setPeerMaximumTableSize(sequence.tableSize)
            var announcement: [UInt8] = []
            encoder.encode([], into: &announcement)
            #expect(announcement == [0x3F, 0xE1, 0x01], "a size update to 256")
        }
        for block in sequence.blocks {
            var out: [UInt8] = []
            encoder.encode(Self.fields(block.headers), into: &out)
            #expect(out == Self.bytes(block.hex), "\(sequence.name)")
            #expect(encoder.dynamicTableSize.size == block.tableSize, "\(sequence.name)")
        }
    }

    @Test func huffmanRoundTripsEveryOctet() throws {
        let all = [UInt8](0...255) + Array("grpc-timeout: 1S".utf8)
        var encoded: [UInt8] = [9] // what the output already holds is kept
        all.withUnsafeBufferPointer { HuffmanCoding.encode($0, encodedLength: HuffmanCoding.encodedLength(of: $0), into: &encoded) }
        #expect(encoded.first == 9)
        encoded.removeFirst()
        var decoded = [UInt8](repeating: 0, count: HuffmanCoding.maximumDecodedLength(of: encoded.count))
        let written = try encoded.withUnsafeBytes { coded in
            try decoded.withUnsafeMutableBufferPointer { try HuffmanCoding.decode(coded, into: $0) }
        }
        #expect(Array(decoded[..<written]) == all)
    }

    /// The encoder looks a field up in the static table only for pseudo-headers and
    /// accept-encoding; that holds while they are the only entries with values.
    @Test func onlyPseudoHeadersAndAcceptEncodingHaveStaticValues() throws {
        let withValues = HPACKStaticTable.entries.filter { !$0.value.isEmpty }.map(\.name)
        #expect(!withValues.isEmpty)
        #expect(withValues.allSatisfy { $0.hasPrefix(":") || $0 == "accept-encoding" })
        // And such a field is still found there: one index byte.
        var encoder = HPACKEncoder()
        var block: [UInt8] = []
        encoder.encode([HPACKHeader("accept-encoding", "gzip, deflate"), HPACKHeader(":method", "POST")], into: &block)
        #expect(block == [0x80 | 16, 0x80 | 3])
    }
}
