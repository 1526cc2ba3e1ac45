import SwitchboardHTTPSyntax

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
        for index in lists.elements.indices where HTTPSyntax.sameStorage(lists.elements[index].list, headers) {
            hits &+= 1
            return lists.elements[index].size
        }
        return HPACKHeader.listSize(headers)
    }

    /// Keeps a list sent (its size within the peer's limit) for the next time. The entry keeps
    /// the array alive, so its address cannot stand for another list meanwhile.
    mutating func keep(_ headers: [HPACKHeader], size: Int) {
        guard !headers.isEmpty, headers.count <= Self.fieldLimit, size <= Self.sizeLimit else { return }
        if lists.elements.contains(where: { HTTPSyntax.sameStorage($0.list, headers) }) { return }
        lists.insert((headers, size))
    }
}
