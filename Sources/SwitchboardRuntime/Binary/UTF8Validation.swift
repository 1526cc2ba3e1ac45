/// A fast UTF-8 validity check for decoded strings.
///
/// The standard library's `String(validating:as:)` is generic and not specialised
/// for UTF-8, which made it the largest cost of decoding; this check runs eight
/// ASCII bytes per step and follows the Unicode table of well-formed sequences
/// (no overlongs, no surrogates, nothing above U+10FFFF) otherwise.
public enum UTF8Validation {
    /// The string of `bytes`, which ``isValid(_:)`` accepted.
    ///
    /// The standard library checks the bytes again whatever it is told. ASCII that fits inline
    /// (15 bytes or fewer on 64-bit platforms, 10 on 32-bit ones) is built through the
    /// initializer whose check of such a string is one test of its bits, about 40
    /// instructions fewer than `String(decoding:as:)`; anything else goes through the latter,
    /// which that initializer would take for it anyway, after a second copy.
    @inlinable
    public static func string(fromValid bytes: UnsafeRawBufferPointer) -> String {
        let inlineCapacity = MemoryLayout<Int>.size == 8 ? 15 : 10
        guard bytes.count <= inlineCapacity, let base = bytes.baseAddress, isASCII(base, count: bytes.count) else {
            return String(decoding: bytes.assumingMemoryBound(to: UInt8.self), as: UTF8.self)
        }
        return String(unsafeUninitializedCapacity: bytes.count) { target in
            UnsafeMutableRawBufferPointer(target).copyMemory(from: bytes)
            return bytes.count
        }
    }

    /// Whether `bytes` is well-formed UTF-8.
    @inlinable
    public static func isValid(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        // Small enough to inline at every string read; most protocol strings end here.
        return isASCII(base, count: bytes.count) || isValidBeyondASCII(base, count: bytes.count)
    }

    /// The full check, out of line so the ASCII test above stays small.
    @usableFromInline @inline(never)
    static func isValidBeyondASCII(_ base: UnsafeRawPointer, count: Int) -> Bool {
        var index = 0
        while index < count {
            // ASCII fast path: eight bytes at a time.
            while index + 8 <= count,
                  base.loadUnaligned(fromByteOffset: index, as: UInt64.self) & 0x8080_8080_8080_8080 == 0 {
                index += 8
            }
            guard index < count else { return true }
            let lead = base.load(fromByteOffset: index, as: UInt8.self)
            if lead < 0x80 {
                index += 1
                continue
            }
            func continuation(_ offset: Int, _ range: ClosedRange<UInt8> = 0x80...0xBF) -> Bool {
                index + offset < count && range.contains(base.load(fromByteOffset: index + offset, as: UInt8.self))
            }
            switch lead {
            case 0xC2...0xDF:
                guard continuation(1) else { return false }
                index += 2
            case 0xE0:
                guard continuation(1, 0xA0...0xBF), continuation(2) else { return false }
                index += 3
            case 0xE1...0xEC, 0xEE...0xEF:
                guard continuation(1), continuation(2) else { return false }
                index += 3
            case 0xED:
                guard continuation(1, 0x80...0x9F), continuation(2) else { return false }
                index += 3
            case 0xF0:
                guard continuation(1, 0x90...0xBF), continuation(2), continuation(3) else { return false }
                index += 4
            case 0xF1...0xF3:
                guard continuation(1), continuation(2), continuation(3) else { return false }
                index += 4
            case 0xF4:
                guard continuation(1, 0x80...0x8F), continuation(2), continuation(3) else { return false }
                index += 4
            default:
                return false
            }
        }
        return true
    }

    /// Whether every byte is below 0x80, without a branch per word: most protocol strings
    /// (verbs, paths, header lines) are ASCII and short, so one pass that ORs the words
    /// and the tail together beats stopping early.
    @inlinable
    static func isASCII(_ base: UnsafeRawPointer, count: Int) -> Bool {
        var seen: UInt64 = 0
        if count >= 8 {
            var index = 0
            while index + 8 <= count {
                seen |= base.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                index += 8
            }
            // The last word overlaps bytes already seen, which costs less than a byte loop.
            seen |= base.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
        } else if count >= 4 {
            seen = UInt64(base.loadUnaligned(as: UInt32.self))
                | UInt64(base.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self))
        } else {
            for index in 0..<count { seen |= UInt64(base.load(fromByteOffset: index, as: UInt8.self)) }
        }
        return seen & 0x8080_8080_8080_8080 == 0
    }
}
