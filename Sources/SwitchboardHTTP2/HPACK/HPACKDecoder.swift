#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Decodes HPACK header blocks (RFC 7541) on one connection: blocks must arrive in order,
/// every one of them, since each may change the dynamic table the next one refers to.
///
/// Cost is linear in the block: strings are checked against the bytes left before anything
/// is allocated, a Huffman string grows by at most 8/5, and a header list over
/// ``maximumHeaderListSize`` is still decoded (to keep the table in step) but not kept.
public struct HPACKDecoder: Sendable {
    /// A decoded block.
    public struct Block: Sendable, Hashable {
        /// The fields in order; empty when the list was over the limit.
        public var headers: [HPACKHeader]
        /// The list's size by RFC 7541's measure (octets + 32 per field), which exceeded
        /// ``maximumHeaderListSize`` when ``isTooLarge``.
        public var listSize: Int
        /// The list was larger than allowed: the request should be refused (431 or a stream
        /// reset), but the connection can go on.
        public var isTooLarge: Bool
        /// A name or value was not UTF-8 (the fields then carry it repaired): the message is
        /// malformed, but the connection can go on.
        public var hasInvalidText: Bool
        /// Bit `i` set: field `i` (of the first 64) is known to pass HTTP/2's character
        /// checks: it came from a table entry checked when it was made (every static entry; a
        /// dynamic one when the peer added it), or from a remembered block whose literals were
        /// checked when it was remembered, so the receiver need not check them again.
        /// Meaningful only for ``headers`` as decoded, in their order.
        public internal(set) var checkedFields: UInt64 = 0

        /// Whether this block (read by a decoder that remembers blocks) says what `plain` (read
        /// by one that does not) says: the same fields, size and flags, and checked bits that
        /// include the plain reading's and add only fields whose characters are clean, so
        /// that validating with them gives what validating with the plain bits gives, for
        /// every kind of list.
        func readsAlike(_ plain: Block) -> Bool {
            guard fieldsAndBitsAgree(with: plain) else { return false }
            return HTTP2HeaderValidation.Kind.allCases.allSatisfy { kind in
                let withBits = Result { () throws(HTTP2ProtocolViolation) in try HTTP2HeaderValidation.validate(headers, as: kind, checked: checkedFields) }
                let without = Result { () throws(HTTP2ProtocolViolation) in try HTTP2HeaderValidation.validate(headers, as: kind, checked: 0) }
                switch (withBits, without) {
                case let (.success(a), .success(b)): return a == b
                case let (.failure(a), .failure(b)): return "\(a)" == "\(b)"
                default: return false
                }
            }
        }

        private func fieldsAndBitsAgree(with plain: Block) -> Bool {
            guard headers == plain.headers, listSize == plain.listSize, isTooLarge == plain.isTooLarge,
                  hasInvalidText == plain.hasInvalidText, checkedFields & plain.checkedFields == plain.checkedFields else { return false }
            let added = checkedFields & ~plain.checkedFields
            // No bit past the fields, and each added one on a clean field.
            guard headers.count >= 64 || added >> UInt64(headers.count) == 0 else { return false }
            return (0..<min(headers.count, 64)).allSatisfy { index in
                added & (1 << UInt64(index)) == 0
                    || HTTP2HeaderValidation.charactersAreClean(name: headers[index].name, value: headers[index].value)
            }
        }
    }

    /// The largest header list kept, by RFC 7541's measure; what this end advertises as
    /// SETTINGS_MAX_HEADER_LIST_SIZE.
    public var maximumHeaderListSize: Int
    /// The largest dynamic table the peer's encoder may use: what this end advertises as
    /// SETTINGS_HEADER_TABLE_SIZE.
    public private(set) var maximumTableSize: Int
    private var table: HPACKDynamicTable
    /// The dynamic table's size as RFC 7541 counts it (for tests).
    var tableSize: Int { table.size }
    /// Set when the allowed size fell below the table's: the next block must start by
    /// shrinking it (RFC 7541 §4.2).
    private var requiresSizeUpdate = false
    /// Huffman-decoded bytes on their way to a String, kept between blocks.
    private var scratch: [UInt8] = []
    /// For the first fields of a block, the last Huffman-coded value read there, coded and
    /// decoded: a peer sends the same literal in the same place call after call (a secret it
    /// never indexes, such as `authorization`), and comparing bytes costs far less than
    /// decoding them again. Bounded: 16 positions of at most 256 coded bytes each.
    private var recentValues: [(coded: [UInt8], text: String, octets: Int, invalid: Bool)] = []
    private static let recentPositions = 16
    private static let recentValueLimit = 256

