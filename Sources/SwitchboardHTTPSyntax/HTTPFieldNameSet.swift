/// A fixed set of field names looked up without hashing: only the names of the asked name's
/// UTF-8 length are compared. For the few dozen names (reserved, log-visible) asked about for
/// every header of every call, where hashing each name cost more than the comparisons.
///
/// Like ``HTTPSyntax``, public only for the other modules of this package; not API.
public struct HTTPFieldNameSet: Sendable {
    private let byLength: [[String]]

    /// A set of `names`, as given (a caller that compares lowercased gives lowercase names).
    public init(_ names: some Sequence<String>) {
        var buckets: [[String]] = []
        for name in names {
            let length = name.utf8.count
            while buckets.count <= length { buckets.append([]) }
            buckets[length].append(name)
        }
        byLength = buckets
    }

    /// Whether `name` is in the set, compared exactly.
    public func contains(_ name: String) -> Bool {
        let length = name.utf8.count
        return length < byLength.count && byLength[length].contains(name)
    }

    /// Whether `name`, lowercased, is in the set. A name already lowercase ASCII is not copied;
    /// a name whose lowercase form has another UTF-8 length (one with a Kelvin sign, say) is
    /// not in the set, whatever it lowercases to.
    public func containsLowercased(_ name: String) -> Bool {
        let length = name.utf8.count
        guard length < byLength.count, !byLength[length].isEmpty else { return false }
        let needsLowering = name.utf8.contains { ($0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z")) || $0 >= 0x80 }
        return byLength[length].contains(needsLowering ? name.lowercased() : name)
    }
}
