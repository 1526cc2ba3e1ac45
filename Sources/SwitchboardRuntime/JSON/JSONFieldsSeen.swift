/// The members a JSON object has set so far, by the field's position in its message (and a
/// oneof's, after the fields), so a repeated member, or a second member of one oneof, is an
/// error instead of silently replacing the first: protobuf's JSON parsers refuse both.
public struct JSONFieldsSeen: Sendable {
    @usableFromInline var first64: UInt64 = 0
    @usableFromInline var beyond: Set<Int> = []

    /// Nothing seen yet; allocates nothing for messages of up to 64 fields and oneofs.
    @inlinable
    public init() {}

    /// Records field `position`, named `name` in the input; throws if it was seen before.
    @inlinable
    public mutating func field(_ position: Int, _ name: JSONName, in message: String) throws(JSONDecodingError) {
        guard insert(position) else { throw .duplicateField(message: message, name: name.string) }
    }

    /// Records that oneof `position` has a member with a value; throws if it had one already.
    @inlinable
    public mutating func oneof(_ position: Int, _ name: JSONName, in message: String) throws(JSONDecodingError) {
        guard insert(position) else { throw .oneofConflict(message: message, name: name.string) }
    }

    // Always inlined: `JSONFieldCursor` checks every member with it, and a call costs more.
    @inlinable @inline(__always)
    mutating func insert(_ position: Int) -> Bool {
        if position < 64 {
            let bit: UInt64 = 1 << UInt64(position)
            defer { first64 |= bit }
            return first64 & bit == 0
        }
        return beyond.insert(position).inserted
    }
}
