/// Walks the members of one message's JSON object for generated code: it finds each member's
/// field by name, refuses a field named twice, and skips (or refuses, per
/// ``JSONDecodingOptions/ignoreUnknownFields``) members the message does not know.
///
/// Its methods are one call each from generated code, on purpose: what they do, inlined in
/// every message, made the module slower to compile and no faster to run.
public struct JSONFieldCursor {
    @usableFromInline let names: JSONFieldNames
    @usableFromInline var seen = JSONFieldsSeen()
    /// The name entry the last member matched, `-1` before the first.
    @usableFromInline var lastEntry = -1

    /// A cursor for a message whose names are `names`, before its first member.
    @inlinable
    public init(_ names: JSONFieldNames) {
        self.names = names
    }

    /// Reads up to the next member that names a field and consumes its colon: returns the
    /// field's position in ``JSONFieldNames``, or `nil` after the object's `}`.
    public mutating func next(in reader: inout JSONReader) throws(JSONDecodingError) -> Int? {
        while let name = try reader.nextKey() {
            // Objects usually list members in field order: the entry after the last match first.
            if let entry = names.entryIndex(of: name, expected: lastEntry + 1) {
                let position = names.position(ofEntry: entry)
                guard seen.insert(position) else { throw .duplicateField(message: names.messageName, name: name.string) }
                lastEntry = entry
                return position
            }
            try reader.skipUnknownField(name, in: names.messageName)
        }
        return nil
    }

    /// Records that the member just returned gives oneof `index` (in schema order) its value;
    /// throws if another member already did.
    public mutating func claimOneof(_ index: Int) throws(JSONDecodingError) {
        guard seen.insert(names.fieldCount + index) else {
            throw .oneofConflict(message: names.messageName, name: names.name(ofEntry: lastEntry))
        }
    }
}
