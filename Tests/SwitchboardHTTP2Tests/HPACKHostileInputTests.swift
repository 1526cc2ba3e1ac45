import Foundation
import PeerSupport
@testable import SwitchboardHTTP2
import Testing

/// A peer's header blocks are untrusted: every malformed one is a typed error, and none
/// costs more than its length.
@Suite struct HPACKHostileInputTests {
    func decode(_ bytes: [UInt8], decoder: inout HPACKDecoder) -> Result<HPACKDecoder.Block, HPACKError> {
        Result { () throws(HPACKError) in try decoder.decode(bytes) }
    }

    func error(of bytes: [UInt8], tableSize: Int = 4096) -> HPACKError? {
        var decoder = HPACKDecoder(maximumTableSize: tableSize)
        if case let .failure(error) = decode(bytes, decoder: &decoder) { return error }
        return nil
    }

    @Test func malformedBlocksFailWithTheirReason() throws {
        #expect(error(of: [0x80]) == .invalidIndex(0))
        #expect(error(of: [0xBE]) == .invalidIndex(62), "62 with an empty dynamic table")
        #expect(error(of: [0x7F]) == .truncated, "an integer cut short")
        #expect(error(of: [0x40, 0x05, 0x61]) == .truncated, "a name longer than what is left")
        #expect(error(of: [0x40, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F]) == .integerOverflow, "a length over 28 bits")
        #expect(error(of: [0x3F, 0xE2, 0x3F]) == .tableSizeUpdateTooLarge(requested: 8193, maximum: 4096))
        #expect(error(of: [0x82, 0x20]) == .tableSizeUpdateNotAtStart)
        // Huffman: EOS inside a string, padding of 8 bits, padding with a zero bit.
        #expect(error(of: [0x00, 0x84, 0xFF, 0xFF, 0xFF, 0xFF, 0x00]) == .invalidHuffmanCode)
        #expect(error(of: [0x00, 0x82, 0x1F, 0xFF, 0x00]) == .invalidHuffmanCode)
        #expect(error(of: [0x00, 0x81, 0x1E, 0x00]) == .invalidHuffmanCode)
        // "a" is 00011 (5 bits): padding 111 is fine.
        var decoder = HPACKDecoder()
        #expect(try decoder.decode([0x00, 0x81, 0x1F, 0x00]).headers == [HPACKHeader("a", "")])
    }

    @Test func aLoweredTableSizeMustBeAnnounced() throws {
        var decoder = HPACKDecoder()
        _ = try decoder.decode([0x40, 0x01, 0x61, 0x01, 0x62])
        decoder.setMaximumTableSize(0)
        #expect(decode([0x82], decoder: &decoder) == .failure(.missingTableSizeUpdate))
        // An empty block owes the update as much as any other (RFC 7541 §4.2).
        var empty = HPACKDecoder()
        _ = try empty.decode([0x40, 0x01, 0x61, 0x01, 0x62])
        empty.setMaximumTableSize(0)
        #expect(decode([], decoder: &empty) == .failure(.missingTableSizeUpdate))
        var announced = HPACKDecoder()
        _ = try announced.decode([0x40, 0x01, 0x61, 0x01, 0x62])
        announced.setMaximumTableSize(0)
        #expect(try announced.decode([0x20, 0x82]).headers == [HPACKHeader(":method", "GET")])
        #expect(announced.dynamicTableSize == (0, 0))
    }

