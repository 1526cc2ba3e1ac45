/// Finding an ASCII byte in a string without walking `String.Index` one step at a time:
/// the generic `utf8.firstIndex(of:)` costs tens of nanoseconds a byte, which adds up on
/// every request a server routes.
extension StringProtocol {
    /// The index of the first `byte` (an ASCII delimiter such as `?` or `/`), if any.
    package func firstIndex(ofASCII byte: UInt8) -> Index? {
        // An ASCII byte never occurs inside a multi-byte scalar, so its index is a boundary.
        assert(byte < 0x80, "only ASCII delimiters")
        let found: Int?? = utf8.withContiguousStorageIfAvailable { $0.firstIndex(of: byte) }
        guard let found else { return utf8.firstIndex(of: byte) }
        return found.map { utf8.index(utf8.startIndex, offsetBy: $0) }
    }

    /// Whether the string contains `byte`.
    package func containsASCII(_ byte: UInt8) -> Bool { firstIndex(ofASCII: byte) != nil }
}
