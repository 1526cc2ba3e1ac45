import PeerSupport
import SwitchboardRuntime
import Testing

/// The validator's ASCII fast path reads whole and overlapping words; every length and every
/// position of a stray byte must still be seen, and the verdict must match the standard library's.
@Suite struct UTF8ValidationTests {
    func standardLibraryAccepts(_ bytes: [UInt8]) -> Bool {
        String(validating: bytes, as: UTF8.self) != nil
    }

    func validatorAccepts(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { UTF8Validation.isValid($0) }
    }

    @Test func everyLengthAndEveryPositionOfAStrayByte() {
        for length in 0...40 {
            let ascii = (0..<length).map { UInt8(0x41 + $0 % 26) }
            #expect(validatorAccepts(ascii), "ASCII of length \(length)")
            for position in 0..<length {
                for stray: UInt8 in [0x80, 0xC3, 0xFF] {
                    var bytes = ascii
                    bytes[position] = stray
                    #expect(validatorAccepts(bytes) == standardLibraryAccepts(bytes), "length \(length), 0x\(String(stray, radix: 16)) at \(position)")
                    #expect(!validatorAccepts(bytes))
                }
            }
        }
    }

    @Test func wellFormedMultiByteSequencesAtEveryOffset() {
        for scalar in ["é", "€", "😀"] {
            for prefix in 0...12 {
                let bytes = Array(String(repeating: "a", count: prefix).utf8) + Array(scalar.utf8) + Array("tail".utf8)
                #expect(validatorAccepts(bytes), "\(scalar) after \(prefix) bytes")
                // Cut inside the scalar: every scalar here is two bytes or more.
                #expect(!validatorAccepts(Array(bytes.dropLast(5))), "\(scalar) cut short after \(prefix) bytes")
            }
        }
    }

    /// The string built from validated bytes is the standard library's, inline or not, ASCII
    /// or not, at every length around the inline limit.
    @Test func stringsFromValidBytesAreTheStandardLibrarys() {
        let pieces = ["a", "é", "€", "😀", "\u{0}", "z"]
        var generator = SeededGenerator(seed: 0x5EED0012)
        for _ in 0..<2_000 {
            var text = ""
            while text.utf8.count < Int.random(in: 0...24, using: &generator) { text += pieces.randomElement(using: &generator)! }
            let bytes = Array(text.utf8)
            let made = bytes.withUnsafeBytes { UTF8Validation.string(fromValid: $0) }
            #expect(made == text)
            #expect(Array(made.utf8) == bytes, "the same bytes, not merely an equivalent string")
        }
    }
}
