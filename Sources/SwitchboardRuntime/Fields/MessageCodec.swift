/// A nested message: length-delimited on the wire, an object in JSON.
public enum MessageCodec<Message: ProtoMessage>: FieldCodec {
    public static var wireType: WireType { .lengthDelimited }
    public static var defaultValue: Message { Message() }
    /// A message is "default" when it would encode to nothing.
    @inlinable public static func isDefault(_ value: Message) -> Bool { value.serializedSize() == 0 }
    @inlinable public static func encodedSize(of value: Message) -> Int {
        WireSize.lengthDelimited(value.serializedSize())
    }
    @inlinable public static func write(_ value: Message, to writer: inout WireWriter) {
        writer.writeLengthDelimited(value)
    }
    @inlinable public static func read(from reader: inout WireReader) throws(WireDecodingError) -> Message {
        var message = Message()
        try reader.mergeMessage(into: &message)
        return message
    }
    @inlinable public static func read(from reader: inout WireReader, mergingInto value: inout Message) throws(WireDecodingError) {
        try reader.mergeMessage(into: &value)
    }
    @inlinable public static var jsonNullIsValue: Bool { Message.jsonNullIsValue }
    @inlinable public static func writeJSON(_ value: Message, to writer: inout JSONWriter) throws(JSONEncodingError) {
        try value.encodeJSON(into: &writer)
    }
    @inlinable public static func readJSON(from reader: inout JSONReader) throws(JSONDecodingError) -> Message? {
        if !Message.jsonNullIsValue && reader.readNull() { return nil }
        var message = Message()
        try message.decodeJSON(from: &reader)
        return message
    }
}
