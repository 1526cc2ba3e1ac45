/// `int32`: a varint, sign-extended to 64 bits when negative.
public enum Int32Codec: MapKeyCodec {
    public static var wireType: WireType { .varint }
    public static var defaultValue: Int32 { 0 }
    @inlinable public static func isDefault(_ value: Int32) -> Bool { value == 0 }
    @inlinable public static func encodedSize(of value: Int32) -> Int {
        WireSize.varint(UInt64(bitPattern: Int64(value)))
    }
    @inlinable public static func write(_ value: Int32, to writer: inout WireWriter) {
        writer.writeVarint(UInt64(bitPattern: Int64(value)))
    }
    @inlinable public static func read(from reader: inout WireReader) throws(WireDecodingError) -> Int32 {
        Int32(truncatingIfNeeded: try reader.readVarint())
    }
    @inlinable public static func writeJSON(_ value: Int32, to writer: inout JSONWriter) {
        writer.writeNumber(Int64(value))
    }
    @inlinable public static func readJSON(from reader: inout JSONReader) throws(JSONDecodingError) -> Int32? {
        if reader.readNull() { return nil }
        return Int32(try reader.readInteger(in: Int64(Int32.min)...Int64(Int32.max)))
    }
}

/// `int64`: a varint; JSON writes it as a quoted string.
public enum Int64Codec: MapKeyCodec {
    public static var wireType: WireType { .varint }
    public static var defaultValue: Int64 { 0 }
    @inlinable public static func isDefault(_ value: Int64) -> Bool { value == 0 }
    @inlinable public static func encodedSize(of value: Int64) -> Int { WireSize.varint(UInt64(bitPattern: value)) }
    @inlinable public static func write(_ value: Int64, to writer: inout WireWriter) {
        writer.writeVarint(UInt64(bitPattern: value))
    }
    @inlinable public static func read(from reader: inout WireReader) throws(WireDecodingError) -> Int64 {
        Int64(bitPattern: try reader.readVarint())
    }
    @inlinable public static func writeJSON(_ value: Int64, to writer: inout JSONWriter) {
        writer.writeQuotedNumber(value)
    }
    @inlinable public static func readJSON(from reader: inout JSONReader) throws(JSONDecodingError) -> Int64? {
        if reader.readNull() { return nil }
        return try reader.readInteger(in: Int64.min...Int64.max)
    }
}

/// `uint32`: a varint.
public enum UInt32Codec: MapKeyCodec {
    public static var wireType: WireType { .varint }
    public static var defaultValue: UInt32 { 0 }
    @inlinable public static func isDefault(_ value: UInt32) -> Bool { value == 0 }
    @inlinable public static func encodedSize(of value: UInt32) -> Int { WireSize.varint(value) }
    @inlinable public static func write(_ value: UInt32, to writer: inout WireWriter) { writer.writeVarint(value) }
    @inlinable public static func read(from reader: inout WireReader) throws(WireDecodingError) -> UInt32 {
        UInt32(truncatingIfNeeded: try reader.readVarint())
    }
    @inlinable public static func writeJSON(_ value: UInt32, to writer: inout JSONWriter) {
        writer.writeNumber(UInt64(value))
    }
    @inlinable public static func readJSON(from reader: inout JSONReader) throws(JSONDecodingError) -> UInt32? {
        if reader.readNull() { return nil }
        return UInt32(try reader.readUnsignedInteger(maximum: UInt64(UInt32.max)))
    }
}

/// `uint64`: a varint; JSON writes it as a quoted string.
public enum UInt64Codec: MapKeyCodec {
    public static var wireType: WireType { .varint }
    public static var defaultValue: UInt64 { 0 }
    @inlinable public static func isDefault(_ value: UInt64) -> Bool { value == 0 }
    @inlinable public static func encodedSize(of value: UInt64) -> Int { WireSize.varint(value) }
    @inlinable public static func write(_ value: UInt64, to writer: inout WireWriter) { writer.writeVarint(value) }
    @inlinable public static func read(from reader: inout WireReader) throws(WireDecodingError) -> UInt64 {
        try reader.readVarint()
    }
    @inlinable public static func writeJSON(_ value: UInt64, to writer: inout JSONWriter) {
        writer.writeQuotedNumber(value)
    }
    @inlinable public static func readJSON(from reader: inout JSONReader) throws(JSONDecodingError) -> UInt64? {
        if reader.readNull() { return nil }
        return try reader.readUnsignedInteger(maximum: UInt64.max)
    }
}

