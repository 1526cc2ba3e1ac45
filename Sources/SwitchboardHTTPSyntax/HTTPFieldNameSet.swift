/// A fixed set of field names looked up without hashing: only the names of the asked name's
/// UTF-8 length are compared. For the few dozen names (reserved, log-visible) asked about for
/// every header of every call, where hashing each name cost more than the comparisons.
///
/// Like ``HTTPSyntax``, public only for the other modules of this package; not API.
public struct HTTPFieldNameSet: Sendable {
    private let byLength: [[String]]
    /// The same names as bytes, for comparing a name whose letters are folded on the way.
    private let bytesByLength: [[[UInt8]]]
    /// The names of up to 16 bytes as two words each (``words(of:folding:)``), by length.
    private let wordsByLength: [[ShortName]]

    /// Up to 16 bytes in two words, zero-padded: compared in two steps, not byte by byte.
    private struct ShortName: Equatable {
        var low: UInt64 = 0
        var high: UInt64 = 0
    }

    /// A set of `names`, as given (a caller that compares lowercased gives lowercase names).
    public init(_ names: some Sequence<String>) {
        var buckets: [[String]] = []
        for name in names {
            let length = name.utf8.count
            while buckets.count <= length { buckets.append([]) }
            buckets[length].append(name)
        }
        byLength = buckets
        bytesByLength = buckets.map { $0.map { Array($0.utf8) } }
        wordsByLength = buckets.map { names in
            names.compactMap { name in Array(name.utf8).withUnsafeBufferPointer { Self.words(of: $0, folding: false) } }
        }
    }

    /// Whether `name` is in the set, compared exactly.
    public func contains(_ name: String) -> Bool {
        let length = name.utf8.count
        return length < byLength.count && byLength[length].contains(name)
    }

    /// Whether `name`, lowercased, is in the set. An ASCII name is compared with its letters
    /// folded, not lowercased into a copy; a name whose lowercase form has another UTF-8 length
    /// (one with a Kelvin sign, say) is not in the set, whatever it lowercases to.
    public func containsLowercased(_ name: String) -> Bool {
        let length = name.utf8.count
        guard length < byLength.count, !byLength[length].isEmpty else { return false }
        // Bytes folded in place: lowering `Content-Type` into a new string, to drop it, cost
        // about 400 instructions on every call of a gRPC client.
        if let folded = name.utf8.withContiguousStorageIfAvailable({ bytes -> Bool? in
            if length <= 16 {
                // Most names: their letters lowered a word at a time.
                guard let words = Self.words(of: bytes, folding: true) else { return nil }
                return wordsByLength[length].contains(words)
            }
            var isASCII = true
            for byte in bytes where byte >= 0x80 { isASCII = false }
            guard isASCII else { return nil }
            for candidate in bytesByLength[length] {
                let equal = candidate.withUnsafeBufferPointer { expected in
                    for index in 0..<length {
                        let byte = bytes[index]
                        if expected[index] != (byte &- UInt8(ascii: "A") < 26 ? byte | 0x20 : byte) { return false }
                    }
                    return true
                }
                if equal { return true }
            }
            return false
        }), let folded {
            return folded
        }
        return byLength[length].contains(name.lowercased())
    }

    /// `bytes` as two words, with ASCII letters lowered when `folding`; nil for more than 16
    /// bytes or bytes beyond ASCII.
    private static func words(of bytes: UnsafeBufferPointer<UInt8>, folding: Bool) -> ShortName? {
        guard bytes.count <= MemoryLayout<ShortName>.size else { return nil }
        var name = ShortName()
        withUnsafeMutableBytes(of: &name) { $0.copyMemory(from: UnsafeRawBufferPointer(bytes)) }
        guard (name.low | name.high) & 0x8080_8080_8080_8080 == 0 else { return nil }
        guard folding else { return name }
        return ShortName(low: lowered(name.low), high: lowered(name.high))
    }

    /// Eight ASCII bytes with `A`...`Z` lowered: a byte's top bit is set by adding 0x3F when
    /// it is at least `A`, and by adding 0x25 when it is above `Z` (no carry crosses bytes
    /// below 0x80); the letters' bit becomes 0x20.
    private static func lowered(_ word: UInt64) -> UInt64 {
        let atLeastA = word &+ 0x3F3F_3F3F_3F3F_3F3F
        let aboveZ = word &+ 0x2525_2525_2525_2525
        return word | ((atLeastA & ~aboveZ & 0x8080_8080_8080_8080) >> 2)
    }
}
