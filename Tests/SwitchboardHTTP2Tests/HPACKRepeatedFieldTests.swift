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

    @Test func rememberedEntriesThatWereEvictedOrMovedAreNotUsed() throws {
        // A table of 300 octets holds about four of these fields: lists drawn from twenty of
        // them, in changing places, evict and re-add entries all the time.
        var encoder = HPACKEncoder(tableSizeCap: 300)
        var decoder = HPACKDecoder(maximumTableSize: 300)
        encoder.setPeerMaximumTableSize(300)
        let pool = (0..<20).map { HPACKHeader("x-field-\($0 % 7)", "value number \($0)") }
        var generator = SplitMix64(seed: 7)
        for _ in 0..<3000 {
            let count = Int(generator.next() % 6) + 1
            let headers = (0..<count).map { _ in pool[Int(generator.next() % UInt64(pool.count))] }
            var block: [UInt8] = []
            encoder.encode(headers, into: &block)
            #expect(try decoder.decode(block).headers == headers)
            #expect(encoder.dynamicTableSize == decoder.dynamicTableSize)
        }
    }

    @Test func aShrunkTableForgetsWhatTheMemoryPointsAt() throws {
        var encoder = HPACKEncoder()
        var decoder = HPACKDecoder()
        let headers = [HPACKHeader("x-a", "1"), HPACKHeader("x-b", "2")]
        for size in [4096, 0, 4096] {
            encoder.setPeerMaximumTableSize(size)
            decoder.setMaximumTableSize(size)
            for _ in 0..<2 {
                var block: [UInt8] = []
                encoder.encode(headers, into: &block)
                #expect(try decoder.decode(block).headers == headers)
            }
        }
    }
}

/// A small deterministic generator, so a failure replays.
private struct SplitMix64 {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
