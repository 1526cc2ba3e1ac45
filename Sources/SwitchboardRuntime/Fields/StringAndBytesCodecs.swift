import Foundation

/// `string`: a length-delimited run of UTF-8, validated on decode.
public enum StringCodec: MapKeyCodec {
    public static var wireType: WireType { .lengthDelimited }
    /// Compared by bytes: `"é"` as U+00E9 and as `e` + U+0301 are one `String` but two keys.
    @inlinable public static func isSameOnTheWire(_ lhs: String, _ rhs: String) -> Bool { lhs.utf8.elementsEqual(rhs.utf8) }
    public static var defaultValue: String { "" }
    @inlinable public static func isDefault(_ value: String) -> Bool { value.isEmpty }
    @inlinable @inline(__always) public static func encodedSize(of value: String) -> Int { WireSize.lengthDelimited(value.utf8.count) }
    @inlinable @inline(__always) public static func write(_ value: String, to writer: inout WireWriter) { writer.writeString(value) }
    @inlinable public static func read(from reader: inout WireReader) throws(WireDecodingError) -> String {
        try reader.readString()
    }
    @inlinable public static func writeJSON(_ value: String, to writer: inout JSONWriter) { writer.writeString(value) }
    @inlinable public static func readJSON(from reader: inout JSONReader) throws(JSONDecodingError) -> String? {
        if reader.readNull() { return nil }
        return try reader.readString()
    }
    /// Byte order, as protobuf's deterministic serialization sorts string keys.
    @inlinable public static func sortsBefore(_ lhs: String, _ rhs: String) -> Bool {
        lhs.utf8.lexicographicallyPrecedes(rhs.utf8)
    }
    public static func jsonKey(_ value: String) -> String { value }
    public static func parseJSONKey(_ key: JSONName) -> String? {
        key.withUnsafeBytes { bytes in
            UTF8Validation.isValid(bytes) ? UTF8Validation.string(fromValid: bytes) : nil
        }
    }
}

/// `bytes`: a length-delimited byte string; base64 in JSON.
public enum BytesCodec: FieldCodec {
    public static var wireType: WireType { .lengthDelimited }
    public static var defaultValue: Data { Data() }
    @inlinable public static func isDefault(_ value: Data) -> Bool { value.isEmpty }
    @inlinable public static func encodedSize(of value: Data) -> Int { WireSize.lengthDelimited(value.count) }
    @inlinable public static func write(_ value: Data, to writer: inout WireWriter) { writer.writeBytes(value) }
    @inlinable public static func read(from reader: inout WireReader) throws(WireDecodingError) -> Data {
        try reader.readBytes()
    }
    public static func writeJSON(_ value: Data, to writer: inout JSONWriter) { writer.writeBase64(value) }
    public static func readJSON(from reader: inout JSONReader) throws(JSONDecodingError) -> Data? {
        if reader.readNull() { return nil }
        return try reader.readBase64()
    }
}
