/// An event loop's registrations by token: a slot per registration with a generation
/// count, so finding the handler for an event is an index and a comparison, not a
/// dictionary's hash (about 140 instructions an event). A removed registration's token,
/// which events already read may still carry, finds nothing, even once its slot is reused:
/// removal moves the slot to its next generation.
struct HandlerSlots {
    private var handlers: [(any IOHandler)?] = []
    private var generations: [UInt32] = []
    /// Slots free for reuse, most recently freed last.
    private var free: [Int] = []

    /// Registrations held.
    private(set) var count = 0

    /// Holds `handler`; the token names it until it is removed.
    mutating func insert(_ handler: any IOHandler) -> UInt64 {
        let slot: Int
        if let reused = free.popLast() {
            slot = reused
            handlers[slot] = handler
        } else {
            slot = handlers.count
            handlers.append(handler)
            generations.append(1)
        }
        count += 1
        // Generations start at 1, so no token is 0 (what channels keep for "not registered");
        // slots stay far below 2^32 (each is an open descriptor), so none is all ones (the
        // selector's wakeup token).
        return UInt64(generations[slot]) << 32 | UInt64(slot)
    }

    /// The handler `token` names, or nil once it was removed.
    subscript(token: UInt64) -> (any IOHandler)? {
        let slot = Int(truncatingIfNeeded: token & 0xFFFF_FFFF)
        guard slot < handlers.count, generations[slot] == UInt32(truncatingIfNeeded: token >> 32) else { return nil }
        return handlers[slot]
    }

    /// Drops the handler `token` names; a token already removed is ignored.
    mutating func remove(_ token: UInt64) {
        let slot = Int(truncatingIfNeeded: token & 0xFFFF_FFFF)
        guard slot < handlers.count, generations[slot] == UInt32(truncatingIfNeeded: token >> 32), handlers[slot] != nil else { return }
        release(slot)
        count -= 1
    }

    /// Drops every handler; tokens handed out before find nothing.
    mutating func removeAll() {
        for slot in handlers.indices where handlers[slot] != nil { release(slot) }
        count = 0
    }

    private mutating func release(_ slot: Int) {
        handlers[slot] = nil
        generations[slot] = generations[slot] == .max ? 1 : generations[slot] + 1
        free.append(slot)
    }
}