    /// The most fields a block the decoder remembers may hold: a longer list never comes
    /// back as the same array (for the gRPC server's readings, which key on it).
    package static var rememberedFieldLimit: Int { DecodedBlockMemory.fieldLimit }

    /// Creates a decoder; 4,096 octets of table is HTTP/2's initial setting.
    public init(maximumTableSize: Int = 4096, maximumHeaderListSize: Int = 16 * 1024) {
        self.maximumTableSize = maximumTableSize
        self.maximumHeaderListSize = maximumHeaderListSize
        table = HPACKDynamicTable(maximumSize: maximumTableSize, keepsLookups: false)
    }

    /// Changes the table size the peer may use, once the peer has acknowledged the setting.
    public mutating func setMaximumTableSize(_ size: Int) {
        maximumTableSize = size
        if size < table.maximumSize { requiresSizeUpdate = true }
    }

    /// The dynamic table's current size and limit, as the peer's updates set it.
    public var dynamicTableSize: (size: Int, maximum: Int) { (table.size, table.maximumSize) }

    /// Decodes one complete header block (the HEADERS fragment and its CONTINUATIONs).
    public mutating func decode(_ block: [UInt8]) throws(HPACKError) -> Block {
        try decode(block[...])
    }

    /// Decodes one complete header block held in a slice (as a decoded frame holds it).
    public mutating func decode(_ block: ArraySlice<UInt8>) throws(HPACKError) -> Block {
        var outcome: Result<Block, HPACKError> = .failure(.truncated)
        block.withUnsafeBytes { bytes in outcome = Result { () throws(HPACKError) in try decode(bytes) } }
        return try outcome.get()
    }