    /// An "HPACK bomb": one large entry, then a block that names it thousands of times,
    /// one octet each. The list is over the limit, so nothing is kept; the table stays usable.
    @Test func aBlockThatExpandsPastTheListLimitKeepsNothing() throws {
        var decoder = HPACKDecoder(maximumHeaderListSize: 16 * 1024)
        var first: [UInt8] = [0x40, 0x01, 0x78]
        let value = [UInt8](repeating: 0x61, count: 4000)
        HPACKInteger.encode(value.count, prefixBits: 7, flags: 0, into: &first)
        first += value
        let stored = try decoder.decode(first)
        #expect(stored.headers.count == 1 && !stored.isTooLarge)
        let bomb = [UInt8](repeating: 0xBE, count: 16_000)
        let exploded = try decoder.decode(bomb)
        #expect(exploded.isTooLarge)
        #expect(exploded.headers.isEmpty)
        #expect(exploded.listSize == 16_000 * (1 + 4000 + 32))
        #expect(try decoder.decode([0xBE]).headers.first?.name == "x", "the table is still in step")
    }

    @Test func textThatIsNotUTF8IsFlaggedNotLost() throws {
        var decoder = HPACKDecoder()
        let block = try decoder.decode([0x00, 0x01, 0x78, 0x02, 0xC3, 0x28])
        #expect(block.hasInvalidText)
        let valid = try decoder.decode([0x00, 0x01, 0x78, 0x02, 0xC3, 0xA9])
        #expect(!valid.hasInvalidText)
        #expect(valid.headers == [HPACKHeader("x", "é")])
    }

    /// Random bytes never crash or hang the decoder (seeded, so a failure repeats).
    @Test func randomBlocksNeverCrash() {
        var generator = SeededGenerator(seed: 0x4a7c_2026)
        var valid = 0, decoded = 0, refused = 0
        for round in 0..<3000 {
            let length = Int.random(in: 0..<64, using: &generator)
            // Every third block is indexed static entries only, which must decode; the rest
            // are random bytes, most of which must be refused (and none may crash or hang).
            let onlyIndexed = round % 3 == 0
            let bytes = (0..<length).map { _ in onlyIndexed ? UInt8.random(in: 0x81...0xBD, using: &generator) : UInt8.random(in: 0...255, using: &generator) }
            var decoder = HPACKDecoder()
            let result = decode(bytes, decoder: &decoder)
            if onlyIndexed {
                valid += 1
                if case let .success(block) = result {
                    #expect(block.headers.count == length)
                } else {
                    Issue.record("a block of \(length) indexed static entries was refused: \(result)")
                }
            }
            switch result {
            case .success: decoded += 1
            case .failure: refused += 1
            }
        }
        // A decoder that refused (or accepted) everything would not pass.
        #expect(decoded >= valid && refused > 1000, "decoded \(decoded), refused \(refused)")
    }

    @Test func theEncoderFollowsThePeersTableSize() throws {
        var encoder = HPACKEncoder()
        var decoder = HPACKDecoder()
        let headers = [HPACKHeader("x-custom", "value"), HPACKHeader(":path", "/pkg.Service/Method")]
        for size in [4096, 0, 100, 4096] {
            encoder.setPeerMaximumTableSize(size)
            decoder.setMaximumTableSize(size)
            for _ in 0..<3 {
                var out: [UInt8] = []
                encoder.encode(headers, into: &out)
                #expect(try decoder.decode(out).headers == headers)
                #expect(encoder.dynamicTableSize == decoder.dynamicTableSize)
            }
        }
        // Shrinking then growing before the next block announces both (RFC 7541 §4.2).
        encoder.setPeerMaximumTableSize(10)
        encoder.setPeerMaximumTableSize(2000)
        var out: [UInt8] = []
        encoder.encode([], into: &out)
        #expect(out == [0x2A, 0x3F, 0xB1, 0x0F])
    }

    @Test func secretsAreNeverIndexed() throws {
        var encoder = HPACKEncoder()
        var out: [UInt8] = []
        encoder.encode([HPACKHeader("authorization", "Basic c2VjcmV0"), HPACKHeader("x-token", "t", indexing: .never)], into: &out)
        #expect(encoder.dynamicTableSize.size == 0)
        var decoder = HPACKDecoder()
        let block = try decoder.decode(out)
        #expect(block.headers.map(\.indexing) == [.never, .never])
    }
}
