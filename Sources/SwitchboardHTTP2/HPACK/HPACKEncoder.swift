/// Encodes header lists as HPACK blocks (RFC 7541) for one connection.
///
/// Fields already in a table go out as an index; others as literals, added to the dynamic
/// table when they are likely to repeat and small enough to be worth it. Secrets (fields
/// marked ``HPACKHeader/Indexing/never``, and `authorization`, `cookie` and the like) are
/// never indexed. A string is Huffman-coded when that is shorter, except `grpc-timeout`'s name
/// and value and `content-length`'s value (they may change from one request to the next:
/// coding and decoding them costs more than the octets saved), unless Huffman coding is
/// ``HuffmanUse/always``.
public struct HPACKEncoder: Sendable {
    /// When strings are Huffman-coded.
    public enum HuffmanUse: Sendable, Hashable {
        /// When that is shorter (the default), but for per-request numbers (see the type).
        case whenShorter
        /// Always.
        case always
        /// Never.
        case never
    }

    /// The largest table this encoder uses, whatever the peer allows.
    public let tableSizeCap: Int
    /// When strings are Huffman-coded.
    public let huffman: HuffmanUse
    /// Whether every field that is not a secret goes into the table, whatever its name and
    /// size (as RFC 7541's examples do); by default per-request values and large ones do not.
    public let indexesEverything: Bool
    private var table: HPACKDynamicTable
    /// Table size changes to announce at the start of the next block: the smallest since the
    /// last block, then the final one (RFC 7541 §4.2).
    private var pendingSmallest: Int?
    private var pendingFinal: Int?
    /// For the first positions of a header list, the last two fields found in a table there
    /// and where: a connection sends the same fields in the same places call after call
    /// (often the same strings), so comparing with the ones found there saves hashing the
    /// name and value. Two per position, because a server's response headers and trailers
    /// alternate through the same positions. An entry still held keeps its meaning, so its
    /// index is right whatever was added since. Entry `2p` is the newer at position `p`.
    private var recentFields: [(key: HPACKFieldKey, found: Found)] = []
    private static let recentPositions = 16
    /// Fields written from that memory so far (tests check it is used).
    private(set) var recentFieldHits = 0
    /// For the same positions, the last Huffman-coded value written there as a literal and
    /// its encoding: a secret that is never indexed (a call's `authorization`) repeats call
    /// after call, and copying its encoding costs far less than coding it again.
    private var recentLiterals: [(value: String?, encoded: [UInt8])] = []
    /// Values longer than this are coded each time rather than kept.
    private static let recentLiteralLimit = 256

    /// Where a field was last found.
    private enum Found {
        /// In the dynamic table, by insertion number: still right while the entry is held.
        case dynamic(insertion: Int)
        /// In the static table, which never changes.
        case staticField(index: Int)
    }

    /// Names whose values are secrets, with the static table's index of each. (By length,
    /// then one comparison: it is asked for every field, and most names have none of these
    /// lengths. The index spares a table lookup of the name on every call that carries one.)
    static func neverIndexedNameIndex(_ name: String) -> Int? {
        switch name.utf8.count {
        case 13: name == "authorization" ? 23 : nil
        case 19: name == "proxy-authorization" ? 49 : nil
        case 6: name == "cookie" ? 32 : nil
        case 10: name == "set-cookie" ? 55 : nil
        default: nil
        }
    }

    /// The position of `name` in ``unindexedNames``, if its values change with every request.
    private static func unindexedSlot(_ name: String) -> Int? {
        switch name.utf8.count {
        case 12: name == "grpc-timeout" ? 0 : name == "grpc-message" ? 1 : nil
        case 14: name == "content-length" ? 2 : nil
        case 4: name == "date" ? 3 : nil
        case 23: name == "grpc-status-details-bin" ? 4 : nil
        default: nil
        }
    }

    private static let unindexedNames = ["grpc-timeout", "grpc-message", "content-length", "date", "grpc-status-details-bin"]

