import PeerSupport
@testable import SwitchboardHTTP2
import Testing

/// The encoder remembers which table entry each position of the last header lists used, so
/// a connection repeating its fields skips hashing them: what it writes must stay right as
/// the table changes under those memories.
@Suite struct HPACKRepeatedFieldTests {
    @Test func aRepeatedListIsAllIndexesAndDecodesTheSame() throws {
        var encoder = HPACKEncoder()
        var decoder = HPACKDecoder()
        let headers = [HPACKHeader(":method", "POST"), HPACKHeader(":path", "/pkg.Service/Method"), HPACKHeader("content-type", "application/grpc"),
                       HPACKHeader("te", "trailers"), HPACKHeader("user-agent", "switchboard")]
        var first: [UInt8] = []
        encoder.encode(headers, into: &first)
        #expect(try decoder.decode(first).headers == headers)
        for _ in 0..<3 {
            var again: [UInt8] = []
            encoder.encode(headers, into: &again)
            // One byte each: the static `:method POST` (3), then the four dynamic entries,
            // the first added now the oldest (65) and the last the newest (62).
            #expect(again == [0x83, 0xC1, 0xC0, 0xBF, 0xBE] as [UInt8])
            #expect(try decoder.decode(again).headers == headers)
        }
    }

    @Test func perRequestNamesGoUnindexedWithTheirNameCodedOnce() throws {
        for huffman in [HPACKEncoder.HuffmanUse.whenShorter, .never] {
            var encoder = HPACKEncoder(huffman: huffman)
            var decoder = HPACKDecoder()
            for round in 0..<3 {
                let headers = [HPACKHeader("grpc-timeout", "\(999 - round)m"), HPACKHeader("date", "Sun, 29 Nov 2026 1\(round):00:00 GMT"),
                               HPACKHeader("grpc-message", "round \(round)"), HPACKHeader("content-length", "\(round)")]
                var block: [UInt8] = []
                encoder.encode(headers, into: &block)
                #expect(try decoder.decode(block).headers == headers)
                #expect(encoder.dynamicTableSize.size == 0, "values that change every request stay out of the table")
                // Literal without indexing; `grpc-timeout`'s name as a literal, `date` by its
                // static index (33). The timeout's name and value go uncoded whatever the
                // encoder's Huffman use: sent with every request, they are cheaper to send as
                // they are than to code and decode each time.
                #expect(block[0] == 0x00)
                let nameLength = 12
                #expect(block[1] == UInt8(nameLength))
                #expect(Array(block[2..<14]) == Array("grpc-timeout".utf8))
                let timeout = Array("\(999 - round)m".utf8)
                #expect(block[2 + nameLength] == UInt8(timeout.count), "no Huffman flag")
                #expect(Array(block[3 + nameLength..<3 + nameLength + timeout.count]) == timeout)
                // content-length (last) by its static index (28) and its value uncoded too.
                #expect(Array(block.suffix(4)) == [0x0F, 0x0D, 0x01, UInt8(ascii: "0") + UInt8(round)])
                let date = 2 + nameLength + 1 + Int(block[2 + nameLength] & 0x7F)
                #expect(Array(block[date..<date + 2]) == [0x0F, 0x12] as [UInt8])
            }
            // A client's grpc-timeout is never indexed: the same literal, flagged so (0x10).
            var block: [UInt8] = []
            encoder.encode([HPACKHeader("grpc-timeout", "5S", indexing: .never)], into: &block)
            #expect(block[0] == 0x10)
            #expect(try decoder.decode(block).headers.map { [$0.name, $0.value] } == [["grpc-timeout", "5S"]])
        }
        // Asked to code every string, it codes the timeout too.
        var always = HPACKEncoder(huffman: .always)
        var block: [UInt8] = []
        always.encode([HPACKHeader("grpc-timeout", "999m")], into: &block)
        #expect(block[1] & 0x80 != 0 && block[2 + Int(block[1] & 0x7F)] & 0x80 != 0, "name and value Huffman-coded")
        var decoder = HPACKDecoder()
        #expect(try decoder.decode(block).headers == [HPACKHeader("grpc-timeout", "999m")])
    }

