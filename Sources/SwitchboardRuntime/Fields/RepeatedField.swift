/// Lists (`[T]`): packed for numeric scalars and enums, one tagged field per
/// element otherwise. Decoders accept both forms for packable types.
public enum RepeatedField<Codec: FieldCodec> {
    /// The payload size of the packed form (without tag and length prefix).
    @inlinable
    public static func packedPayloadSize(_ values: [Codec.Value]) -> Int {
        if let width = Codec.fixedSize { return values.count * width }
        // An unsafe buffer's subscript borrows each element; iterating the array would retain it.
        return values.withUnsafeBufferPointer { buffer in
            var size = 0
            for index in buffer.indices { size += Codec.encodedSize(of: buffer[index]) }
            return size
        }
    }

    /// The size of the packed form, including the tag.
    @inlinable
    public static func packedSize(_ values: [Codec.Value], tagSize: Int) -> Int {
        if values.isEmpty { return 0 }
        return tagSize + WireSize.lengthDelimited(packedPayloadSize(values))
    }

    /// Writes the packed form under `tag` (wire type 2).
    @inlinable
    public static func writePacked(_ values: [Codec.Value], tag: UInt32, to writer: inout WireWriter) {
        if values.isEmpty { return }
        writer.writeTag(tag)
        writer.writeVarint(UInt64(packedPayloadSize(values)))
        values.withUnsafeBufferPointer { buffer in
            for index in buffer.indices { Codec.write(buffer[index], to: &writer) }
        }
    }

    /// The size of the unpacked form: one tag per element.
    @inlinable @inline(__always)
    public static func unpackedSize(_ values: [Codec.Value], tagSize: Int) -> Int {
        values.withUnsafeBufferPointer { buffer in
            var size = buffer.count * tagSize
            for index in buffer.indices { size += Codec.encodedSize(of: buffer[index]) }
            return size
        }
    }

    /// Writes each element under its own `tag`.
    ///
    /// Always inlined, so the tag is a constant; the loop writes through a local copy of the
    /// writer, whose cursor then stays in a register instead of going back through the
    /// closure's capture after every byte.
    @inlinable @inline(__always)
    public static func writeUnpacked(_ values: [Codec.Value], tag: UInt32, to writer: inout WireWriter) {
        if values.isEmpty { return }
        values.withUnsafeBufferPointer { buffer in
            var local = writer
            for index in buffer.indices {
                local.writeTag(tag)
                Codec.write(buffer[index], to: &local)
            }
            writer = local
        }
    }

    /// Reads one element of an unpacked list. The first element reserves room for four,
    /// so short lists (the common case) allocate once; longer ones grow geometrically.
    /// Counting the list's fields ahead instead cost a second scan of the rest of the
    /// message, more than the reallocations it saved for short lists.
    @inlinable
    public static func readElement(from reader: inout WireReader, tag: UInt32, into values: inout [Codec.Value]) throws(WireDecodingError) {
        if values.isEmpty { values.reserveCapacity(4) }
        values.append(try Codec.read(from: &reader))
    }

    /// Reads a packed run and appends its elements.
    @inlinable
    public static func readPacked(from reader: inout WireReader, into values: inout [Codec.Value]) throws(WireDecodingError) {
        let length = try reader.readLength()
        // The length is already checked against the input, so this bounds the reservation.
        if let width = Codec.fixedSize {
            guard length % width == 0 else { throw .truncated }
            reserve(length / width, more: &values)
        } else if Codec.wireType == .varint {
            // Every varint ends in exactly one byte below 0x80.
            var count = 0
            for offset in 0..<length where reader.cursor.load(fromByteOffset: offset, as: UInt8.self) < 0x80 { count += 1 }
            reserve(count, more: &values)
        }
        let savedEnd = reader.end
        reader.end = reader.cursor + length
        while !reader.isAtEnd {
            values.append(try Codec.read(from: &reader))
        }
        reader.end = savedEnd
    }

    /// Makes room for `count` more elements, at least doubling the capacity when it grows:
    /// an exact reservation per packed run would copy the whole list for every run, which is
    /// quadratic in a list sent as many small runs.
    @inlinable
    static func reserve(_ count: Int, more values: inout [Codec.Value]) {
        let needed = values.count + count
        if needed > values.capacity { values.reserveCapacity(Swift.max(needed, values.capacity * 2)) }
    }

    /// Writes the list as a JSON array.
    @inlinable
    public static func writeJSON(_ values: [Codec.Value], to writer: inout JSONWriter) throws(JSONEncodingError) {
        writer.beginArray()
        for value in values {
            writer.beginElement()
            try Codec.writeJSON(value, to: &writer)
        }
        writer.endArray()
    }

    /// Writes `key` (quotes and colon included) and the list, unless it is empty.
    @inlinable @inline(__always)
    public static func writeJSONMember(_ values: [Codec.Value], key: StaticString, to writer: inout JSONWriter) throws(JSONEncodingError) {
        if values.isEmpty { return }
        writer.writeKeyLiteral(key)
        try writeJSON(values, to: &writer)
    }

    /// Reads a JSON array (or `null`) and appends its elements.
    @inlinable
    public static func readJSON(from reader: inout JSONReader, into values: inout [Codec.Value]) throws(JSONDecodingError) {
        if reader.readNull() { return }
        try reader.beginArray()
        while try reader.nextElement() {
            // null is no element; an unknown enum name, when ignored, is one dropped.
            reader.skipWhitespace()
            let elementOffset = reader.offset
            if !Codec.jsonNullIsValue && reader.readNull() { throw .nullInContainer(offset: elementOffset) }
            if let value = try Codec.readJSON(from: &reader) { values.append(value) }
        }
    }
}
