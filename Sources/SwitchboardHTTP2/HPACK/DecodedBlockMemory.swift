/// The last header blocks a decoder read without a change to its dynamic table, with what
/// each of their fields decoded to.
///
/// A peer sends the same blocks call after call (a server's answer and trailers; a client's
/// request, whole while its `grpc-timeout` repeats, up to it otherwise). Decoding is a function of the block's bytes and the
/// table, so while the table is unchanged the same leading bytes decode to the same leading
/// fields: those are taken from memory and only the rest is decoded. A block that changed the
/// table is never remembered (reading it again would change the table again).
///
/// Bounded: ``capacity`` blocks of at most ``fieldLimit`` fields and ``byteLimit`` encoded
/// bytes; the decoded strings they keep alive are at most a dynamic table's worth per block
/// (a one-byte index can name an entry as large as the table this end allows).
struct DecodedBlockMemory {
    static let capacity = 4
    static let fieldLimit = 32
    static let byteLimit = 512

    /// Where a field ended and what the list amounted to with it.
    struct FieldMark {
        /// The field's last byte, plus one, from the block's start.
        var end: Int
        /// The list's size with this field.
        var listSize: Int
        /// Whether this field or one before it was not UTF-8.
        var invalidSoFar: Bool
    }

    private struct Entry {
        var bytes: [UInt8]
        var block: HPACKDecoder.Block
        var marks: [FieldMark]
        /// The table's ``HPACKDynamicTable/changes`` when it was read.
        var tableChanges: Int
        /// The header list limit then in force.
        var listLimit: Int
    }

    /// How a block matched what is remembered.
    struct Match {
        fileprivate var entry: Int
        /// How many leading fields it shares.
        var fields: Int
        /// Where the shared fields end.
        var sharedBytes: Int
        /// Whether it is the whole remembered block, byte for byte.
        var isWhole: Bool
    }

    private var remembered = OldestReplacedList<Entry>(capacity: capacity)
    /// The marks of the block being read (the first `scratchCount`), kept to spare an
    /// allocation per block.
    private var scratchMarks: [FieldMark] = []
    private var scratchCount = 0
    /// Whether the block being read is noted, to be remembered.
    private var isNoting = false
    /// Fields taken from memory so far (tests check it is used).
    private(set) var fieldsReused = 0

    /// The remembered block sharing the most leading fields with `bytes`, read while the
    /// table stood at `tableChanges` under the same list limit.
    func longestMatch(for bytes: UnsafeRawBufferPointer, tableChanges: Int, listLimit: Int) -> Match? {
        var best: Match?
        for entryIndex in remembered.elements.indices where remembered.elements[entryIndex].tableChanges == tableChanges && remembered.elements[entryIndex].listLimit == listLimit {
            let sameBytes = remembered.elements[entryIndex].bytes.withUnsafeBytes { Self.commonPrefixLength($0, bytes) }
            if sameBytes == bytes.count, sameBytes == remembered.elements[entryIndex].bytes.count {
                return Match(entry: entryIndex, fields: remembered.elements[entryIndex].marks.count, sharedBytes: sameBytes, isWhole: true)
            }
            var shared = 0
            while shared < remembered.elements[entryIndex].marks.count, remembered.elements[entryIndex].marks[shared].end <= sameBytes { shared += 1 }
            if shared > (best?.fields ?? 0) {
                best = Match(entry: entryIndex, fields: shared, sharedBytes: remembered.elements[entryIndex].marks[shared - 1].end, isWhole: false)
            }
        }
        return best
    }

    /// The whole remembered block of a match that ``Match/isWhole``.
    mutating func block(of match: Match) -> HPACKDecoder.Block {
        fieldsReused &+= match.fields
        return remembered.elements[match.entry].block
    }