/// `sint32`: a ZigZag varint.
public enum SInt32Codec: MapKeyCodec {
    public static var wireType: WireType { .varint }
    public static var defaultValue: Int32 { 0 }
    @inlinable public static func isDefault(_ value: Int32) -> Bool { value == 0 }
    @inlinable public static func encodedSize(of value: Int32) -> Int { WireSize.varint(ZigZag.encode(value)) }
    @inlinable public static func write(_ value: Int32, to writer: inout WireWriter) {
        writer.writeVarint(ZigZag.encode(value))
    }
    @inlinable public static func read(from reader: inout WireReader) throws(WireDecodingError) -> Int32 {
        ZigZag.decode(UInt32(truncatingIfNeeded: try reader.readVarint()))
    }
    @inlinable public static func writeJSON(_ value: Int32, to writer: inout JSONWriter) {
        writer.writeNumber(Int64(value))
    }
    @inlinable public static func readJSON(from reader: inout JSONReader) throws(JSONDecodingError) -> Int32? {
        try Int32Codec.readJSON(from: &reader)
    }
}

/// `sint64`: a ZigZag varint; JSON writes it as a quoted string.
public enum SInt64Codec: MapKeyCodec {
    public static var wireType: WireType { .varint }
    public static var defaultValue: Int64 { 0 }
    @inlinable public static func isDefault(_ value: Int64) -> Bool { value == 0 }
    @inlinable public static func encodedSize(of value: Int64) -> Int { WireSize.varint(ZigZag.encode(value)) }
    @inlinable public static func write(_ value: Int64, to writer: inout WireWriter) {
        writer.writeVarint(ZigZag.encode(value))
    }
    @inlinable public static func read(from reader: inout WireReader) throws(WireDecodingError) -> Int64 {
        ZigZag.decode(try reader.readVarint())
    }
    @inlinable public static func writeJSON(_ value: Int64, to writer: inout JSONWriter) {
        writer.writeQuotedNumber(value)
    }
    @inlinable public static func readJSON(from reader: inout JSONReader) throws(JSONDecodingError) -> Int64? {
        try Int64Codec.readJSON(from: &reader)
    }
}

/// `fixed32`: four little-endian bytes.
public enum Fixed32Codec: MapKeyCodec {
    public static var wireType: WireType { .fixed32 }
    public static var defaultValue: UInt32 { 0 }
    public static var fixedSize: Int? { 4 }
    @inlinable public static func isDefault(_ value: UInt32) -> Bool { value == 0 }
    @inlinable public static func encodedSize(of value: UInt32) -> Int { 4 }
    @inlinable public static func write(_ value: UInt32, to writer: inout WireWriter) { writer.writeFixed32(value) }
    @inlinable public static func read(from reader: inout WireReader) throws(WireDecodingError) -> UInt32 {
        try reader.readFixed32()
    }
    @inlinable public static func writeJSON(_ value: UInt32, to writer: inout JSONWriter) {
        writer.writeNumber(UInt64(value))
    }
    @inlinable public static func readJSON(from reader: inout JSONReader) throws(JSONDecodingError) -> UInt32? {
        try UInt32Codec.readJSON(from: &reader)
    }
}

/// `fixed64`: eight little-endian bytes; JSON writes it as a quoted string.
public enum Fixed64Codec: MapKeyCodec {
    public static var wireType: WireType { .fixed64 }
    public static var defaultValue: UInt64 { 0 }
    public static var fixedSize: Int? { 8 }
    @inlinable public static func isDefault(_ value: UInt64) -> Bool { value == 0 }
    @inlinable public static func encodedSize(of value: UInt64) -> Int { 8 }
    @inlinable public static func write(_ value: UInt64, to writer: inout WireWriter) { writer.writeFixed64(value) }
    @inlinable public static func read(from reader: inout WireReader) throws(WireDecodingError) -> UInt64 {
        try reader.readFixed64()
    }
    @inlinable public static func writeJSON(_ value: UInt64, to writer: inout JSONWriter) {
        writer.writeQuotedNumber(value)
    }
    @inlinable public static func readJSON(from reader: inout JSONReader) throws(JSONDecodingError) -> UInt64? {
        try UInt64Codec.readJSON(from: &reader)
    }
}

