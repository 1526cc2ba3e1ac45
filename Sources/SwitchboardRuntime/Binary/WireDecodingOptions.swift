/// Options for decoding the binary wire format.
public struct WireDecodingOptions: Sendable, Hashable {
    /// The deepest nesting of messages and groups accepted before decoding fails
    /// with ``WireDecodingError/nestingTooDeep(limit:)``. Bounds stack use on hostile input.
    public var maximumDepth: Int
    /// Drops unknown fields instead of keeping them for re-encoding.
    public var discardUnknownFields: Bool

    /// Creates options; the defaults match protobuf's (depth 100, unknown fields kept).
    public init(maximumDepth: Int = 100, discardUnknownFields: Bool = false) {
        self.maximumDepth = maximumDepth
        self.discardUnknownFields = discardUnknownFields
    }
}
