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
        #expect(WireSize.varint(UInt32(0)) == 1)
        #expect(WireSize.varint(UInt32(127)) == 1)
        #expect(WireSize.varint(UInt32(128)) == 2)
        #expect(WireSize.varint(UInt32.max) == 5)
    }

    /// The one-byte shortcut and the general formula agree with a varint's real length on
    /// both sides of every width.
    @Test func lengthDelimitedSizesMatchTheirPrefixes() {
        for bits in 0...62 {
            for length in Set([(1 << bits) - 1, 1 << bits, (1 << bits) + 1]) where length >= 0 {
                var prefix = 1, rest = UInt64(length)
                while rest >= 0x80 { prefix += 1; rest >>= 7 }
                #expect(WireSize.lengthDelimited(length) == prefix + length, "length \(length)")
                #expect(WireSize.varint(UInt64(length)) == prefix, "varint \(length)")
            }
        }
    }

    /// Every length a string can take through the short-copy paths (0-64 bytes) and past
    /// them is written with its prefix and every byte in place, and nothing beyond its end.
    @Test func stringsOfEveryShortLengthAreWrittenExactly() {
        for length in 0...80 {
            let text = String((0..<length).map { Character(Unicode.Scalar(UInt8(0x21 + $0 % 90))) })
            let multiByte = String(repeating: "é", count: length / 2) + String(repeating: "x", count: length % 2)
            for value in [text, multiByte] {
                let utf8 = Array(value.utf8)
                var buffer = [UInt8](repeating: 0xEE, count: utf8.count + 16)
                let written = buffer.withUnsafeMutableBytes { raw in
                    var writer = WireWriter(unsafeStart: raw.baseAddress!)
                    writer.writeString(value)
                    return writer.bytesWritten
                }
                let prefix = utf8.count < 0x80 ? [UInt8(utf8.count)] : [UInt8(utf8.count & 0x7F | 0x80), UInt8(utf8.count >> 7)]
                #expect(written == prefix.count + utf8.count)
                #expect(Array(buffer[..<written]) == prefix + utf8, "length \(length)")
                #expect(buffer[written...].allSatisfy { $0 == 0xEE }, "wrote past the end at length \(length)")
            }
        }
    }

    /// The same for `bytes` fields, inline (up to 14 bytes) and heap-backed `Data` alike.
    @Test func bytesOfEveryShortLengthAreWrittenExactly() {
        for length in 0...80 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 1) }
            var buffer = [UInt8](repeating: 0xEE, count: length + 17)
            let written = buffer.withUnsafeMutableBytes { raw in
                var writer = WireWriter(unsafeStart: raw.baseAddress!)
                writer.writeBytes(Data(bytes))
                return writer.bytesWritten
            }
            #expect(written == 1 + length)
            #expect(Array(buffer[..<written]) == [UInt8(length)] + bytes, "length \(length)")
            #expect(buffer[written...].allSatisfy { $0 == 0xEE }, "wrote past the end at length \(length)")
        }
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
        for length in Array(0...70) + [1023, 1024, 1025] {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 * 37 + 11) }
            let text = Base64.encodedString(bytes)
            #expect(text == Data(bytes).base64EncodedString())
            // Appended after what the output already holds, which stays as it was.
            var output = Array("{\"a\":\"".utf8)
            bytes.withUnsafeBytes { Base64.encode($0, into: &output) }
            #expect(output == Array("{\"a\":\"".utf8) + Array(text.utf8))
            let decoded = Array(text.utf8).withUnsafeBytes { Base64.decode($0) }
            #expect(decoded == bytes)
        }
    }

    /// Every length through the four-character groups and both tails, in both alphabets,
    /// padded and not, into an array and into `Data` (on the stack up to 1 KiB, beyond it
    /// not): the bytes Foundation decodes from the same text.
    @Test func base64DecodesEveryLengthInBothAlphabets() {
        for length in Array(0...70) + [1022, 1023, 1024, 1025, 1026, 3000] {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 97 &+ 251) }
            let standard = Data(bytes).base64EncodedString()
            let urlSafe = standard.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            for text in [standard, urlSafe, String(standard.prefix { $0 != "=" }), String(urlSafe.prefix { $0 != "=" })] {
                let utf8 = Array(text.utf8)
                #expect(utf8.withUnsafeBytes { Base64.decode($0) } == bytes, "length \(length): \(text.prefix(12))")
                #expect(utf8.withUnsafeBytes { Base64.decodeData($0) } == Data(bytes), "length \(length)")
            }
        }
    }

    /// A character outside both alphabets is refused wherever it stands, in a full group or
    /// in either tail; so are a lone last character and padding that does not complete a group.
    @Test func base64RefusesBadCharactersAnywhere() {
        for length in [3, 4, 5, 6, 7, 8, 12] {
            let text = Array(Data(repeating: 0x41, count: length).base64EncodedString().prefix { $0 != "=" }.utf8)
            for position in text.indices {
                for bad in [UInt8(ascii: "!"), UInt8(ascii: "="), UInt8(ascii: " "), 0x80, 0xFF] {
                    var broken = text
                    broken[position] = bad
                    // A trailing "=" only strips one character: what is left must still be refused
                    // or decode to the shorter value, never to the original bytes.
                    let decoded = broken.withUnsafeBytes { Base64.decode($0) }
                    if bad == UInt8(ascii: "="), position == text.count - 1 {
                        #expect(decoded != Array(repeating: 0x41, count: length))
                    } else {
                        #expect(decoded == nil, "\(bad) at \(position) of \(text.count)")
                        #expect(broken.withUnsafeBytes { Base64.decodeData($0) } == nil)
                    }
                }
            }
        }
        for text in ["Q", "QUFBQ", "Q===", "QQ=", "QUF=B"] {
            #expect(Array(text.utf8).withUnsafeBytes { Base64.decode($0) } == nil, "\(text)")
        }
    }
}
