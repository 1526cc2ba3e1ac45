import Foundation

extension ProtoNullValue {
    /// JSON writes and reads this enum as `null`.
    public static var isProtobufNullValue: Bool { true }
}

extension ProtoValue {
    /// JSON `null`.
    public static var null: ProtoValue { ProtoValue(kind: .nullValue(.nullValue)) }

    /// Not an object of its fields in JSON.
    public static var jsonIsFieldObject: Bool { false }

    /// Any JSON value, as JSON: `null`, a number, a string, `true`/`false`, an object or an
    /// array. A value with no kind, or a number JSON cannot spell (NaN, infinity), cannot be written.
    public func encodeJSON(into writer: inout JSONWriter) throws(JSONEncodingError) {
        switch kind {
        case nil: throw .invalidValue("a google.protobuf.Value with no kind set")
        case .nullValue?: writer.writeNull()
        case let .numberValue(number)?:
            guard number.isFinite else { throw .invalidValue("the number \(number), which JSON cannot write") }
            writer.writeDouble(number)
        case let .stringValue(text)?: writer.writeString(text)
        case let .boolValue(flag)?: writer.writeBool(flag)
        case let .structValue(object)?: try object.encodeJSON(into: &writer)
        case let .listValue(list)?: try list.encodeJSON(into: &writer)
        }
    }

    /// Reads any JSON value; a number is kept as a `Double`.
    public mutating func decodeJSON(from reader: inout JSONReader) throws(JSONDecodingError) {
        reader.skipWhitespace()
        switch reader.peek() {
        case UInt8(ascii: "n")?:
            guard reader.readNull() else { throw .unexpectedCharacter(offset: reader.offset, expected: "a JSON value") }
            kind = .nullValue(.nullValue)
        case UInt8(ascii: "\"")?: kind = .stringValue(try reader.readString())
        case UInt8(ascii: "t")?, UInt8(ascii: "f")?: kind = .boolValue(try reader.readBool())
        case UInt8(ascii: "{")?:
            var object = ProtoStruct()
            try object.decodeJSON(from: &reader)
            kind = .structValue(object)
        case UInt8(ascii: "[")?:
            var list = ProtoListValue()
            try list.decodeJSON(from: &reader)
            kind = .listValue(list)
        case nil: throw .unexpectedEnd
        default: kind = .numberValue(try reader.readDoubleText(offset: reader.offset))
        }
    }

    /// `null` is a Value, not an absent one.
    public static var jsonNullIsValue: Bool { true }
}

extension ProtoStruct {
    /// Not an object of its fields in JSON.
    public static var jsonIsFieldObject: Bool { false }

    /// A JSON object of its fields.
    public func encodeJSON(into writer: inout JSONWriter) throws(JSONEncodingError) {
        try MapField<StringCodec, MessageCodec<ProtoValue>>.writeJSON(fields, to: &writer)
    }

    /// Reads a JSON object; each member becomes a field, `null` members included.
    public mutating func decodeJSON(from reader: inout JSONReader) throws(JSONDecodingError) {
        reader.skipWhitespace()
        guard reader.peek() == UInt8(ascii: "{") else {
            throw .unexpectedCharacter(offset: reader.offset, expected: "a JSON object")
        }
        try MapField<StringCodec, MessageCodec<ProtoValue>>.readJSON(from: &reader, into: &fields)
    }
}

extension ProtoListValue {
    /// Not an object of its fields in JSON.
    public static var jsonIsFieldObject: Bool { false }

    /// A JSON array of its values.
    public func encodeJSON(into writer: inout JSONWriter) throws(JSONEncodingError) {
        try RepeatedField<MessageCodec<ProtoValue>>.writeJSON(values, to: &writer)
    }

    /// Reads a JSON array; `null` elements included.
    public mutating func decodeJSON(from reader: inout JSONReader) throws(JSONDecodingError) {
        reader.skipWhitespace()
        guard reader.peek() == UInt8(ascii: "[") else {
            throw .unexpectedCharacter(offset: reader.offset, expected: "a JSON array")
        }
        try RepeatedField<MessageCodec<ProtoValue>>.readJSON(from: &reader, into: &values)
    }
}
