#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension String {
    /// Whether the string's bytes begin with `prefix`'s. Header names are ASCII tokens by the
    /// time they get here (HTTP/2 validates them), so bytes say what `hasPrefix` would, without
    /// its Unicode-aware comparison on every header of every call.
    func hasBytePrefix(_ prefix: StaticString) -> Bool {
        prefix.withUTF8Buffer { expected in
            guard utf8.count >= expected.count else { return false }
            guard let start = expected.baseAddress, !expected.isEmpty else { return true }
            return utf8.withContiguousStorageIfAvailable { bytes in
                memcmp(bytes.baseAddress!, start, expected.count) == 0
            } ?? utf8.starts(with: expected)
        }
    }

    /// Whether the string's bytes begin with `prefix`'s (lowercase ASCII), the string's ASCII
    /// letters compared in either case: for names not lowered yet.
    func hasBytePrefix(ignoringASCIICase prefix: StaticString) -> Bool {
        prefix.withUTF8Buffer { expected in
            guard utf8.count >= expected.count else { return false }
            return zip(utf8, expected).allSatisfy { byte, lower in (byte &- UInt8(ascii: "A") < 26 ? byte | 0x20 : byte) == lower }
        }
    }

    /// Whether the string's bytes are exactly `literal`'s. For values compared on every call
    /// that are equal without being the same string (a decoded `application/grpc`), where
    /// `==` takes its Unicode-aware path (about 60 instructions).
    func hasBytes(_ literal: StaticString) -> Bool {
        literal.withUTF8Buffer { expected in
            guard utf8.count == expected.count else { return false }
            guard let start = expected.baseAddress, !expected.isEmpty else { return true }
            return utf8.withContiguousStorageIfAvailable { bytes in
                memcmp(bytes.baseAddress!, start, expected.count) == 0
            } ?? utf8.elementsEqual(expected)
        }
    }

    /// Whether the string begins with a colon: an HTTP/2 pseudo-header.
    var isPseudoHeaderName: Bool { leadingByte == UInt8(ascii: ":") }

    /// The first UTF-8 byte, or 0 for an empty string. Through the view's subscript, which
    /// inlines: `utf8.first` went through the generic `Collection.first`, out of line.
    @inline(__always)
    var leadingByte: UInt8 {
        let bytes = utf8
        return bytes.isEmpty ? 0 : bytes[bytes.startIndex]
    }
}