/// `sfixed32`: four little-endian bytes, two's complement.
public enum SFixed32Codec: MapKeyCodec {
    public static var wireType: WireType { .fixed32 }
    public static var defaultValue: Int32 { 0 }
    public static var fixedSize: Int? { 4 }
    @inlinable public static func isDefault(_ value: Int32) -> Bool { value == 0 }
    @inlinable public static func encodedSize(of value: Int32) -> Int { 4 }
    @inlinable public static func write(_ value: Int32, to writer: inout WireWriter) {
        writer.writeFixed32(UInt32(bitPattern: value))
    }
    @inlinable public static func read(from reader: inout WireReader) throws(WireDecodingError) -> Int32 {
        Int32(bitPattern: try reader.readFixed32())
    }
    @inlinable public static func writeJSON(_ value: Int32, to writer: inout JSONWriter) {
        writer.writeNumber(Int64(value))
    }
    @inlinable public static func readJSON(from reader: inout JSONReader) throws(JSONDecodingError) -> Int32? {
        try Int32Codec.readJSON(from: &reader)
    }
}

/// `sfixed64`: eight little-endian bytes, two's complement; JSON writes a quoted string.
public enum SFixed64Codec: MapKeyCodec {
    public static var wireType: WireType { .fixed64 }
    public static var defaultValue: Int64 { 0 }
    public static var fixedSize: Int? { 8 }
    @inlinable public static func isDefault(_ value: Int64) -> Bool { value == 0 }
    @inlinable public static func encodedSize(of value: Int64) -> Int { 8 }
    @inlinable public static func write(_ value: Int64, to writer: inout WireWriter) {
        writer.writeFixed64(UInt64(bitPattern: value))
    }
    @inlinable public static func read(from reader: inout WireReader) throws(WireDecodingError) -> Int64 {
        Int64(bitPattern: try reader.readFixed64())
    }
    @inlinable public static func writeJSON(_ value: Int64, to writer: inout JSONWriter) {
        writer.writeQuotedNumber(value)
    }
    @inlinable public static func readJSON(from reader: inout JSONReader) throws(JSONDecodingError) -> Int64? {
        try Int64Codec.readJSON(from: &reader)
    }
}

/// `bool`: a one-byte varint.
public enum BoolCodec: MapKeyCodec {
    public static var wireType: WireType { .varint }
    public static var defaultValue: Bool { false }
    @inlinable public static func isDefault(_ value: Bool) -> Bool { !value }
    @inlinable public static func encodedSize(of value: Bool) -> Int { 1 }
    @inlinable public static func write(_ value: Bool, to writer: inout WireWriter) { writer.writeByte(value ? 1 : 0) }
    @inlinable public static func read(from reader: inout WireReader) throws(WireDecodingError) -> Bool {
        try reader.readVarint() != 0
    }
    @inlinable public static func writeJSON(_ value: Bool, to writer: inout JSONWriter) { writer.writeBool(value) }
    @inlinable public static func readJSON(from reader: inout JSONReader) throws(JSONDecodingError) -> Bool? {
        if reader.readNull() { return nil }
        return try reader.readBool()
    }
    @inlinable public static func sortsBefore(_ lhs: Bool, _ rhs: Bool) -> Bool { !lhs && rhs }
    public static func jsonKey(_ value: Bool) -> String { value ? "true" : "false" }
    public static func parseJSONKey(_ key: JSONName) -> Bool? {
        key.matches("true") ? true : key.matches("false") ? false : nil
    }
}

/// Integer map keys are written in JSON as decimal strings.
extension MapKeyCodec where Value: FixedWidthInteger {
    public static func jsonKey(_ value: Value) -> String { String(value) }
    /// The key as protobuf writes it: `-?(0|[1-9][0-9]*)`, no sign for unsigned types; no `+`,
    /// leading zeros or blanks, which a lenient parse would let collapse into another key.
    public static func parseJSONKey(_ key: JSONName) -> Value? {
        key.withUnsafeBytes { bytes -> Value? in
            guard JSONIntegerKey.isCanonical(bytes, signed: Value.isSigned) else { return nil }
            return Value(String(decoding: bytes, as: UTF8.self), radix: 10)
        }
    }
}

/// The text of an integer map key as protobuf's JSON writes it.
public enum JSONIntegerKey {
    /// Whether `text` is `-?(0|[1-9][0-9]*)` (no sign for unsigned types): no `+`, leading zeros
    /// or blanks, which a lenient parse would read as another key's number.
    public static func isCanonical<Bytes: Collection<UInt8>>(_ text: Bytes, signed: Bool) -> Bool {
        var digits = text[...]
        if digits.first == UInt8(ascii: "-") {
            guard signed else { return false }
            digits = digits.dropFirst()
        }
        guard let first = digits.first, digits.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return false }
        return first != 48 || digits.count == 1
    }
}
