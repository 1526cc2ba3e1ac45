/// Heap storage for a singular message field that may contain its own message type, even
/// through fields that are never absent (`message Node { 1 next: Node }`, as protobuf allows).
///
/// Empty until set: the default value is made on read, so creating a message never recurses.
/// Equality and hashing see the value, so an empty box equals one holding the default.
public struct LazyBox<Value: ProtoMessage>: Sendable, Hashable {
    @usableFromInline var box: IndirectBox<Value>?

    /// An empty box, which reads as the default message.
    @inlinable
    public init() {}

    /// The boxed message, or the default when none was set.
    @inlinable
    public var value: Value {
        get { box?.value ?? Value() }
        set { box = IndirectBox(newValue) }
    }

    /// The message set, or `nil` when none was: what encoders look at, since reading the
    /// default of a message that contains itself would never end.
    @inlinable
    public var storedValue: Value? { box?.value }

    /// Merges the next message on the wire into the boxed one, in place: the box is emptied
    /// first so its value is not shared.
    @inlinable
    public mutating func merge(from reader: inout WireReader) throws(WireDecodingError) {
        var merged = box?.value ?? Value()
        box = nil
        defer { box = IndirectBox(merged) }
        try reader.mergeMessage(into: &merged)
    }

    public static func == (lhs: LazyBox, rhs: LazyBox) -> Bool {
        if lhs.box == nil && rhs.box == nil { return true }
        return lhs.value == rhs.value
    }

    /// Hashes the value; the default hashes alike whether it was set or not (and hashing it
    /// does not build the endless chain of defaults a self-containing message implies).
    public func hash(into hasher: inout Hasher) {
        guard let value = box?.value, value != Value() else {
            hasher.combine(false)
            return
        }
        hasher.combine(true)
        hasher.combine(value)
    }
}
