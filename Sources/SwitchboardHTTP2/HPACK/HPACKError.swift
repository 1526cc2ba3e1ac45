/// Why a header block could not be decoded (RFC 7541). On HTTP/2 each one is a connection
/// error of type `COMPRESSION_ERROR`: the two ends' dynamic tables can no longer agree.
public enum HPACKError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The block ends inside a representation.
    case truncated
    /// An integer longer than any index, length or size this decoder accepts.
    case integerOverflow
    /// An index of 0, or past the end of the static and dynamic tables.
    case invalidIndex(Int)
    /// A Huffman-coded string holding the EOS symbol, or padded with more than 7 bits or with
    /// anything but ones.
    case invalidHuffmanCode
    /// A dynamic table size update above what this end allows (SETTINGS_HEADER_TABLE_SIZE).
    case tableSizeUpdateTooLarge(requested: Int, maximum: Int)
    /// A dynamic table size update after the first field of a block.
    case tableSizeUpdateNotAtStart
    /// The decoder is told to expect a size update (it lowered its maximum) and the block
    /// did not start with one.
    case missingTableSizeUpdate

    public var description: String {
        switch self {
        case .truncated: "HPACK: header block ends inside a field"
        case .integerOverflow: "HPACK: integer too large"
        case let .invalidIndex(index): "HPACK: no table entry \(index)"
        case .invalidHuffmanCode: "HPACK: invalid Huffman code or padding"
        case let .tableSizeUpdateTooLarge(requested, maximum): "HPACK: table size update to \(requested) above the allowed \(maximum)"
        case .tableSizeUpdateNotAtStart: "HPACK: table size update after a field"
        case .missingTableSizeUpdate: "HPACK: expected a table size update at the start of the block"
        }
    }
}
