/// Streams waiting for the peer's MAX_CONCURRENT_STREAMS to let them open, first come first
/// served. Giving up on one (its call's deadline) and opening the next cost the same however
/// many wait: a peer that allows no streams at all must not make each cancellation a scan.
struct WaitingOpens<Pending> {
    private var byToken: [UInt64: Pending] = [:]
    /// Tokens in arrival order; those given up on stay until they reach the front.
    private var order: [UInt64] = []
    private var head = 0

    var count: Int { byToken.count }
    var isEmpty: Bool { byToken.isEmpty }

    mutating func append(_ pending: Pending, token: UInt64) {
        byToken[token] = pending
        order.append(token)
    }

    /// Drops the stream `token` names; `false` if it is not waiting.
    mutating func remove(_ token: UInt64) -> Bool {
        byToken.removeValue(forKey: token) != nil
    }

    /// The longest-waiting stream, taken out.
    mutating func popFirst() -> Pending? {
        while head < order.count {
            let token = order[head]
            head += 1
            if let pending = byToken.removeValue(forKey: token) {
                compact()
                return pending
            }
        }
        order.removeAll(keepingCapacity: true)
        head = 0
        return nil
    }

    /// Every waiting stream, in order, taken out.
    mutating func removeAll() -> [Pending] {
        var all: [Pending] = []
        while let pending = popFirst() { all.append(pending) }
        return all
    }

    private mutating func compact() {
        if head == order.count {
            order.removeAll(keepingCapacity: true)
            head = 0
        } else if head > 1024, head * 2 > order.count {
            order.removeFirst(head)
            head = 0
        }
    }
}
