/// The comparison a generated message's `==` makes for each stored property.
///
/// Generated code calls this one function instead of the `==` operator (or the `==`
/// Swift derives): choosing among the operator's hundreds of overloads at every property
/// was most of the time a module of messages took to type-check.
public enum FieldEquality {
    /// Whether `lhs` equals `rhs`, by `Value`'s own `==`.
    @inlinable @inline(__always)
    public static func equal<Value: Equatable>(_ lhs: Value, _ rhs: Value) -> Bool {
        lhs == rhs
    }
}
