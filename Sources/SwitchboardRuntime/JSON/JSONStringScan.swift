/// Finds where a run of JSON string content that needs no escaping ends: at the first quote,
/// backslash or control character. Eight bytes are tested at a time; strings are most of a
/// JSON document's bytes (base64 bodies above all), and testing three conditions a byte cost
/// about twelve instructions a byte, reading and writing alike.
@usableFromInline
enum JSONStringScan {
    /// The number of bytes from `start` before the first quote, backslash or control
    /// character, or `count` if there is none.
    @inlinable
    static func plainPrefixLength(_ start: UnsafeRawPointer, count: Int) -> Int {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highBits: UInt64 = 0x8080_8080_8080_8080
        let quotes = ones &* UInt64(UInt8(ascii: "\""))
        let backslashes = ones &* UInt64(UInt8(ascii: "\\"))
        var offset = 0
        while count &- offset >= 8 {
            let word = UInt64(littleEndian: start.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            // A byte of `x` is zero where `(x - 1) & ~x` sets its high bit, and below 0x20
            // where `(x - 0x20) & ~x` does; a borrow can only mark bytes after a real hit, so
            // the lowest mark is exact.
            let quote = word ^ quotes
            let backslash = word ^ backslashes
            let marks = (((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash) | ((word &- ones &* 0x20) & ~word)) & highBits
            if marks != 0 { return offset &+ marks.trailingZeroBitCount >> 3 }
            offset &+= 8
        }
        while offset < count {
            let byte = start.load(fromByteOffset: offset, as: UInt8.self)
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 { return offset }
            offset &+= 1
        }
        return count
    }
}