    /// Decodes one complete header block.
    public mutating func decode(_ bytes: UnsafeRawBufferPointer) throws(HPACKError) -> Block {
        let tableChanges = table.changes
        // A block that must start by shrinking the table is never one read before.
        let match = requiresSizeUpdate || !remembersBlocks ? nil : blocks.longestMatch(for: bytes, tableChanges: tableChanges, listLimit: maximumHeaderListSize)
        if let match, match.isWhole { return blocks.block(of: match) }
        var result = Block(headers: [], listSize: 0, isTooLarge: false, hasInvalidText: false)
        // Each field takes at least a byte, so this bounds the reservation by the input.
        result.headers.reserveCapacity(min(bytes.count, 16))
        var index = 0
        var atStart = true
        var position = 0
        blocks.beginBlock()
        if let match {
            blocks.takeShared(match, into: &result)
            index = match.sharedBytes
            position = match.fields
            atStart = false
        }
        defer { if scratch.capacity > 4096 { scratch = [] } }
        while index < bytes.count {
            defer {
                position += 1
                blocks.fieldEnded(DecodedBlockMemory.FieldMark(end: index, listSize: result.listSize, invalidSoFar: result.hasInvalidText))
            }
            let first = bytes[index]
            if first & 0x80 != 0 {
                let fieldIndex = try HPACKInteger.decode(bytes, at: &index, prefixBits: 7)
                if fieldIndex > HPACKStaticTable.count {
                    // Entry and facts in one lookup; the size in the peer's octets, as for literals.
                    guard let (field, facts) = table.entryAndFacts(at: fieldIndex - HPACKStaticTable.count) else {
                        throw .invalidIndex(fieldIndex)
                    }
                    // The entry holds repaired text: every field taken from it is malformed too.
                    if facts.invalidName || facts.invalidValue { result.hasInvalidText = true }
                    append(HPACKHeader(field.name, field.value), octets: facts.name + facts.value, checked: facts.clean, to: &result)
                } else {
                    let field = try entry(at: fieldIndex)
                    append(HPACKHeader(field.name, field.value), octets: nil, checked: true, to: &result)
                }
            } else if first & 0xE0 == 0x20 {
                guard atStart else { throw .tableSizeUpdateNotAtStart }
                let size = try HPACKInteger.decode(bytes, at: &index, prefixBits: 5)
                guard size <= maximumTableSize else { throw .tableSizeUpdateTooLarge(requested: size, maximum: maximumTableSize) }
                table.resize(to: size)
                requiresSizeUpdate = false
                continue
            } else {
                let prefixBits = first & 0xC0 == 0x40 ? 6 : 4
                let nameIndex = try HPACKInteger.decode(bytes, at: &index, prefixBits: prefixBits)
                let name: String
                let nameOctets: Int
                var invalidName = false, invalidValue = false
                if nameIndex == 0 {
                    (name, nameOctets) = try Self.string(bytes, at: &index, scratch: &scratch, invalid: &invalidName)
                } else {
                    name = try entry(at: nameIndex).name
                    if nameIndex > HPACKStaticTable.count, let facts = table.facts(at: nameIndex - HPACKStaticTable.count) {
                        nameOctets = facts.name
                        invalidName = facts.invalidName
                    } else {
                        nameOctets = name.utf8.count
                    }
                }
                let (value, valueOctets) = try value(bytes, at: &index, position: position, invalid: &invalidValue)
                if invalidName || invalidValue { result.hasInvalidText = true }
                // Sizes in the peer's octets, so both tables evict alike (RFC 7541 §4.1).
                // An entry's characters are checked once, when it is added; text that was not
                // UTF-8 is never clean (the entry holds its repair) and is remembered as such.
                if prefixBits == 6 {
                    let clean = !invalidName && !invalidValue && HTTP2HeaderValidation.charactersAreClean(name: name, value: value)
                    table.add(name: name, value: value, nameOctets: nameOctets, valueOctets: valueOctets, clean: clean,
                              invalidName: invalidName, invalidValue: invalidValue)
                }
                append(HPACKHeader(name, value, indexing: first & 0xF0 == 0x10 ? .never : .automatic), octets: nameOctets + valueOctets,
                       checked: false, to: &result)
            }
            if atStart {
                atStart = false
                if requiresSizeUpdate { throw .missingTableSizeUpdate }
            }
        }
        // An empty block is a block too: the update owed at its start is missing (RFC 7541 §4.2).
        if atStart, requiresSizeUpdate { throw .missingTableSizeUpdate }
        if result.isTooLarge { result.headers = []; result.checkedFields = 0 }
        if remembersBlocks, table.changes == tableChanges {
            blocks.remember(bytes, as: result, matched: match, tableChanges: tableChanges, listLimit: maximumHeaderListSize)
        }
        return result
    }

    /// Blocks read lately without a change to the table, reused when they come again.
    private var blocks = DecodedBlockMemory()
    /// Whether blocks are remembered (tests turn it off to compare).
    var remembersBlocks = true
    /// Fields taken from blocks read before (tests check it is used).
    var fieldsReusedFromEarlierBlocks: Int { blocks.fieldsReused }

    /// Appends a field; `octets` is its name and value length on the wire when known,
    /// `checked` whether it came from a table entry whose characters passed the field checks.
    private func append(_ header: HPACKHeader, octets: Int?, checked: Bool, to result: inout Block) {
        result.listSize += octets.map { $0 + 32 } ?? header.size
        if result.listSize > maximumHeaderListSize {
            result.isTooLarge = true
        }
        guard !result.isTooLarge else { return }
        if checked, result.headers.count < 64 { result.checkedFields |= 1 << UInt64(result.headers.count) }
        result.headers.append(header)
    }

