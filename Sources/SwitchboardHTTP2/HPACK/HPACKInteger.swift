/// HPACK's prefixed integers (RFC 7541 §5.1): a value that fits the prefix's low bits sits
/// there; a larger one fills the prefix and continues in 7-bit groups, least significant first.
enum HPACKInteger {
    /// The most continuation bytes read: 4 give 28 bits, more than any index, string length
    /// or table size this implementation accepts, and no value can overflow.
    static let maximumContinuationBytes = 4

    /// Appends `value` with a `prefixBits`-bit prefix, OR-ing `flags` into the first byte.
    /// Inlined: nearly every integer (an index, a short length) fits its prefix, and a call
    /// cost more than the byte it writes.
    @inline(__always)
    static func encode(_ value: Int, prefixBits: Int, flags: UInt8, into bytes: inout [UInt8]) {
        let limit = (1 << prefixBits) - 1
        if value < limit {
            bytes.append(flags | UInt8(value))
        } else {
            encodeLong(value, limit: limit, flags: flags, into: &bytes)
        }
    }

    private static func encodeLong(_ value: Int, limit: Int, flags: UInt8, into bytes: inout [UInt8]) {
        bytes.append(flags | UInt8(limit))
        var rest = value - limit
        while rest >= 128 {
            bytes.append(UInt8(rest & 0x7F) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }

    /// Reads an integer whose prefix is the low `prefixBits` bits of `bytes[index]`, moving
    /// `index` past it. Inlined for the same reason as ``encode(_:prefixBits:flags:into:)``.
    @inline(__always)
    static func decode(_ bytes: UnsafeRawBufferPointer, at index: inout Int, prefixBits: Int) throws(HPACKError) -> Int {
        guard index < bytes.count else { throw .truncated }
        let limit = (1 << prefixBits) - 1
        let value = Int(bytes[index]) & limit
        index += 1
        guard value == limit else { return value }
        return try decodeLong(bytes, at: &index, limit: limit)
    }

    private static func decodeLong(_ bytes: UnsafeRawBufferPointer, at index: inout Int, limit: Int) throws(HPACKError) -> Int {
        var value = limit
        var shift = 0
        for _ in 0..<maximumContinuationBytes {
            guard index < bytes.count else { throw .truncated }
            let byte = bytes[index]
            index += 1
            value += Int(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
        }
        throw .integerOverflow
    }
}
