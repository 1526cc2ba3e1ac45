/// One header field as HPACK carries it.
public struct HPACKHeader: Sendable, Hashable, CustomStringConvertible {
    /// How an encoder may store the field in its dynamic table.
    public enum Indexing: Sendable, Hashable {
        /// The encoder decides (it indexes fields that are likely to repeat).
        case automatic
        /// Never added to a table, by this encoder or any intermediary that re-encodes it
        /// (RFC 7541 §7.1.3): for secrets, which an attacker could otherwise probe for by
        /// guessing values and watching the compressed size.
        case never
    }

    /// The field name, lowercase on HTTP/2.
    public var name: String
    /// The field value.
    public var value: String
    /// How it may be indexed; a decoded field says `.never` when its sender asked so.
    public var indexing: Indexing

    /// Creates a field.
    public init(_ name: String, _ value: String, indexing: Indexing = .automatic) {
        self.name = name
        self.value = value
        self.indexing = indexing
    }

    /// What a field costs in a dynamic table and counts against a header list limit:
    /// its name and value in octets, plus 32 (RFC 7541 §4.1).
    public var size: Int { name.utf8.count + value.utf8.count + 32 }

    /// A list's size by the same measure: what counts against a header list limit.
    package static func listSize(_ headers: [HPACKHeader]) -> Int {
        // By position in the array's buffer: `reduce` copied each field (two retains and
        // releases) to measure it.
        headers.withUnsafeBufferPointer { fields in
            var size = 0
            for index in fields.indices { size += fields[index].size }
            return size
        }
    }

    /// The name, and the value unless the field is never indexed (a secret).
    public var description: String { indexing == .never ? "\(name): <redacted>" : "\(name): \(value)" }
}
