/// Streams waiting for the peer's MAX_CONCURRENT_STREAMS (or the bytes already waiting for
/// its windows) to let them open, first come first served. Giving up on one (its call's deadline) and opening the next cost the same however
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

    /// Tokens still held in the arrival order, given-up ones included (for tests).
    var heldTokenCount: Int { order.count - head }

    /// Drops the stream `token` names; `false` if it is not waiting.
    mutating func remove(_ token: UInt64) -> Bool {
        guard byToken.removeValue(forKey: token) != nil else { return false }
        // Given-up tokens otherwise leave only from the front, when a stream opens: a peer
        // that never lets one open would make every deadline that passes leave one behind.
        if byToken.isEmpty {
            order.removeAll(keepingCapacity: true)
            head = 0
        } else if order.count - head > 2 * byToken.count + 1024 {
            // Mostly given up: the waiting ones kept, in order. At least half the held
            // tokens were dropped since the last rebuild, so the work is amortised.
            order = order[head...].filter { byToken[$0] != nil }
            head = 0
        }
        return true
    }

    /// The longest-waiting stream, left in place (given-up ones before it are let go).
    mutating func first() -> Pending? {
        while head < order.count {
            if let pending = byToken[order[head]] { return pending }
            head += 1
        }
        order.removeAll(keepingCapacity: true)
        head = 0
        return nil
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