    @Test func rememberedEntriesThatWereEvictedOrMovedAreNotUsed() throws {
        // A table of 300 octets holds about four of these fields: lists drawn from twenty of
        // them, in changing places, evict and re-add entries all the time.
        var encoder = HPACKEncoder(tableSizeCap: 300)
        var decoder = HPACKDecoder(maximumTableSize: 300)
        encoder.setPeerMaximumTableSize(300)
        let pool = (0..<20).map { HPACKHeader("x-field-\($0 % 7)", "value number \($0)") }
        var generator = SeededGenerator(seed: 7)
        for _ in 0..<3000 {
            let count = Int(generator.next() % 6) + 1
            let headers = (0..<count).map { _ in pool[Int(generator.next() % UInt64(pool.count))] }
            var block: [UInt8] = []
            encoder.encode(headers, into: &block)
            #expect(try decoder.decode(block).headers == headers)
            #expect(encoder.dynamicTableSize == decoder.dynamicTableSize)
        }
    }

    /// Literals that are never indexed leave the table empty, so each block must come out
    /// exactly as a fresh encoder writes it and decode exactly as a fresh decoder reads it,
    /// whatever the encoder and decoder kept from earlier blocks: values that repeat at a
    /// position, change there (to one of the same length), or move to another position.
    @Test func keptLiteralsGiveWhatFreshCodersGive() throws {
        let values = ["Basic YWxpY2U6c2VjcmV0", "Basic YWxpY2U6c2VjcmVu", "Bearer abc.def", "", "é→", String(repeating: "k", count: 300), "9999m"]
        for huffman in [HPACKEncoder.HuffmanUse.always, .whenShorter] {
            var encoder = HPACKEncoder(huffman: huffman)
            var decoder = HPACKDecoder()
            var generator = SeededGenerator(seed: 11)
            for _ in 0..<2000 {
                let count = Int(generator.next() % 5) + 1
                // Static fields first, a varying number of them, so literals land on positions
                // nothing was kept at yet (an empty value there once wrote nothing at all).
                let lead = (0..<Int(generator.next() % 4)).map { _ in HPACKHeader(":method", "POST") }
                let headers = lead + (0..<count).map { _ in
                    HPACKHeader(Bool.random(using: &generator) ? "authorization" : "x-secret", values[Int(generator.next() % UInt64(values.count))],
                                indexing: .never)
                }
                var block: [UInt8] = []
                encoder.encode(headers, into: &block)
                var fresh = HPACKEncoder(huffman: huffman)
                var expected: [UInt8] = []
                fresh.encode(headers, into: &expected)
                #expect(block == expected)
                #expect(try decoder.decode(block).headers == headers)
                var freshDecoder = HPACKDecoder()
                #expect(try freshDecoder.decode(block).headers == headers)
            }
        }
    }

    /// `String` equates canonically equivalent text; HPACK carries bytes. A value written
    /// precomposed and then decomposed (or the Kelvin sign after `K`) is two values, whether
    /// it was indexed, kept as a literal or memorised at its position.
    @Test func canonicallyEquivalentValuesKeepTheirOwnBytes() throws {
        let pairs = [("caf\u{E9}", "cafe\u{301}"), ("K", "\u{212A}")]
        for indexing in [HPACKHeader.Indexing.automatic, .never] {
            var encoder = HPACKEncoder(huffman: .always)
            var decoder = HPACKDecoder()
            for (first, second) in pairs {
                #expect(first == second, "Swift equates them")
                for value in [first, second, first, second] {
                    let headers = [HPACKHeader(":method", "POST"), HPACKHeader("x-name", value, indexing: indexing)]
                    var block: [UInt8] = []
                    encoder.encode(headers, into: &block)
                    let decoded = try decoder.decode(block).headers
                    #expect(decoded.count == 2 && Array(decoded[1].value.utf8) == Array(value.utf8), "\(Array(value.utf8))")
                }
            }
        }
    }

