import Foundation
import SwitchboardRuntime
import Testing

@Suite struct WirePrimitiveTests {
    @Test func varintSizes() {
        #expect(WireSize.varint(UInt64(0)) == 1)
        #expect(WireSize.varint(UInt64(127)) == 1)
        #expect(WireSize.varint(UInt64(128)) == 2)
        #expect(WireSize.varint(UInt64(16_383)) == 2)
        #expect(WireSize.varint(UInt64(16_384)) == 3)
        #expect(WireSize.varint(UInt64.max) == 10)
        #expect(WireSize.varint(UInt32.max) == 5)
    }

    @Test func zigZag() {
        #expect(ZigZag.encode(Int32(0)) == 0)
        #expect(ZigZag.encode(Int32(-1)) == 1)
        #expect(ZigZag.encode(Int32(1)) == 2)
        #expect(ZigZag.encode(Int32.min) == UInt32.max)
        #expect(ZigZag.encode(Int64.min) == UInt64.max)
        for value: Int64 in [0, 1, -1, .max, .min, 12345, -98765] {
            #expect(ZigZag.decode(ZigZag.encode(value)) == value)
        }
    }

    @Test func rfc3339Formatting() {
        func format(_ seconds: Int64, _ nanos: Int32) -> String? {
            var out: [UInt8] = []
            return RFC3339.format(seconds: seconds, nanos: nanos, into: &out) ? String(decoding: out, as: UTF8.self) : nil
        }
        #expect(format(0, 0) == "1970-01-01T00:00:00Z")
        #expect(format(-62_135_596_800, 0) == "0001-01-01T00:00:00Z")
        #expect(format(253_402_300_799, 999_999_999) == "9999-12-31T23:59:59.999999999Z")
        #expect(format(951_782_400, 1000) == "2000-02-29T00:00:00.000001Z")
        #expect(format(1, 10_000_000) == "1970-01-01T00:00:01.010Z")
        #expect(format(253_402_300_800, 0) == nil)
        #expect(format(0, 1_000_000_000) == nil)
    }

    @Test func rfc3339ParsingRoundTripsEveryDayOfALeapCycle() {
        // 400 years cover every calendar rule; step by 37 days to stay quick.
        var seconds: Int64 = 946_684_800 // 2000-01-01
        while seconds < 946_684_800 + 400 * 31_557_600 {
            var text: [UInt8] = []
            #expect(RFC3339.format(seconds: seconds, nanos: 0, into: &text))
            let parsed = text.withUnsafeBytes { RFC3339.parse($0) }
            #expect(parsed?.seconds == seconds)
            seconds += 37 * 86_400 + 1234
        }
    }

    @Test func base64() {
        for length in 0..<20 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 * 37 + 11) }
            let text = Base64.encodedString(bytes)
            #expect(text == Data(bytes).base64EncodedString())
            let decoded = Array(text.utf8).withUnsafeBytes { Base64.decode($0) }
            #expect(decoded == bytes)
        }
    }
}
