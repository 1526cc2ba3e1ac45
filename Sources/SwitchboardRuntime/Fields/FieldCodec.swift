/// How one schema type is written and read in both codecs.
///
/// Generated code names a codec statically (`StringCodec.encodedSize(of:)`), so
/// every call is specialised and inlined: no existentials on the hot path.
public protocol FieldCodec {
    /// The Swift type a field of this schema type holds.
    associatedtype Value: Sendable & Hashable
    /// The wire type of one value.
    static var wireType: WireType { get }
    /// The protobuf default, which implicit-presence fields do not write.
    static var defaultValue: Value { get }
    /// The byte width of every value, or `nil` when the size varies.
    static var fixedSize: Int? { get }
    /// Whether `value` equals the default.
    static func isDefault(_ value: Value) -> Bool
    /// The size of one encoded value without its tag (length prefix included).
    static func encodedSize(of value: Value) -> Int
    /// Writes one value without its tag.
    static func write(_ value: Value, to writer: inout WireWriter)
    /// Reads one value whose tag was just read.
    static func read(from reader: inout WireReader) throws(WireDecodingError) -> Value
    /// Reads one value whose tag was just read into `value`, which it has held so far: a
    /// message merges into it, any other value replaces it (protobuf's rule for a field
    /// that appears twice, which a map entry's value follows too).
    static func read(from reader: inout WireReader, mergingInto value: inout Value) throws(WireDecodingError)
    /// Writes one value as JSON.
    static func writeJSON(_ value: Value, to writer: inout JSONWriter) throws(JSONEncodingError)
    /// Reads one JSON value; `nil` means "leave the field alone" (a `null`, or an
    /// unknown enum name skipped under ``JSONDecodingOptions/ignoreUnknownFields``).
    static func readJSON(from reader: inout JSONReader) throws(JSONDecodingError) -> Value?
    /// Whether JSON `null` is a value of this type (`google.protobuf.Value` and `NullValue`),
    /// so lists and maps may hold it.
    static var jsonNullIsValue: Bool { get }
}

extension FieldCodec {
    public static var fixedSize: Int? { nil }
    @inlinable public static var jsonNullIsValue: Bool { false }

    @inlinable
    public static func read(from reader: inout WireReader, mergingInto value: inout Value) throws(WireDecodingError) {
        value = try read(from: &reader)
    }

    /// Adds `value` and its tag to `size`, unless `value` is the default, which a field without
    /// presence leaves out. One call per field in generated code, where a condition and a
    /// call written out cost several times as much to compile.
    @inlinable @inline(__always)
    public static func addSize(of value: Value, tagSize: Int, to size: inout WireSizeSum) {
        if isDefault(value) { return }
        size.add(encodedSize(of: value), tagSize: tagSize)
    }

    /// Writes `tag` (the field's precomputed key) and `value`, unless `value` is the default.
    @inlinable @inline(__always)
    public static func writeField(_ value: Value, tag: UInt32, to writer: inout WireWriter) {
        if isDefault(value) { return }
        writer.writeTag(tag)
        write(value, to: &writer)
    }

    /// Writes `key` (quotes and colon included) and `value`, unless `value` is the default,
    /// which a field without presence leaves out. One call per field in generated code.
    @inlinable @inline(__always)
    public static func writeJSONMember(_ value: Value, key: StaticString, to writer: inout JSONWriter) throws(JSONEncodingError) {
        if isDefault(value) { return }
        writer.writeKeyLiteral(key)
        try writeJSON(value, to: &writer)
    }

    /// Writes `key` and the value of a field that tracks presence, when it is set.
    @inlinable @inline(__always)
    public static func writeJSONMember(present value: Value?, key: StaticString, to writer: inout JSONWriter) throws(JSONEncodingError) {
        guard let value else { return }
        writer.writeKeyLiteral(key)
        try writeJSON(value, to: &writer)
    }

    /// Reads one JSON value into a field; what ``readJSON(from:)`` returns as `nil` (a `null`
    /// for most types) leaves it alone. One call in generated code, where an optional binding
    /// and an assignment cost more to compile.
    @inlinable @inline(__always)
    public static func readJSON(from reader: inout JSONReader, into field: inout Value) throws(JSONDecodingError) {
        if let value = try readJSON(from: &reader) { field = value }
    }

    /// Reads one JSON value into a field that tracks presence; a `nil` from ``readJSON(from:)``
    /// leaves it alone.
    @inlinable @inline(__always)
    public static func readJSON(from reader: inout JSONReader, intoOptional field: inout Value?) throws(JSONDecodingError) {
        if let value = try readJSON(from: &reader) { field = value }
    }
}

/// A codec whose values may be map keys: integers, booleans and strings.
public protocol MapKeyCodec: FieldCodec {
    /// The order keys are written in, which makes map encoding deterministic.
    static func sortsBefore(_ lhs: Value, _ rhs: Value) -> Bool
    /// The JSON object key for `value` (JSON keys are always strings).
    static func jsonKey(_ value: Value) -> String
    /// Parses a JSON object key.
    static func parseJSONKey(_ key: JSONName) -> Value?
    /// Whether two keys a map holds as one (they are equal as `Value`s) are the same on the
    /// wire. Only strings can differ: Swift compares them by canonical equivalence, protobuf
    /// by bytes.
    static func isSameOnTheWire(_ lhs: Value, _ rhs: Value) -> Bool
}

extension MapKeyCodec {
    @inlinable
    public static func isSameOnTheWire(_ lhs: Value, _ rhs: Value) -> Bool { true }
}

extension MapKeyCodec where Value: Comparable {
    @inlinable
    public static func sortsBefore(_ lhs: Value, _ rhs: Value) -> Bool { lhs < rhs }
}
