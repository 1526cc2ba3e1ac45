/// The sizes of the last header lists a connection sent, by the lists' storage: a server
/// sends its shared answer and trailers, a client its transport's kept request lists, as the
/// same arrays call after call, so each is measured once.
///
/// Bounded: ``capacity`` lists of at most ``fieldLimit`` fields and ``sizeLimit`` bytes, and
/// only lists the peer's limit let through (a rejected list is not kept alive).
struct MeasuredHeaderLists: Sendable {
    static let capacity = 3
    static let fieldLimit = 32
    static let sizeLimit = 4096

    private var lists = OldestReplacedList<(list: [HPACKHeader], size: Int)>(capacity: capacity)
    /// Sizes taken from memory so far (for tests).
    private(set) var hits = 0

    /// The list's size as HPACK counts it (each field's name and value, plus 32).
    mutating func size(of headers: [HPACKHeader]) -> Int {
        guard !headers.isEmpty else { return 0 }
        let base = headers.withUnsafeBufferPointer { $0.baseAddress }
        for index in lists.elements.indices where lists.elements[index].list.count == headers.count
            && lists.elements[index].list.withUnsafeBufferPointer({ $0.baseAddress }) == base {
            hits &+= 1
            return lists.elements[index].size
        }
        // By position in the array's buffer: `reduce` copied each field (two retains and
        // releases) to measure it.
        return headers.withUnsafeBufferPointer { fields in
            var size = 0
            for index in fields.indices { size += fields[index].size }
            return size
        }
    }

    /// Keeps a list sent (its size within the peer's limit) for the next time. The entry keeps
    /// the array alive, so its address cannot stand for another list meanwhile.
    mutating func keep(_ headers: [HPACKHeader], size: Int) {
        guard !headers.isEmpty, headers.count <= Self.fieldLimit, size <= Self.sizeLimit else { return }
        let base = headers.withUnsafeBufferPointer { $0.baseAddress }
        if lists.elements.contains(where: { $0.list.withUnsafeBufferPointer { $0.baseAddress } == base && $0.list.count == headers.count }) { return }
        lists.insert((headers, size))
    }
}
