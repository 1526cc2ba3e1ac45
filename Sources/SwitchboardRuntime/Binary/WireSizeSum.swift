/// The running total of a generated `serializedSize()`.
///
/// Generated code adds each field through these methods rather than `+=`: an operator makes
/// the type checker weigh every `+=` overload at each field, and in a debug build it inlines
/// an overflow check per use, where a method is one call. Measured on a 200-message schema,
/// the module's debug build took about a quarter less CPU time.
public struct WireSizeSum {
    /// The bytes counted so far.
    public var total: Int

    /// Starts the count at `initial` bytes (a message's unknown fields).
    @inlinable
    public init(_ initial: Int) {
        total = initial
    }

    /// Adds a field's payload size and the size of its tag.
    @inlinable
    public mutating func add(_ payloadSize: Int, tagSize: Int) {
        total += payloadSize + tagSize
    }

    /// Adds a size that already counts its tags (a repeated or map field).
    @inlinable
    public mutating func add(_ size: Int) {
        total += size
    }
}
