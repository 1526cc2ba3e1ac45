import Foundation

/// A message type generated from a schema `message`.
///
/// Generated types implement the four codec entry points; the public API
/// (`serializedBytes()`, `init(jsonString:)` and friends) lives in extensions.
public protocol ProtoMessage: Sendable, Hashable {
    /// A message with every field at its default.
    init()
    /// The fully qualified schema name, such as `signal.chat.ChatMessage`.
    static var protoMessageName: String { get }
    /// Fields kept from a decode that this schema version does not know.
    var unknownFields: UnknownFields { get set }

    /// The number of bytes ``serialize(into:)`` writes.
    func serializedSize() -> Int
    /// Writes every field in field-number order, then the unknown fields.
    func serialize(into writer: inout WireWriter)
    /// Decodes fields until the reader's current message ends, merging into `self`.
    mutating func decodeFields(from reader: inout WireReader) throws(WireDecodingError)
    /// Writes the members of the JSON object, without the braces.
    func encodeJSONFields(into writer: inout JSONWriter) throws(JSONEncodingError)
    /// Reads members of a JSON object whose opening brace was consumed, through the closing one.
    mutating func decodeJSONFields(from reader: inout JSONReader) throws(JSONDecodingError)

    /// Writes the message's JSON value: an object of its fields, unless the type has a JSON
    /// form of its own (the well-known types: `"1.5s"` for a Duration, say).
    func encodeJSON(into writer: inout JSONWriter) throws(JSONEncodingError)
    /// Reads the message's JSON value, merging into `self`; the counterpart of ``encodeJSON(into:)``.
    mutating func decodeJSON(from reader: inout JSONReader) throws(JSONDecodingError)
    /// Whether JSON `null` is a value of this type (`google.protobuf.Value`) rather than "unset".
    static var jsonNullIsValue: Bool { get }
    /// Whether the JSON form is an object of the fields (false for the well-known types with a
    /// form of their own, which an Any nests under `"value"`).
    static var jsonIsFieldObject: Bool { get }
}

extension ProtoMessage {
    @inlinable
    public func encodeJSON(into writer: inout JSONWriter) throws(JSONEncodingError) {
        // Inside an Any, whose bytes were decoded with up to three wire levels a JSON level
        // (a Struct's), a message past the depth left stops here rather than recursing on.
        if writer.anyDepth > 0 && writer.depth >= writer.maximumDepth { throw writer.tooDeepInAny }
        writer.beginObject()
        try encodeJSONFields(into: &writer)
        writer.endObject()
    }

    @inlinable
    public mutating func decodeJSON(from reader: inout JSONReader) throws(JSONDecodingError) {
        try reader.beginObject()
        try decodeJSONFields(from: &reader)
    }

    @inlinable
    public static var jsonNullIsValue: Bool { false }

    @inlinable
    public static var jsonIsFieldObject: Bool { true }
}