    /// Whether the name in `slot` of ``unindexedNames``, and its values, go uncoded (unless Huffman
    /// is used ``HuffmanUse/always``): a few digits and a unit, new on every request, save a
    /// byte or two coded, while coding them here and decoding them at the peer cost more
    /// than the rest of the field (about 900 instructions a call of a gRPC client).
    private static func sendsRawValues(slot: Int) -> Bool {
        slot == 0 || slot == 2
    }

    /// How this encoder writes each of ``unindexedNames``: the static table's index of the
    /// name, or 0 and the name as a literal, coded once.
    private struct UnindexedName {
        let staticIndex: Int
        let literal: [UInt8]
    }

    private var unindexedNameEncodings: [UnindexedName] = []

    /// Creates an encoder; the table starts at HTTP/2's initial 4,096 octets (or the cap).
    public init(tableSizeCap: Int = 4096, huffman: HuffmanUse = .whenShorter, indexesEverything: Bool = false) {
        self.tableSizeCap = tableSizeCap
        self.huffman = huffman
        self.indexesEverything = indexesEverything
        table = HPACKDynamicTable(maximumSize: min(4096, tableSizeCap), keepsLookups: true)
        if tableSizeCap < 4096 { pendingFinal = tableSizeCap; pendingSmallest = tableSizeCap }
        unindexedNameEncodings = Self.unindexedNames.enumerated().map { slot, name in
            let staticIndex = HPACKStaticTable.indexOfName[HPACKNameKey(name)] ?? 0
            var literal: [UInt8] = []
            // A name sent with every request is sent as it is, like its value: decoding it
            // at the peer on every call cost more than the three octets coding saves.
            if staticIndex == 0 { encodeString(name, into: &literal, coding: huffman == .always || !Self.sendsRawValues(slot: slot)) }
            return UnindexedName(staticIndex: staticIndex, literal: literal)
        }
    }

    /// The peer's SETTINGS_HEADER_TABLE_SIZE changed: the encoder uses at most that (and its cap).
    public mutating func setPeerMaximumTableSize(_ size: Int) {
        let effective = min(size, tableSizeCap)
        guard effective != (pendingFinal ?? table.maximumSize) else { return }
        pendingSmallest = min(pendingSmallest ?? effective, effective)
        pendingFinal = effective
    }

    /// The dynamic table's current size and limit.
    public var dynamicTableSize: (size: Int, maximum: Int) { (table.size, table.maximumSize) }

    /// Appends the block for `headers`.
    public mutating func encode(_ headers: [HPACKHeader], into output: inout [UInt8]) {
        if let final = pendingFinal {
            if let smallest = pendingSmallest, smallest < final {
                HPACKInteger.encode(smallest, prefixBits: 5, flags: 0x20, into: &output)
                table.resize(to: smallest)
            }
            HPACKInteger.encode(final, prefixBits: 5, flags: 0x20, into: &output)
            table.resize(to: final)
            pendingFinal = nil
            pendingSmallest = nil
        }
        let tableChanges = table.changes
        let match = remembersBlocks ? blocks.longestMatch(for: headers, tableChanges: tableChanges) : nil
        let start = output.count
        if let match {
            blocks.appendShared(match, to: &output)
            if match.fields == headers.count { return }
        }
        // A literal is at most its name, its value and a few bytes of prefix; appending a
        // byte at a time from empty reallocated the block about seven times. (By position in
        // the buffer: iterating copied each field.)
        headers.withUnsafeBufferPointer { fields in
            var bound = 0
            for index in (match?.fields ?? 0)..<fields.count { bound += fields[index].name.utf8.count + fields[index].value.utf8.count + 12 }
            output.reserveGrowing(bound)
        }
        blocks.beginList(count: headers.count, sharing: match)
        for position in (match?.fields ?? 0)..<headers.count {
            encode(headers[position], at: position, into: &output)
            blocks.fieldEnded(at: output.count - start)
        }
        guard remembersBlocks, blocks.wouldRemember, table.changes == tableChanges, output.count > start else { return }
        output.withUnsafeBufferPointer { written in
            blocks.remember(headers, block: UnsafeBufferPointer(start: written.baseAddress! + start, count: written.count - start),
                            tableChanges: tableChanges)
        }
    }

