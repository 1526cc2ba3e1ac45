/// Immutable heap storage that lets a message hold a field of its own type.
///
/// Swift structs cannot contain themselves; generated code stores recursive
/// fields in a box and exposes them through a computed property. Value
/// semantics hold because the box is never mutated, only replaced.
public final class IndirectBox<Value: Sendable & Hashable>: Sendable, Hashable {
    /// The boxed value.
    public let value: Value

    /// Boxes `value`.
    @inlinable
    public init(_ value: Value) { self.value = value }

    public static func == (lhs: IndirectBox, rhs: IndirectBox) -> Bool {
        lhs === rhs || lhs.value == rhs.value
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(value) }
}
