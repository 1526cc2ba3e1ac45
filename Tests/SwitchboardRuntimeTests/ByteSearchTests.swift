import PeerSupport
import SwitchboardRuntime
import Testing

/// The contiguous-bytes search against the plain `utf8.firstIndex(of:)`, and percent-decoding
/// with and without escapes.
@Suite struct ByteSearchTests {
    @Test func findsTheSameIndexInStringsAndSubstrings() {
        let pieces = ["a", "?", "/", "é", "😀", "%", "&", "=", "", "abc"]
        var generator = SeededGenerator(seed: 0x5EED000F)
        for _ in 0..<3000 {
            let text = (0..<Int.random(in: 0...8, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined()
            for byte in [UInt8(ascii: "?"), UInt8(ascii: "/"), UInt8(ascii: "%")] {
                #expect(text.firstIndex(ofASCII: byte) == text.utf8.firstIndex(of: byte))
                let cut = text.index(text.startIndex, offsetBy: text.count / 2)
                let tail = text[cut...]
                #expect(tail.firstIndex(ofASCII: byte) == tail.utf8.firstIndex(of: byte))
            }
        }
    }

    @Test func percentDecodingWithAndWithoutEscapes() {
        #expect(PathEncoding.percentDecode("plain-value_1.2~") == "plain-value_1.2~")
        #expect(PathEncoding.percentDecode("h%C3%A9llo%2Fx") == "héllo/x")
        #expect(PathEncoding.percentDecode("bad%2") == nil)
        #expect(PathEncoding.percentDecode("%FF") == nil, "not UTF-8")
        #expect(PathEncoding.percentDecode("é😀") == "é😀")
        for value in ["", "abc", "a b/c?d", "é😀", "100%"] {
            #expect(PathEncoding.percentDecode(PathEncoding.percentEncode(value)[...]) == value)
        }
    }
}
