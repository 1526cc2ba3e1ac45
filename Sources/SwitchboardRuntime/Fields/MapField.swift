/// Maps (`{K: V}`): each entry is a nested message with the key as field 1 and
/// the value as field 2. Entries are written in key order, so output is deterministic.
public enum MapField<Key: MapKeyCodec, Value: FieldCodec> where Key.Value: Hashable {
    @inlinable
    static func entryPayloadSize(_ key: Key.Value, _ value: Value.Value) -> Int {
        2 + Key.encodedSize(of: key) + Value.encodedSize(of: value)
    }

    /// The size of every entry, tags included.
    @inlinable
    public static func encodedSize(_ map: [Key.Value: Value.Value], tagSize: Int) -> Int {
        var size = map.count * tagSize
        for (key, value) in map {
            size += WireSize.lengthDelimited(entryPayloadSize(key, value))
        }
        return size
    }

    /// Writes every entry under `tag`, in key order.
    ///
    /// An entry's length prefix is fixed once the entry is written, as
    /// ``WireWriter/writeLengthDelimited(_:)`` does for a message: asking a message value for
    /// its size here would walk it again, at every level of nested maps.
    @inlinable
    public static func write(_ map: [Key.Value: Value.Value], tag: UInt32, to writer: inout WireWriter) {
        if map.isEmpty { return }
        let keyTag = UInt8(1 << 3 | Key.wireType.rawValue)
        let valueTag = UInt8(2 << 3 | Value.wireType.rawValue)
        for key in sortedKeys(map) {
            let value = map[key]!
            writer.writeTag(tag)
            let prefixStart = writer.beginLengthPrefix()
            writer.writeByte(keyTag)
            Key.write(key, to: &writer)
            writer.writeByte(valueTag)
            Value.write(value, to: &writer)
            writer.endLengthPrefix(startingAt: prefixStart)
        }
    }

    @inlinable
    static func sortedKeys(_ map: [Key.Value: Value.Value]) -> [Key.Value] {
        map.keys.sorted(by: Key.sortsBefore)
    }

    /// Reads one entry and stores it; a missing key or value takes its default.
    @inlinable
    public static func readEntry(from reader: inout WireReader, into map: inout [Key.Value: Value.Value]) throws(WireDecodingError) {
        let keyTag = UInt32(1 << 3 | UInt32(Key.wireType.rawValue))
        let valueTag = UInt32(2 << 3 | UInt32(Value.wireType.rawValue))
        // The map field's own tag, which an error in a key or value names.
        let mapFieldStart = reader.fieldStart
        let entry = try reader.withLengthDelimited { (inner: inout WireReader) throws(WireDecodingError) -> (Key.Value, Value.Value) in
            var key = Key.defaultValue
            var value = Value.defaultValue
            var ignored = UnknownFields()
            while let tag = try inner.nextTag() {
                let entryFieldStart = inner.fieldStart
                do throws(WireDecodingError) {
                    switch tag.rawValue {
                    case keyTag: key = try Key.read(from: &inner)
                    // A value twice in one entry merges if it is a message, as in protobuf's
                    // parsers; any other value is replaced.
                    case valueTag: try Value.read(from: &inner, mergingInto: &value)
                    default:
                        // A key or value with the wrong wire type is skipped, as protoc's code does.
                        try inner.skipField(tag, into: &ignored)
                    }
                } catch {
                    // A string key or value of invalid UTF-8 names the map field, not its place
                    // in the entry (1 or 2); one inside a message value (a tag read since)
                    // keeps naming that message's field.
                    if case .invalidUTF8 = error, inner.fieldStart == entryFieldStart {
                        throw .invalidUTF8(field: inner.fieldNumber(at: mapFieldStart))
                    }
                    throw error
                }
            }
            return (key, value)
        }
        guard store(entry.1, for: entry.0, in: &map) else { throw .equivalentMapKeys(key: String(describing: entry.0)) }
    }

    /// Stores an entry, the later one winning for a key; false (storing nothing) if the map
    /// holds a key equal to `key` but different on the wire, which it cannot keep apart.
    @inlinable
    static func store(_ value: Value.Value, for key: Key.Value, in map: inout [Key.Value: Value.Value]) -> Bool {
        guard map.updateValue(value, forKey: key) != nil, let index = map.index(forKey: key) else { return true }
        // A replaced entry keeps its first key: check it is this one, byte for byte.
        return Key.isSameOnTheWire(map.keys[index], key)
    }

    /// Writes the map as a JSON object with string keys, in key order.
    @inlinable
    public static func writeJSON(_ map: [Key.Value: Value.Value], to writer: inout JSONWriter) throws(JSONEncodingError) {
        writer.beginObject()
        for key in sortedKeys(map) {
            writer.writeKey(Key.jsonKey(key))
            try Value.writeJSON(map[key]!, to: &writer)
        }
        writer.endObject()
    }

    /// Writes `key` (quotes and colon included) and the map, unless it is empty.
    @inlinable @inline(__always)
    public static func writeJSONMember(_ map: [Key.Value: Value.Value], key: StaticString, to writer: inout JSONWriter) throws(JSONEncodingError) {
        if map.isEmpty { return }
        writer.writeKeyLiteral(key)
        try writeJSON(map, to: &writer)
    }

    /// Reads a JSON object (or `null`) and stores its entries.
    @inlinable
    public static func readJSON(from reader: inout JSONReader, into map: inout [Key.Value: Value.Value]) throws(JSONDecodingError) {
        if reader.readNull() { return }
        try reader.beginObject()
        // A key twice in one object is an error, as in protobuf's parsers. Into an empty map
        // the map itself says so; merging into entries, the keys of this object are kept apart.
        let merging = !map.isEmpty
        var keysHere: Set<Key.Value> = []
        while true {
            let keyOffset = reader.offset
            guard let name = try reader.nextKey() else { break }
            guard let key = Key.parseJSONKey(name) else {
                // Say what is wrong with the key: its text, or what it should spell.
                let isUTF8 = name.withUnsafeBytes { UTF8Validation.isValid($0) }
                throw isUTF8 ? .invalidMapKey(offset: keyOffset, key: name.string) : .invalidString(offset: keyOffset)
            }
            // null is no value; an unknown enum name, when ignored, drops its entry.
            reader.skipWhitespace()
            let valueOffset = reader.offset
            if !Value.jsonNullIsValue && reader.readNull() { throw .nullInContainer(offset: valueOffset) }
            if let value = try Value.readJSON(from: &reader) {
                let repeated = merging ? !keysHere.insert(key).inserted
                    : map.index(forKey: key).map { Key.isSameOnTheWire(map.keys[$0], key) } ?? false
                if repeated { throw .duplicateMapKey(offset: keyOffset, key: name.string) }
                guard store(value, for: key, in: &map) else { throw .equivalentMapKeys(offset: keyOffset, key: name.string) }
            }
        }
    }
}
