import Foundation

/// A wrapper message (`google.protobuf.Int32Value` and its siblings): one `value` field,
/// written in JSON as the bare value, so that a field of it reads as a nullable scalar.
public protocol ProtoWrapper: ProtoMessage {
    /// The codec of the wrapped value.
    associatedtype WrappedCodec: FieldCodec
    /// The wrapped value.
    var value: WrappedCodec.Value { get set }
}

extension ProtoWrapper {
    /// Wraps `value`.
    public init(_ value: WrappedCodec.Value) {
        self.init()
        self.value = value
    }

    /// Not an object of its fields in JSON.
    public static var jsonIsFieldObject: Bool { false }

    /// The bare value: `5`, `"5"` for 64-bit integers, `"text"`, `true`.
    public func encodeJSON(into writer: inout JSONWriter) throws(JSONEncodingError) {
        try WrappedCodec.writeJSON(value, to: &writer)
    }

    /// Reads the bare value. A `null` field never reaches here (it leaves the field unset, and
    /// lists and maps refuse it); `null` here is a packed Any's `"value"` or a whole document,
    /// and is refused, as protobuf refuses it: it is no value of the wrapper.
    public mutating func decodeJSON(from reader: inout JSONReader) throws(JSONDecodingError) {
        reader.skipWhitespace()
        let offset = reader.offset
        if reader.readNull() { throw .unexpectedCharacter(offset: offset, expected: "a \(Self.protoMessageName) value, not null") }
        if let decoded = try WrappedCodec.readJSON(from: &reader) { value = decoded }
    }
}

extension ProtoDoubleValue: ProtoWrapper { public typealias WrappedCodec = DoubleCodec }
extension ProtoFloatValue: ProtoWrapper { public typealias WrappedCodec = FloatCodec }
extension ProtoInt64Value: ProtoWrapper { public typealias WrappedCodec = Int64Codec }
extension ProtoUInt64Value: ProtoWrapper { public typealias WrappedCodec = UInt64Codec }
extension ProtoInt32Value: ProtoWrapper { public typealias WrappedCodec = Int32Codec }
extension ProtoUInt32Value: ProtoWrapper { public typealias WrappedCodec = UInt32Codec }
extension ProtoBoolValue: ProtoWrapper { public typealias WrappedCodec = BoolCodec }
extension ProtoStringValue: ProtoWrapper { public typealias WrappedCodec = StringCodec }
extension ProtoBytesValue: ProtoWrapper { public typealias WrappedCodec = BytesCodec }