    /// Lists written lately without changing the table, copied when they come again.
    private var blocks = EncodedBlockMemory()
    /// Whether lists are remembered (tests turn it off to see the per-field memory alone).
    var remembersBlocks = true
    /// Fields copied from lists written before (tests check it is used).
    var fieldsCopiedFromEarlierBlocks: Int { blocks.fieldsCopied }

    // Inlined into its one caller: called out of line, each field was copied for the call
    // (a retain and release of both strings, about 170 instructions a field).
    @inline(__always)
    private mutating func encode(_ header: HPACKHeader, at position: Int, into output: inout [UInt8]) {
        // A field remembered at this position was no secret when it was found (a secret
        // name is never remembered), so the memory is asked before the secret names.
        if header.indexing != .never, encodeRecent(header, at: position, into: &output) { return }
        let secretNameIndex = indexesEverything ? nil : Self.neverIndexedNameIndex(header.name)
        let secret = header.indexing == .never || secretNameIndex != nil
        if let secretNameIndex {
            HPACKInteger.encode(secretNameIndex, prefixBits: 4, flags: 0x10, into: &output)
            encodeValue(header.value, at: position, into: &output)
            return
        }
        // A name whose values may change from one request to the next (`grpc-timeout`) never enters this
        // encoder's table unless it indexes everything, so neither the field nor the name is
        // looked up there (two hashes): the name goes as its static index, or as a literal
        // coded when the encoder was made.
        // (A secret one, such as a client's `grpc-timeout`, goes the same way, flagged never
        // indexed.)
        if !indexesEverything, let slot = Self.unindexedSlot(header.name) {
            let name = unindexedNameEncodings[slot]
            HPACKInteger.encode(name.staticIndex, prefixBits: 4, flags: secret ? 0x10 : 0x00, into: &output)
            if name.staticIndex == 0 { output.append(contentsOf: name.literal) }
            if huffman != .always, Self.sendsRawValues(slot: slot) {
                encodeString(header.value, into: &output, coding: false)
            } else {
                encodeValue(header.value, at: position, into: &output)
            }
            return
        }
        let key = HPACKFieldKey(name: header.name, value: header.value)
        if !secret {
            // Only pseudo-headers and accept-encoding have values in the static table, so
            // other fields skip hashing their name and value against it.
            let staticIndex = header.name.utf8.first == UInt8(ascii: ":") || header.name == "accept-encoding" ? HPACKStaticTable.indexOfField[key] : nil
            if let staticIndex {
                remember(key, .staticField(index: staticIndex), at: position)
                HPACKInteger.encode(staticIndex, prefixBits: 7, flags: 0x80, into: &output)
                return
            }
            if let insertion = table.newestInsertion(of: key), let index = table.index(ofInsertion: insertion) {
                remember(key, .dynamic(insertion: insertion), at: position)
                HPACKInteger.encode(index + HPACKStaticTable.count, prefixBits: 7, flags: 0x80, into: &output)
                return
            }
        }
        let nameIndex = HPACKStaticTable.indexOfName[HPACKNameKey(header.name)] ?? table.index(ofName: header.name).map { $0 + HPACKStaticTable.count } ?? 0
        // (Per-request names never get here unless the encoder indexes everything.)
        let indexes = !secret && (indexesEverything || header.size <= table.maximumSize / 2)
        if secret {
            HPACKInteger.encode(nameIndex, prefixBits: 4, flags: 0x10, into: &output)
        } else if indexes {
            HPACKInteger.encode(nameIndex, prefixBits: 6, flags: 0x40, into: &output)
        } else {
            HPACKInteger.encode(nameIndex, prefixBits: 4, flags: 0x00, into: &output)
        }
        if nameIndex == 0 { encodeString(header.name, into: &output) }
        encodeValue(header.value, at: position, into: &output)
        if indexes { table.add(name: header.name, value: header.value) }
    }

