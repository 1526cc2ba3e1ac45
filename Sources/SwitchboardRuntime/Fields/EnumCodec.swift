/// A schema enum: an `int32` varint on the wire, its name in JSON.
public enum EnumCodec<Enum: ProtoEnum>: FieldCodec {
    public static var wireType: WireType { .varint }
    public static var defaultValue: Enum { Enum() }
    @inlinable public static func isDefault(_ value: Enum) -> Bool { value.rawValue == 0 }
    @inlinable public static func encodedSize(of value: Enum) -> Int { Int32Codec.encodedSize(of: value.rawValue) }
    @inlinable @inline(__always) public static func write(_ value: Enum, to writer: inout WireWriter) {
        Int32Codec.write(value.rawValue, to: &writer)
    }
    @inlinable public static func read(from reader: inout WireReader) throws(WireDecodingError) -> Enum {
        Enum(rawValue: try Int32Codec.read(from: &reader))
    }
    /// Writes the value's name, or its number when this schema does not name it.
    @inlinable public static func writeJSON(_ value: Enum, to writer: inout JSONWriter) {
        if Enum.isProtobufNullValue {
            writer.writeNull()
        } else if let name = value.protoName {
            writer.writeQuotedLiteral(name)
        } else {
            writer.writeNumber(Int64(value.rawValue))
        }
    }
    /// Accepts a name or a number; an unknown name fails, or is skipped when the options say so.
    @inlinable public static var jsonNullIsValue: Bool { Enum.isProtobufNullValue }
    @inlinable public static func readJSON(from reader: inout JSONReader) throws(JSONDecodingError) -> Enum? {
        if reader.readNull() { return Enum.isProtobufNullValue ? Enum() : nil }
        if reader.peekIsString {
            let name = try reader.readName()
            if let value = Enum(protoName: name) { return value }
            // A number in quotes, as protobuf's Java, Python and C++ parsers accept it.
            if let number = Int32(name.string), String(number) == name.string { return Enum(rawValue: number) }
            if reader.options.ignoreUnknownFields { return nil }
            throw .unknownEnumName(enum: String(describing: Enum.self), name: name.string)
        }
        return Enum(rawValue: Int32(try reader.readInteger(in: Int64(Int32.min)...Int64(Int32.max))))
    }
}
