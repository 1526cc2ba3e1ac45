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
}