    /// A server's response headers and trailers take turns at the same positions: each
    /// list, remembered apart, keeps referring to its own entries.
    @Test func listsTakingTurnsAtThePositionsStayIndexed() throws {
        var encoder = HPACKEncoder()
        // Whole lists would be copied from the list memory; this is about the field memory.
        encoder.remembersBlocks = false
        var decoder = HPACKDecoder()
        let headers = [HPACKHeader(":status", "200"), HPACKHeader("content-type", "application/grpc")]
        let trailers = [HPACKHeader("grpc-status", "0")]
        for round in 0..<4 {
            var block: [UInt8] = []
            encoder.encode(headers, into: &block)
            #expect(try decoder.decode(block).headers == headers)
            // After the first round: `:status 200` static (8), content-type the older entry (63).
            if round > 0 { #expect(block == [0x88, 0xBF] as [UInt8]) }
            block = []
            encoder.encode(trailers, into: &block)
            #expect(try decoder.decode(block).headers == trailers)
            if round > 0 { #expect(block == [0xBE] as [UInt8]) }
            // Fields come from the memory, not a lookup (the bytes alone would be the same
            // without it): `:status` (static, remembered when first found) from round 1 on,
            // the two added in round 0 (found in round 1) from round 2 on. With one field per
            // position, `:status` and `grpc-status` would evict each other and never hit.
            #expect(encoder.recentFieldHits == (round == 0 ? 0 : 3 * round - 2))
        }
    }

    /// A field remembered at a position and then sent never-indexed there is written as a
    /// never-indexed literal, not as the index the memory holds.
    @Test func aRememberedFieldSentAsASecretStaysALiteral() throws {
        var encoder = HPACKEncoder(huffman: .never)
        encoder.remembersBlocks = false
        var decoder = HPACKDecoder()
        // Added to the table by the first list, found there by the second, remembered for the third.
        for _ in 0..<3 {
            var block: [UInt8] = []
            encoder.encode([HPACKHeader("x-key", "v")], into: &block)
            #expect(try decoder.decode(block).headers == [HPACKHeader("x-key", "v")])
        }
        #expect(encoder.recentFieldHits == 1)
        var block: [UInt8] = []
        encoder.encode([HPACKHeader("x-key", "v", indexing: .never)], into: &block)
        #expect(block[0] & 0xF0 == 0x10, "a literal never indexed")
        #expect(try decoder.decode(block).headers == [HPACKHeader("x-key", "v", indexing: .never)])
        #expect(encoder.recentFieldHits == 1)
    }

    /// Secret names are written by their static index, never indexed, without a lookup:
    /// the indices written into the encoder must be the static table's.
    @Test func secretNamesGoByTheirStaticIndex() throws {
        for name in ["authorization", "proxy-authorization", "cookie", "set-cookie"] {
            let index = try #require(HPACKEncoder.neverIndexedNameIndex(name))
            #expect(HPACKStaticTable.indexOfName[HPACKNameKey(name)] == index, "\(name)")
            var encoder = HPACKEncoder(huffman: .never)
            var decoder = HPACKDecoder()
            for _ in 0..<2 {
                var block: [UInt8] = []
                encoder.encode([HPACKHeader(name, "v")], into: &block)
                // Never indexed (0x10), the index on four bits (15 + the rest), the raw value.
                #expect(block == [0x1F, UInt8(index - 15), 0x01, UInt8(ascii: "v")])
                let decoded = try decoder.decode(block).headers
                #expect(decoded == [HPACKHeader(name, "v", indexing: .never)])
            }
            #expect(encoder.dynamicTableSize.size == 0)
        }
        #expect(HPACKEncoder.neverIndexedNameIndex("authorizatio") == nil)
        #expect(HPACKEncoder.neverIndexedNameIndex("x-authorization") == nil)
    }

    // A table shrunk to nothing and grown again under a remembered list is
    // `HPACKHostileInputTests.theEncoderFollowsThePeersTableSize`.
}
