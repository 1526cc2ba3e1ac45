import SwitchboardHTTPSyntax

/// The last header lists an encoder wrote without changing its dynamic table, with the bytes
/// it wrote for each field.
///
/// A connection sends the same lists call after call: a server's answer and trailers, a
/// client's request (with a `grpc-timeout` that repeats while calls keep the same timeout). While the table is unchanged, the bytes once
/// written for a field mean the same field again (an index still names the same entry; a
/// literal is self-contained), so a list that begins like a remembered one begins with the
/// same bytes, copied instead of encoded field by field. A list that changed the table is
/// never remembered: replaying its insertions would put the peer's table out of step.
///
/// Bounded: ``capacity`` lists of at most ``fieldLimit`` fields and ``byteLimit`` encoded bytes
/// (the lists themselves are the caller's, kept alive until replaced). A list that shares at
/// least half its fields with one remembered is not remembered again, so a steady stream of
/// requests that differ only in their last fields costs no copying.
struct EncodedBlockMemory {
    static let capacity = 4
    static let fieldLimit = 32
    static let byteLimit = 512

    private struct Entry {
        var headers: [HPACKHeader]
        var bytes: [UInt8]
        /// Where each field's bytes end, from the block's start.
        var fieldEnds: [Int]
        /// The table's ``HPACKDynamicTable/changes`` when it was written.
        var tableChanges: Int
    }

    /// How a list matched what is remembered.
    struct Match {
        /// Which entry.
        fileprivate var entry: Int
        /// How many leading fields it shares.
        var fields: Int
    }

    private var remembered = OldestReplacedList<Entry>(capacity: capacity)
    /// Field ends of the list being encoded (the first `scratchCount`), kept to spare an
    /// allocation per list.
    private var scratchEnds: [Int] = []
    private var scratchCount = 0
    /// Whether the list being encoded is noted, to be remembered.
    private var isNoting = false
    /// Fields copied from memory so far (tests check it is used).
    private(set) var fieldsCopied = 0

    /// The remembered list sharing the most leading fields with `headers`, written while the
    /// table stood at `tableChanges`.
    func longestMatch(for headers: [HPACKHeader], tableChanges: Int) -> Match? {
        var best: Match?
        for entryIndex in remembered.elements.indices where remembered.elements[entryIndex].tableChanges == tableChanges {
            let shared = Self.sharedFields(remembered.elements[entryIndex].headers, headers)
            if shared > (best?.fields ?? 0) { best = Match(entry: entryIndex, fields: shared) }
        }
        return best
    }

    /// How many leading fields both lists hold alike. Strings are compared by representation
    /// only (the same storage or the same small-string bits): cheap, and never a false match;
    /// equal strings stored apart merely miss.
    private static func sharedFields(_ remembered: [HPACKHeader], _ headers: [HPACKHeader]) -> Int {
        remembered.withUnsafeBufferPointer { old in
            headers.withUnsafeBufferPointer { new in
                if old.baseAddress == new.baseAddress, old.count == new.count { return new.count }
                var shared = 0
                while shared < old.count, shared < new.count, old[shared].indexing == new[shared].indexing,
                      HTTPSyntax.sameRepresentation(old[shared].name, new[shared].name),
                      HTTPSyntax.sameRepresentation(old[shared].value, new[shared].value) {
                    shared += 1
                }
                return shared
            }
        }
    }

    /// Appends the bytes `match` shares with a remembered list.
    mutating func appendShared(_ match: Match, to output: inout [UInt8]) {
        let end = remembered.elements[match.entry].fieldEnds[match.fields - 1]
        remembered.elements[match.entry].bytes.withUnsafeBufferPointer { output.append(contentsOf: UnsafeBufferPointer(start: $0.baseAddress, count: end)) }
        fieldsCopied &+= match.fields
    }

    /// Starts a list of `count` fields, of which `match` is shared with one remembered. A list
    /// that shares at least half its fields is not noted: the one remembered serves it as well.
    mutating func beginList(count: Int, sharing match: Match?) {
        scratchCount = 0
        isNoting = count <= Self.fieldLimit && match.map { 2 * $0.fields < count } ?? true
        guard isNoting, let match else { return }
        for field in 0..<match.fields { fieldEnded(at: remembered.elements[match.entry].fieldEnds[field]) }
    }

    /// Notes that the current list's next field ends `end` bytes after the block's start.
    @inline(__always)
    mutating func fieldEnded(at end: Int) {
        guard isNoting else { return }
        if scratchCount < scratchEnds.count {
            scratchEnds[scratchCount] = end
        } else {
            scratchEnds.append(end)
        }
        scratchCount += 1
    }

    /// Whether the list being encoded would be remembered, if the table is left unchanged.
    var wouldRemember: Bool { isNoting }

    /// Remembers the list just written in `block` (its bytes from the block's start), if it was
    /// noted and is within the bounds; it takes the place of the oldest entry.
    mutating func remember(_ headers: [HPACKHeader], block: UnsafeBufferPointer<UInt8>, tableChanges: Int) {
        guard isNoting, !headers.isEmpty, block.count <= Self.byteLimit, scratchCount == headers.count else { return }
        isNoting = false
        let ends = scratchEnds.withUnsafeBufferPointer { Array(UnsafeBufferPointer(start: $0.baseAddress, count: scratchCount)) }
        let entry = Entry(headers: headers, bytes: Array(block), fieldEnds: ends, tableChanges: tableChanges)
        remembered.insert(entry)
    }
}
