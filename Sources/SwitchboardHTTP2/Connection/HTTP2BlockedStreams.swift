/// Streams whose data waits for flow-control window, in the order they blocked (the first to
/// block is the first served when window opens). A set beside the order makes "is it already
/// waiting?" one lookup: a stream puts itself back after each flush that leaves it short, and
/// scanning the list for it made each walk of n waiting streams cost n².
struct HTTP2BlockedStreams {
    private(set) var order: [UInt32] = []
    private var members: Set<UInt32> = []

    var isEmpty: Bool { order.isEmpty }
    var count: Int { order.count }

    /// Adds `id` at the end, unless it already waits.
    mutating func insert(_ id: UInt32) {
        if members.insert(id).inserted { order.append(id) }
    }

    /// Removes `id` if it waits.
    mutating func remove(_ id: UInt32) {
        guard members.remove(id) != nil else { return }
        order.removeAll { $0 == id }
    }

    /// Every waiting stream, in order; none waits afterwards.
    mutating func takeAll() -> [UInt32] {
        let taken = order
        order = []
        members.removeAll(keepingCapacity: true)
        return taken
    }

    mutating func removeAll() {
        order = []
        members = []
    }
}
