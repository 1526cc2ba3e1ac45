#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The syntax of HTTP fields (RFC 9110 §5), in one place for every layer that writes or reads
/// them: the WebSocket handshake, HTTP/2 and gRPC metadata, the runtime's response headers and
/// the string bridge. Checked before anything is sent, so a name or value from configuration,
/// an app or a peer can never end a field early and smuggle in another.
///
/// Public only so that its checks inline into the other modules' per-byte loops (measured:
/// as `package` declarations they were called out of line); the target is no product and
/// this is not API.
public enum HTTPSyntax {
    /// Whether `byte` is a `tchar` (RFC 9110 §5.6.2), a character a field name is made of:
    /// ALPHA, DIGIT, a backtick and `!#$%&'*+-.^_|~`.
    @inlinable @inline(__always)
    public static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"), UInt8(ascii: "'"),
             UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"),
             UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"): true
        default: false
        }
    }

    /// Whether `byte` may be in a gRPC metadata key, in either case (keys go out lowercased):
    /// letters, digits, `-`, `_` and `.`, a subset of `tchar`.
    @inlinable @inline(__always)
    public static func isGRPCKeyByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."): true
        default: false
        }
    }

    /// Whether `text` is a token (RFC 9110 §5.6.2): one or more `tchar`s.
    @inlinable
    public static func isToken(_ text: String) -> Bool {
        // Over the borrowed bytes: walking the UTF-8 view by index costs several times more.
        !text.isEmpty && (text.utf8.withContiguousStorageIfAvailable { $0.allSatisfy(isTokenByte) } ?? text.utf8.allSatisfy(isTokenByte))
    }

    /// Whether `text` may be a field value or reason phrase: visible characters, spaces, tabs
    /// and bytes beyond ASCII; no other control character (RFC 9110 §5.5).
    @inlinable
    public static func isFieldValue(_ text: String) -> Bool {
        let allowed = { (byte: UInt8) in byte == 0x09 || (byte >= 0x20 && byte != 0x7F) }
        return text.utf8.withContiguousStorageIfAvailable { $0.allSatisfy(allowed) } ?? text.utf8.allSatisfy(allowed)
    }

    /// Whether `text` holds NUL, CR or LF, which no HTTP version can carry in a field value.
    @inlinable
    public static func hasNULCROrLF(_ text: String) -> Bool {
        // Native strings lend their bytes; anything else is copied once.
        text.utf8.withContiguousStorageIfAvailable(hasNULCROrLF) ?? Array(text.utf8).withUnsafeBufferPointer(hasNULCROrLF)
    }

    /// Whether any byte is NUL, LF or CR: eight bytes at a time (every value of every HTTP/2
    /// header block passes here, so it is inlinable too), the last word overlapping the one
    /// before; fewer than eight bytes one at a time.
    @inlinable
    public static func hasNULCROrLF(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let count = bytes.count
        guard let base = bytes.baseAddress, count >= 8 else {
            for byte in bytes where byte == 0 || byte == 10 || byte == 13 { return true }
            return false
        }
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        // A byte of `word` is zero exactly when its high bit survives (the classic test; the
        // borrow can flag a 0x01 above a true zero, but only when some byte is zero anyway).
        func zeroBytes(_ word: UInt64) -> UInt64 { (word &- ones) & ~word & highs }
        func hasOne(_ word: UInt64) -> Bool {
            zeroBytes(word) | zeroBytes(word ^ (ones &* 10)) | zeroBytes(word ^ (ones &* 13)) != 0
        }
        let raw = UnsafeRawPointer(base)
        var index = 0
        while index + 8 < count {
            if hasOne(raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)) { return true }
            index += 8
        }
        return hasOne(raw.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self))
    }

    /// Whether two non-empty arrays are copies of one array: the same storage, so certainly
    /// equal. The small memories that recognise a list handed on call after call (header
    /// lists shared by generated calls, an HPACK block remembered whole) key on this; `false`
    /// says nothing about equality, and empty arrays, which all share one storage, never match.
    @inlinable @inline(__always)
    public static func sameStorage<Element>(_ lhs: [Element], _ rhs: [Element]) -> Bool {
        guard !lhs.isEmpty, lhs.count == rhs.count else { return false }
        let left = lhs.withUnsafeBufferPointer { $0.baseAddress }
        return left == rhs.withUnsafeBufferPointer { $0.baseAddress }
    }

    /// Whether two strings are stored alike: the same object, or the same small string (which
    /// holds its bytes inline), so certainly equal. A header string handed on call after call
    /// (an HPACK table's entry) is found this way in two comparisons of a word; `==` and a
    /// byte comparison are for strings stored apart (`false` here says nothing).
    @inlinable @inline(__always)
    public static func sameRepresentation(_ lhs: String, _ rhs: String) -> Bool {
        #if arch(x86_64) || arch(arm64)
        let left = unsafeBitCast(lhs, to: (UInt64, UInt64).self), right = unsafeBitCast(rhs, to: (UInt64, UInt64).self)
        return left.0 == right.0 && left.1 == right.1
        #else
        return withUnsafeBytes(of: lhs) { a in withUnsafeBytes(of: rhs) { b in a.elementsEqual(b) } }
        #endif
    }

    /// Whether both strings hold the same UTF-8 bytes, as HTTP compares names and values
    /// (not `==`'s canonical equivalence), with the cheap answers first: the same
    /// representation is equal, strings of other lengths are not (`==` reaches that through
    /// its Unicode-aware path, about 60 instructions). For header names and values compared
    /// on every call.
    @inlinable @inline(__always)
    public static func sameBytes(_ lhs: String, _ rhs: String) -> Bool {
        if sameRepresentation(lhs, rhs) { return true }
        guard lhs.utf8.count == rhs.utf8.count else { return false }
        return equalBytes(lhs, rhs)
    }

    /// Whether two strings of one length hold the same bytes: out of line, and by `memcmp`
    /// when both lend their storage (a byte loop cost about 280 instructions for 16 bytes).
    @usableFromInline
    static func equalBytes(_ lhs: String, _ rhs: String) -> Bool {
        let left = lhs.utf8, right = rhs.utf8
        let same = left.withContiguousStorageIfAvailable { a in
            right.withContiguousStorageIfAvailable { b in a.isEmpty || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0 }
        }
        if let same, let same { return same }
        return left.elementsEqual(right)
    }
}