    /// Writes `header` as an index when it is one of the fields last found at `position`
    /// and still in its table.
    private mutating func encodeRecent(_ header: HPACKHeader, at position: Int, into output: inout [UInt8]) -> Bool {
        guard 2 * position < recentFields.count else { return false }
        for slot in 2 * position ..< 2 * position + 2
        where HPACKBytes.equal(recentFields[slot].key.name, header.name) && HPACKBytes.equal(recentFields[slot].key.value, header.value) {
            switch recentFields[slot].found {
            case let .staticField(index):
                HPACKInteger.encode(index, prefixBits: 7, flags: 0x80, into: &output)
            case let .dynamic(insertion):
                guard let index = table.index(ofInsertion: insertion) else { return false }
                HPACKInteger.encode(index + HPACKStaticTable.count, prefixBits: 7, flags: 0x80, into: &output)
            }
            recentFieldHits &+= 1
            return true
        }
        return false
    }

    private mutating func remember(_ key: HPACKFieldKey, _ found: Found, at position: Int) {
        guard position < Self.recentPositions else { return }
        while recentFields.count <= 2 * position + 1 { recentFields.append((HPACKFieldKey(name: "", value: ""), .dynamic(insertion: -1))) }
        // The newer one becomes the older; the older one goes.
        recentFields[2 * position + 1] = recentFields[2 * position]
        recentFields[2 * position] = (key, found)
    }

    /// A literal value, copied from the last one written at `position` when it is the same.
    private mutating func encodeValue(_ value: String, at position: Int, into output: inout [UInt8]) {
        guard position < Self.recentPositions else { return encodeString(value, into: &output) }
        if position < recentLiterals.count, let kept = recentLiterals[position].value, HPACKBytes.equal(kept, value) {
            output.append(contentsOf: recentLiterals[position].encoded)
            return
        }
        let start = output.count
        encodeString(value, into: &output)
        // Only Huffman-coded values are kept: a raw one is copied as cheaply from the string.
        guard output[start] & 0x80 != 0, output.count - start <= Self.recentLiteralLimit else { return }
        // Padding holds no value: an empty one must not match it (and write nothing).
        while recentLiterals.count <= position { recentLiterals.append((nil, [])) }
        recentLiterals[position].value = value
        // The entry's buffer is taken out and reused, so keeping a value allocates nothing
        // once warm. The bytes are appended from a borrowed buffer: appending `output[start...]`
        // asked the runtime for `Range<Int>`'s metadata on every call (about 330 instructions).
        var kept: [UInt8] = []
        swap(&kept, &recentLiterals[position].encoded)
        kept.removeAll(keepingCapacity: true)
        output.withUnsafeBufferPointer { written in
            kept.append(contentsOf: UnsafeBufferPointer(start: written.baseAddress! + start, count: written.count - start))
        }
        swap(&kept, &recentLiterals[position].encoded)
    }

    /// A string literal (RFC 7541 §5.2); Huffman-coded as ``huffman`` says, unless not `coding`.
    private func encodeString(_ string: String, into output: inout [UInt8], coding: Bool = true) {
        // Native strings lend their bytes; any other is copied once.
        if string.utf8.withContiguousStorageIfAvailable({ encodeString($0, into: &output, coding: coding) }) == nil {
            Array(string.utf8).withUnsafeBufferPointer { encodeString($0, into: &output, coding: coding) }
        }
    }

    private func encodeString(_ bytes: UnsafeBufferPointer<UInt8>, into output: inout [UInt8], coding: Bool) {
        let huffmanLength = huffman == .never || !coding ? Int.max : HuffmanCoding.encodedLength(of: bytes)
        if coding && (huffman == .always || huffmanLength < bytes.count) {
            HPACKInteger.encode(huffmanLength, prefixBits: 7, flags: 0x80, into: &output)
            HuffmanCoding.encode(bytes, encodedLength: huffmanLength, into: &output)
        } else {
            HPACKInteger.encode(bytes.count, prefixBits: 7, flags: 0x00, into: &output)
            output.append(contentsOf: bytes)
        }
    }
}