    private func entry(at index: Int) throws(HPACKError) -> HPACKFieldKey {
        if index >= 1, index <= HPACKStaticTable.count {
            let entry = HPACKStaticTable.entries[index - 1]
            return HPACKFieldKey(name: entry.name, value: entry.value)
        }
        guard let entry = table[index - HPACKStaticTable.count] else { throw .invalidIndex(index) }
        return entry
    }

    /// Reads a value's string literal, reusing the last one read at `position` when the peer
    /// sent the same Huffman-coded bytes.
    private mutating func value(_ bytes: UnsafeRawBufferPointer, at index: inout Int, position: Int,
                                invalid: inout Bool) throws(HPACKError) -> (text: String, octets: Int) {
        guard position < Self.recentPositions, index < bytes.count, bytes[index] & 0x80 != 0 else {
            return try Self.string(bytes, at: &index, scratch: &scratch, invalid: &invalid)
        }
        var end = index
        let length = try HPACKInteger.decode(bytes, at: &end, prefixBits: 7)
        guard length <= bytes.count - end else { throw .truncated }
        let coded = UnsafeRawBufferPointer(rebasing: bytes[end..<end + length])
        if position < recentValues.count, recentValues[position].coded.count == length,
           recentValues[position].coded.withUnsafeBytes({ length == 0 || memcmp($0.baseAddress!, coded.baseAddress!, length) == 0 }) {
            index = end + length
            if recentValues[position].invalid { invalid = true }
            return (recentValues[position].text, recentValues[position].octets)
        }
        var wasInvalid = false
        let read = try Self.string(bytes, at: &index, scratch: &scratch, invalid: &wasInvalid)
        if wasInvalid { invalid = true }
        if length <= Self.recentValueLimit {
            while recentValues.count <= position { recentValues.append(([], "", 0, false)) }
            // In place: the entry's buffer is reused, so a miss allocates nothing once warm.
            recentValues[position].coded.removeAll(keepingCapacity: true)
            recentValues[position].coded.append(contentsOf: coded)
            recentValues[position].text = read.text
            recentValues[position].octets = read.octets
            recentValues[position].invalid = wasInvalid
        }
        return read
    }

    /// Reads a string literal (RFC 7541 §5.2).
    private static func string(_ bytes: UnsafeRawBufferPointer, at index: inout Int, scratch: inout [UInt8],
                        invalid: inout Bool) throws(HPACKError) -> (text: String, octets: Int) {
        guard index < bytes.count else { throw .truncated }
        let huffman = bytes[index] & 0x80 != 0
        let length = try HPACKInteger.decode(bytes, at: &index, prefixBits: 7)
        guard length <= bytes.count - index else { throw .truncated }
        let raw = UnsafeRawBufferPointer(rebasing: bytes[index..<index + length])
        index += length
        if huffman {
            // No code is shorter than five bits, which bounds the output by the input. Within
            // a block the scratch only grows (its bytes are written before they are read), so a
            // warm decoder decodes in place; above 4 KiB it is released after the block.
            let most = HuffmanCoding.maximumDecodedLength(of: length)
            if scratch.count < most { scratch.append(contentsOf: repeatElement(0, count: most - scratch.count)) }
            var decoded: Result<Int, HPACKError> = .success(0)
            scratch.withUnsafeMutableBufferPointer { buffer in
                decoded = Result { () throws(HPACKError) in try HuffmanCoding.decode(raw, into: UnsafeMutableBufferPointer(rebasing: buffer[..<most])) }
            }
            let written = try decoded.get()
            return (scratch.withUnsafeBytes { Self.text(UnsafeRawBufferPointer(rebasing: $0[..<written]), invalid: &invalid) }, written)
        }
        return (Self.text(raw, invalid: &invalid), length)
    }

    /// The bytes as a String, noting when they are not UTF-8 (the String then repairs them).
    private static func text(_ bytes: UnsafeRawBufferPointer, invalid: inout Bool) -> String {
        let string = String(decoding: bytes, as: UTF8.self)
        if !bytes.allSatisfy({ $0 < 0x80 }) && !string.utf8.elementsEqual(bytes) { invalid = true }
        return string
    }
}
