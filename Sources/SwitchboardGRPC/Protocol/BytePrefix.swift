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

    /// Whether the string begins with a colon: an HTTP/2 pseudo-header.
    var isPseudoHeaderName: Bool { utf8.first == UInt8(ascii: ":") }
}
