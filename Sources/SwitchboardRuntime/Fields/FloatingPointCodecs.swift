/// `float`: four little-endian bytes (IEEE 754 single precision).
public enum FloatCodec: FieldCodec {
    public static var wireType: WireType { .fixed32 }
    public static var defaultValue: Float { 0 }
    public static var fixedSize: Int? { 4 }
    /// Negative zero is not the default: protobuf writes it to keep the sign.
    @inlinable public static func isDefault(_ value: Float) -> Bool { value.bitPattern == 0 }
    @inlinable public static func encodedSize(of value: Float) -> Int { 4 }
    @inlinable public static func write(_ value: Float, to writer: inout WireWriter) {
        writer.writeFixed32(value.bitPattern)
    }
    @inlinable public static func read(from reader: inout WireReader) throws(WireDecodingError) -> Float {
        Float(bitPattern: try reader.readFixed32())
    }
    public static func writeJSON(_ value: Float, to writer: inout JSONWriter) { writer.writeFloat(value) }
    public static func readJSON(from reader: inout JSONReader) throws(JSONDecodingError) -> Float? {
        if reader.readNull() { return nil }
        return try reader.readFloat()
    }
}

/// `double`: eight little-endian bytes (IEEE 754 double precision).
public enum DoubleCodec: FieldCodec {
    public static var wireType: WireType { .fixed64 }
    public static var defaultValue: Double { 0 }
    public static var fixedSize: Int? { 8 }
    /// Negative zero is not the default: protobuf writes it to keep the sign.
    @inlinable public static func isDefault(_ value: Double) -> Bool { value.bitPattern == 0 }
    @inlinable public static func encodedSize(of value: Double) -> Int { 8 }
    @inlinable public static func write(_ value: Double, to writer: inout WireWriter) {
        writer.writeFixed64(value.bitPattern)
    }
    @inlinable public static func read(from reader: inout WireReader) throws(WireDecodingError) -> Double {
        Double(bitPattern: try reader.readFixed64())
    }
    public static func writeJSON(_ value: Double, to writer: inout JSONWriter) { writer.writeDouble(value) }
    public static func readJSON(from reader: inout JSONReader) throws(JSONDecodingError) -> Double? {
        if reader.readNull() { return nil }
        return try reader.readDouble()
    }
}