    /// Puts the match's shared fields into `result`; the rest of the block starts at
    /// ``Match/sharedBytes``.
    mutating func takeShared(_ match: Match, into result: inout HPACKDecoder.Block) {
        let mark = remembered.elements[match.entry].marks[match.fields - 1]
        // One at a time: appending the buffer copied each field through the runtime's generic
        // array copy, three times the cost of these inlined copies.
        remembered.elements[match.entry].block.headers.withUnsafeBufferPointer { fields in
            for index in 0..<match.fields { result.headers.append(fields[index]) }
        }
        result.listSize = mark.listSize
        result.hasInvalidText = mark.invalidSoFar
        let mask: UInt64 = match.fields >= 64 ? ~0 : (1 << UInt64(match.fields)) - 1
        result.checkedFields = remembered.elements[match.entry].block.checkedFields & mask
        fieldsReused &+= match.fields
    }

    /// Starts noting the fields of a block, those after any it shares with one remembered.
    mutating func beginBlock() {
        scratchCount = 0
        isNoting = true
    }

    /// Notes a field of the block being read.
    @inline(__always)
    mutating func fieldEnded(_ mark: FieldMark) {
        guard isNoting else { return }
        guard scratchCount < Self.fieldLimit else {
            isNoting = false
            return
        }
        if scratchCount < scratchMarks.count {
            scratchMarks[scratchCount] = mark
        } else {
            scratchMarks.append(mark)
        }
        scratchCount += 1
    }

    /// Remembers the block just read, if its fields were all noted and it is within the
    /// bounds, in the place of the oldest entry. A block that shares at least half its fields
    /// with the one it `matched` is not remembered: that one serves it as well, and a steady
    /// stream of requests that differ only in their last fields then costs no copying.
    mutating func remember(_ bytes: UnsafeRawBufferPointer, as block: HPACKDecoder.Block, matched match: Match?, tableChanges: Int, listLimit: Int) {
        let shared = match?.fields ?? 0
        guard isNoting, !block.isTooLarge, 2 * shared < block.headers.count, block.headers.count <= Self.fieldLimit,
              bytes.count <= Self.byteLimit, shared + scratchCount == block.headers.count else { return }
        isNoting = false
        var marks: [FieldMark] = []
        marks.reserveCapacity(block.headers.count)
        if let match { marks += remembered.elements[match.entry].marks[0..<shared] }
        scratchMarks.withUnsafeBufferPointer { marks += UnsafeBufferPointer(start: $0.baseAddress, count: scratchCount) }
        var kept = block
        kept.checkedFields = Self.cleanFields(of: block)
        let entry = Entry(bytes: Array(bytes), block: kept, marks: marks, tableChanges: tableChanges, listLimit: listLimit)
        remembered.insert(entry)
    }

    /// The block's checked fields, with its literals' characters checked now: a block is
    /// remembered once and reused many times, so fields it shares later (a never-indexed
    /// `authorization`, say) are not checked again on every request. A block holding repaired
    /// text (not UTF-8) gains nothing, since its repair could pass for clean text.
    static func cleanFields(of block: HPACKDecoder.Block) -> UInt64 {
        var checked = block.checkedFields
        guard !block.hasInvalidText else { return checked }
        for index in 0..<min(block.headers.count, 64) where checked & (1 << UInt64(index)) == 0 {
            if HTTP2HeaderValidation.charactersAreClean(name: block.headers[index].name, value: block.headers[index].value) {
                checked |= 1 << UInt64(index)
            }
        }
        return checked
    }

    /// How many leading bytes both hold alike, compared a word at a time.
    static func commonPrefixLength(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
        let count = min(a.count, b.count)
        var offset = 0
        while offset + 8 <= count {
            // Little-endian order puts the first differing byte in the lowest differing bits.
            let difference = UInt64(littleEndian: a.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
                ^ UInt64(littleEndian: b.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            if difference != 0 { return offset + difference.trailingZeroBitCount / 8 }
            offset += 8
        }
        while offset < count, a[offset] == b[offset] { offset += 1 }
        return offset
    }
}
