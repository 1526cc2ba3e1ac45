import PeerSupport
import SwitchboardHTTPSyntax
import Testing

/// HTTP field syntax against RFC 9110's definitions; the word-at-a-time search for NUL, CR and
/// LF against the byte-at-a-time definition (RFC 9113 §8.2.1), at every length and alignment.
@Suite struct HTTPSyntaxTests {
    static func definition(_ bytes: ArraySlice<UInt8>) -> Bool {
        bytes.contains { $0 == 0 || $0 == 10 || $0 == 13 }
    }

    @Test func agreesWithTheDefinitionOnRandomValues() {
        // Bytes next to the three (and the borrow's neighbours) are the ones a word test gets wrong.
        let pool: [UInt8] = [0, 1, 2, 9, 10, 11, 12, 13, 14, 0x20, 0x61, 0x7F, 0x80, 0x81, 0xFE, 0xFF]
        var generator = SeededGenerator(seed: 0x5EED000E)
        for _ in 0..<20_000 {
            let length = Int.random(in: 0...40, using: &generator)
            let offset = Int.random(in: 0...7, using: &generator)
            // Mostly harmless bytes, so that values without any of the three are common too.
            let bytes = (0..<(offset + length)).map { _ in
                Int.random(in: 0..<4, using: &generator) == 0 ? pool.randomElement(using: &generator)! : UInt8.random(in: 0x20...0xFF, using: &generator)
            }
            let value = bytes[offset...]
            let found = value.withUnsafeBufferPointer { HTTPSyntax.hasNULCROrLF($0) }
            #expect(found == Self.definition(value), "\(Array(value))")
        }
    }

    @Test func eachForbiddenByteIsFoundInEveryPosition() {
        for forbidden: UInt8 in [0, 10, 13] {
            for length in 1...24 {
                for position in 0..<length {
                    var bytes = [UInt8](repeating: 0x61, count: length)
                    bytes[position] = forbidden
                    #expect(bytes.withUnsafeBufferPointer { HTTPSyntax.hasNULCROrLF($0) })
                }
                // Their neighbours alone are allowed.
                let neighbours = (0..<length).map { [1, 9, 11, 12, 14][$0 % 5] as UInt8 }
                #expect(!neighbours.withUnsafeBufferPointer { HTTPSyntax.hasNULCROrLF($0) })
            }
        }
    }

    /// `tchar` as RFC 9110 §5.6.2 spells it out, against every byte.
    @Test func tokenBytesAreExactlyRFC9110sTchar() {
        let tchar = Set("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ".utf8)
        #expect(tchar.count == 15 + 10 + 26 + 26)
        for byte in UInt8.min...UInt8.max {
            #expect(HTTPSyntax.isTokenByte(byte) == tchar.contains(byte), "byte \(byte)")
        }
        #expect(HTTPSyntax.isToken("x-Request_ID.2~"))
        #expect(!HTTPSyntax.isToken(""), "a token has at least one character")
        for bad in ["a b", "a:b", "a\r\nb", "na\u{EF}ve", "(x)", "a\"b"] {
            #expect(!HTTPSyntax.isToken(bad), "\(bad)")
        }
    }

    @Test func fieldValuesRefuseControlsButTabs() {
        #expect(HTTPSyntax.isFieldValue("text/plain; q=0.5\twith tab, caf\u{E9}"))
        #expect(HTTPSyntax.isFieldValue(""))
        for control in (0..<0x20).filter({ $0 != 0x09 }) + [0x7F] {
            let value = "a" + String(UnicodeScalar(UInt8(control))) + "b"
            #expect(!HTTPSyntax.isFieldValue(value), "control \(control)")
        }
    }

    /// The `String` form checks the same bytes.
    @Test func stringsAreCheckedByTheirBytes() {
        #expect(HTTPSyntax.hasNULCROrLF("line one\r\nline two"))
        #expect(!HTTPSyntax.hasNULCROrLF("one line, long enough for words"))
        #expect(HTTPSyntax.hasNULCROrLF("ab\0cd"))
        #expect(!HTTPSyntax.hasNULCROrLF("caf\u{E9} \u{2028} \u{85}"), "only the three bytes, not other line separators")
    }
}

