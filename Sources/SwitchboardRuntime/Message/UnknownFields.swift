/// Fields a decoder did not recognise, kept as raw wire bytes so that re-encoding
/// a message written by a newer schema loses nothing.
public struct UnknownFields: Sendable, Hashable {
    /// The raw bytes of every unknown field, tags included, in arrival order.
    public var bytes: [UInt8] { storage }
    @usableFromInline var storage: [UInt8]

    /// An empty set; allocates nothing.
    @inlinable
    public init() { storage = [] }

    /// Creates a set from raw wire bytes.
    public init(bytes: [UInt8]) { storage = bytes }

    /// Whether no unknown field was kept.
    @inlinable
    public var isEmpty: Bool { storage.isEmpty }

    /// The encoded size of the kept fields.
    @inlinable
    public var count: Int { storage.count }

    @inlinable
    mutating func append(_ raw: UnsafeRawBufferPointer) {
        storage.append(contentsOf: raw)
    }

    /// Appends `other`'s fields after these, in place (as merging a message does).
    public mutating func append(contentsOf other: UnknownFields) {
        storage.append(contentsOf: other.storage)
    }

    /// Writes the kept fields back out unchanged.
    @inlinable
    public func write(to writer: inout WireWriter) {
        if !storage.isEmpty { writer.writeRawBytes(storage) }
    }
}

extension UnknownFields: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The size only: a field this schema does not know may be one a newer schema marks
    /// `@sensitive`, so its bytes never reach a log.
    public var description: String { "UnknownFields(\(LogRedaction.body(storage.count)))" }
    public var debugDescription: String { description }
    /// What `dump` and `Mirror` see: the size, not the bytes.
    public var customMirror: Mirror { Mirror(self, children: ["size": LogRedaction.body(storage.count)], displayStyle: .struct) }
}
