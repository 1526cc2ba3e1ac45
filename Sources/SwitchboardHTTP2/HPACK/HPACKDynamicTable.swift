/// HPACK's dynamic table (RFC 7541 §2.3.2, §4): newest entry first, bounded by the size of
/// its entries (name + value + 32 octets each), oldest evicted first.
///
/// Entries sit in a ring, so adding and evicting cost O(1). The encoder's lookups go through
/// maps from a field (and from a name) to the insertion number of its newest copy, which
/// turns into an index without a scan.
struct HPACKDynamicTable {
    /// The size limit in force.
    private(set) var maximumSize: Int
    /// The size of the entries held.
    private(set) var size = 0

    private var ring: [HPACKFieldKey?] = []
    /// Each slot's name and value length in octets as they came on the wire, which is what
    /// the peer counts: text that was not UTF-8 is held repaired (longer), and counting the
    /// repair would evict earlier than the peer's encoder and lose the tables' agreement.
    /// With it, whether the entry's characters passed HTTP/2's field checks when it was added
    /// (``HTTP2HeaderValidation/charactersAreClean(name:value:)``), so a field that refers to
    /// it need not be checked again, and whether its name or value was not UTF-8 (held
    /// repaired), which every field that refers to it must report.
    private var octets: [Facts] = []

    /// What the table keeps about an entry beside its text.
    struct Facts {
        var name: Int
        var value: Int
        var clean = false
        var invalidName = false
        var invalidValue = false
    }
    /// Where the oldest entry sits in `ring`.
    private var oldest = 0
    private(set) var count = 0
    /// How many entries were ever added: the insertion number of the next.
    private var insertions = 0
    /// How many times the table was changed (an entry added, or the table emptied or resized):
    /// a block written or read while this stays the same means the same thing again.
    private(set) var changes = 0
    /// Whether to keep the lookup maps (the encoder's table), not needed to decode.
    private let keepsLookups: Bool
    private var newestWithField: [HPACKFieldKey: Int] = [:]
    private var newestWithName: [HPACKNameKey: Int] = [:]

    init(maximumSize: Int, keepsLookups: Bool) {
        self.maximumSize = maximumSize
        self.keepsLookups = keepsLookups
    }

    /// The entry at a dynamic index: 1 is the newest.
    subscript(index: Int) -> HPACKFieldKey? {
        guard index >= 1, index <= count else { return nil }
        return ring[slot(ofInsertion: insertions - index)]
    }

    /// Whether the entry at a dynamic index passed the field checks when it was added.
    func isClean(at index: Int) -> Bool {
        facts(at: index)?.clean ?? false
    }

    /// The entry at a dynamic index and what was noted about it, found once.
    func entryAndFacts(at index: Int) -> (field: HPACKFieldKey, facts: Facts)? {
        guard index >= 1, index <= count else { return nil }
        let slot = slot(ofInsertion: insertions - index)
        guard let field = ring[slot] else { return nil }
        return (field, octets[slot])
    }

    /// What was noted about the entry at a dynamic index when it was added.
    func facts(at index: Int) -> Facts? {
        guard index >= 1, index <= count else { return nil }
        return octets[slot(ofInsertion: insertions - index)]
    }

    /// Adds a field, evicting old ones to make room; a field larger than the whole table
    /// empties it and is not added (RFC 7541 §4.4). `nameOctets` and `valueOctets` are the
    /// lengths on the wire when they differ from the text's (text that was not UTF-8);
    /// `clean`, whether its characters passed the field checks; `invalidName` and
    /// `invalidValue`, whether that text was not UTF-8.
    mutating func add(name: String, value: String, nameOctets: Int? = nil, valueOctets: Int? = nil, clean: Bool = false,
                      invalidName: Bool = false, invalidValue: Bool = false) {
        let sizes = Facts(name: nameOctets ?? name.utf8.count, value: valueOctets ?? value.utf8.count, clean: clean,
                          invalidName: invalidName, invalidValue: invalidValue)
        let entrySize = sizes.name + sizes.value + 32
        changes &+= 1
        evict(toFit: maximumSize - entrySize)
        guard entrySize <= maximumSize else { return }
        let key = HPACKFieldKey(name: name, value: value)
        if count == ring.count { grow() }
        octets[(oldest + count) % ring.count] = sizes
        ring[(oldest + count) % ring.count] = key
        count += 1
        size += entrySize
        if keepsLookups {
            newestWithField[key] = insertions
            newestWithName[HPACKNameKey(name)] = insertions
        }
        insertions += 1
    }

    /// Changes the limit, evicting what no longer fits.
    mutating func resize(to newMaximum: Int) {
        changes &+= 1
        maximumSize = newMaximum
        evict(toFit: newMaximum)
    }

    /// The dynamic index of the newest entry with this name and value.
    func index(of key: HPACKFieldKey) -> Int? {
        newestWithField[key].flatMap(liveIndex)
    }

    /// The insertion number of the newest entry with this name and value, while it is held.
    func newestInsertion(of key: HPACKFieldKey) -> Int? {
        newestWithField[key].flatMap { liveIndex(ofInsertion: $0) == nil ? nil : $0 }
    }

    /// The dynamic index of the entry added as insertion number `insertion`, while it is held.
    func index(ofInsertion insertion: Int) -> Int? {
        insertion < insertions ? liveIndex(ofInsertion: insertion) : nil
    }

    /// The dynamic index of the newest entry with this name.
    func index(ofName name: String) -> Int? {
        newestWithName[HPACKNameKey(name)].flatMap(liveIndex)
    }

    private func liveIndex(ofInsertion insertion: Int) -> Int? {
        let index = insertions - insertion
        return index <= count ? index : nil
    }

    private func slot(ofInsertion insertion: Int) -> Int {
        (oldest + (insertion - (insertions - count))) % ring.count
    }

    private mutating func evict(toFit limit: Int) {
        while size > max(limit, 0), count > 0 {
            guard let entry = ring[oldest] else { break }
            size -= octets[oldest].name + octets[oldest].value + 32
            ring[oldest] = nil
            if keepsLookups {
                let insertion = insertions - count
                if newestWithField[entry] == insertion { newestWithField[entry] = nil }
                if newestWithName[HPACKNameKey(entry.name)] == insertion { newestWithName[HPACKNameKey(entry.name)] = nil }
            }
            oldest = (oldest + 1) % ring.count
            count -= 1
        }
        if count == 0 { oldest = 0 }
    }

    /// Doubles the ring, oldest entry first.
    private mutating func grow() {
        var larger = [HPACKFieldKey?](repeating: nil, count: max(8, ring.count * 2))
        var largerOctets = [Facts](repeating: Facts(name: 0, value: 0), count: larger.count)
        for offset in 0..<count {
            larger[offset] = ring[(oldest + offset) % ring.count]
            largerOctets[offset] = octets[(oldest + offset) % ring.count]
        }
        ring = larger
        octets = largerOctets
        oldest = 0
    }
}
