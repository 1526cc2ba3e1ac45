/// The member names a message's JSON object may use, declared once per generated message so
/// that its decoding is a switch on field positions instead of a chain of name comparisons
/// (which made the generated code several times larger to compile).
///
/// Protobuf's JSON parsers accept each field under its JSON name and under its schema name;
/// both map to the field's position in the schema (its declaration order).
// Unchecked: the buffers are written once, in `init`, and only read after.
public final class JSONFieldNames: @unchecked Sendable {
    /// The fully qualified message name, for errors.
    public let messageName: String
    /// How many fields the names cover; oneofs are tracked at positions after them.
    public let fieldCount: Int
    /// The names' bytes, as `init` received them.
    let text: UnsafeMutablePointer<UInt8>
    /// Per name, in field order: where its bytes start, how many, and the field's position.
    let entries: UnsafeMutableBufferPointer<Entry>
    /// Open addressing over `entries` by a hash of the name's bytes; `-1` is an empty slot.
    /// Plain buffers rather than arrays: the lookup runs once per member of every object.
    let slots: UnsafeMutableBufferPointer<Int>

    struct Entry {
        let start: Int
        let count: Int
        let position: Int
    }

    /// Reads `fields`: each field's JSON name in schema order, separated by one space; a field
    /// whose schema name differs from its JSON name is followed by a tab and that name. (JSON
    /// names in a schema may hold any character but a space or a tab, and are never empty, so
    /// neither separator is in a name.)
    /// The generator writes this text; text it would not write (empty names, a name twice)
    /// gives a table that routes members wrongly.
    public init(message: String, fields: String) {
        messageName = message
        let bytes = Array(fields.utf8)
        var list: [Entry] = []
        var position = 0
        var start = 0
        for index in 0...bytes.count {
            let separator: UInt8? = index < bytes.count ? bytes[index] : nil
            guard separator == nil || separator == 0x20 || separator == 0x09 else { continue }
            if index > start { list.append(Entry(start: start, count: index - start, position: position)) }
            if separator != 0x09 { position += 1 }
            start = index + 1
        }
        fieldCount = bytes.isEmpty ? 0 : position
        text = .allocate(capacity: max(bytes.count, 1))
        text.initialize(from: bytes, count: bytes.count)
        entries = .allocate(capacity: list.count)
        _ = entries.initialize(from: list)
        var capacity = 8
        while capacity < list.count * 2 { capacity *= 2 }
        slots = .allocate(capacity: capacity)
        slots.initialize(repeating: -1)
        for (index, entry) in list.enumerated() {
            var slot = Self.hash(UnsafeRawBufferPointer(start: text + entry.start, count: entry.count)) & (capacity - 1)
            while slots[slot] != -1 { slot = (slot + 1) & (capacity - 1) }
            slots[slot] = index
        }
    }

    deinit {
        text.deallocate()
        entries.deallocate()
        slots.deallocate()
    }

    /// FNV-1a: names are short, and a table built from the schema needs no seed.
    static func hash(_ bytes: UnsafeRawBufferPointer) -> Int {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return Int(truncatingIfNeeded: hash ^ (hash >> 32))
    }

    /// The position of the field `name` names, or `nil` for a name the message does not know.
    public func position(of name: JSONName) -> Int? {
        entryIndex(of: name, expected: 0).map { entries[$0].position }
    }

    /// The entry `name` matches, trying `expected` first: objects usually list their members
    /// in field order, so the entry after the last match is most often the next one.
    func entryIndex(of name: JSONName, expected: Int) -> Int? {
        if let pointer = name.pointer {
            return entryIndex(of: UnsafeRawBufferPointer(start: pointer, count: name.count), expected: expected)
        }
        return name.unescaped!.withUnsafeBytes { entryIndex(of: $0, expected: expected) }
    }

    func entryIndex(of candidate: UnsafeRawBufferPointer, expected: Int) -> Int? {
        // Members usually come in field order, some left out: a few entries forward first,
        // where a length that differs rules one out at once.
        var index = max(expected, 0)
        while index < entries.count && index < expected + 8 {
            if matches(index, candidate) { return index }
            index += 1
        }
        var slot = Self.hash(candidate) & (slots.count - 1)
        while true {
            let index = slots[slot]
            if index < 0 { return nil }
            if matches(index, candidate) { return index }
            slot = (slot + 1) & (slots.count - 1)
        }
    }

    @inline(__always)
    func matches(_ index: Int, _ candidate: UnsafeRawBufferPointer) -> Bool {
        let entry = entries[index]
        guard entry.count == candidate.count else { return false }
        guard let other = candidate.baseAddress else { return entry.count == 0 }
        // Names are short: eight bytes at a time beats a call to `memcmp`.
        let own = UnsafeRawPointer(text + entry.start)
        var offset = 0
        while offset + 8 <= entry.count {
            if own.loadUnaligned(fromByteOffset: offset, as: UInt64.self) != other.loadUnaligned(fromByteOffset: offset, as: UInt64.self) { return false }
            offset += 8
        }
        while offset < entry.count {
            if own.load(fromByteOffset: offset, as: UInt8.self) != other.load(fromByteOffset: offset, as: UInt8.self) { return false }
            offset += 1
        }
        return true
    }

    /// The field position of entry `index`.
    func position(ofEntry index: Int) -> Int { entries[index].position }

    /// The name of entry `index`: the member's name (unescaped) when it matched.
    func name(ofEntry index: Int) -> String {
        guard entries.indices.contains(index) else { return "" }
        let entry = entries[index]
        return String(decoding: UnsafeBufferPointer(start: text + entry.start, count: entry.count), as: UTF8.self)
    }
}