/// Strings stored alike are equal; strings stored apart are left to `==`.
@Suite struct SameRepresentationTests {
    @Test func onlyCopiesOfOneNonEmptyArrayShareStorage() {
        let list = [1, 2, 3]
        let copy = list
        #expect(HTTPSyntax.sameStorage(list, copy))
        #expect(!HTTPSyntax.sameStorage(list, [1, 2, 3]), "equal, stored apart")
        var changed = list
        changed[0] = 9
        #expect(!HTTPSyntax.sameStorage(list, changed), "a changed copy has storage of its own")
        #expect(!HTTPSyntax.sameStorage([Int](), []), "empty arrays share one storage but never match")
    }

    @Test func onlyTheSameStorageOrTheSameSmallStringIsTheSameRepresentation() {
        let long = String(repeating: "x", count: 40)
        let copy = long
        #expect(HTTPSyntax.sameRepresentation(long, copy), "one object")
        #expect(HTTPSyntax.sameRepresentation("te", String(decoding: Array("te".utf8), as: UTF8.self)), "one small string, built twice")
        let apart = String(repeating: "x", count: 40)
        #expect(!HTTPSyntax.sameRepresentation(long, apart) && long == apart, "equal, stored apart: for == to decide")
        for (a, b) in [("te", "tf"), ("", "a"), (long, long + "y"), ("caf\u{E9}", "cafe\u{301}")] {
            #expect(!HTTPSyntax.sameRepresentation(a, b), "\(a) \(b)")
        }
        // `sameBytes` compares bytes, whichever shortcut answers (canonically equal text in
        // other bytes is not the same).
        let pairs = [("te", "te"), ("te", "tf"), ("", ""), ("", "a"), (long, apart), (long, long + "y"), ("caf\u{E9}", "cafe\u{301}"),
                     ("a\u{301}\u{316}", "a\u{316}\u{301}"), ("CONNECT", "CONNECX"), ("POST", "CONNECT")]
        for (a, b) in pairs { #expect(HTTPSyntax.sameBytes(a, b) == Array(a.utf8).elementsEqual(b.utf8), "\(a) \(b)") }
    }
}

/// The name sets the redaction rules and gRPC's reserved names use, against `Set` and
/// `lowercased()`.
@Suite struct HTTPFieldNameSetTests {
    @Test func agreesWithASetAndLowercasing() {
        let names = ["te", "host", "accept", "content-type", "x-signal-timestamp", "sec-websocket-version", "date"]
        let set = HTTPFieldNameSet(names)
        let probes = names + names.map { $0.uppercased() } + ["", "t", "tee", "hosts", "Content-Typ", "x", "D\u{C9}TE", "caf\u{E9}"]
        for probe in probes {
            #expect(set.contains(probe) == Set(names).contains(probe), "\(probe)")
            #expect(set.containsLowercased(probe) == Set(names).contains(probe.lowercased()), "\(probe)")
        }
        // A lowercase form of another length never matches (the Kelvin sign lowercases to "k").
        #expect(!HTTPFieldNameSet(["sec-websocket-version"]).containsLowercased("sec-websoc\u{212A}et-version"))
        #expect(!HTTPFieldNameSet([]).contains("") && !HTTPFieldNameSet([]).containsLowercased("a"))
    }

    /// Names are folded a word at a time up to 16 bytes and a byte at a time beyond: every
    /// ASCII byte at the first, a middle and the last place of names of both kinds, against
    /// `lowercased()`.
    @Test func foldingAgreesWithLowercasingForEveryASCIIByte() {
        // With "`" and "{" where a byte next to the letters ("@", "[") would land if folded.
        let names = ["te", "accept", "content-type", "grpc-status-deta", "sec-websocket-version", "x-signal-timestamp-of-a-long-name",
                     "`ab{", "`" + String(repeating: "a", count: 20) + "{"]
        let set = HTTPFieldNameSet(names)
        for name in names {
            let bytes = Array(name.utf8)
            for place in Set([0, bytes.count / 2, bytes.count - 1]) {
                for byte in UInt8(0)..<0x80 {
                    var probe = bytes
                    probe[place] = byte
                    let text = String(decoding: probe, as: UTF8.self)
                    #expect(set.containsLowercased(text) == names.contains(text.lowercased()), "\(probe)")
                }
            }
        }
    }
}
