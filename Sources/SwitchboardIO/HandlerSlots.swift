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

    /// A token is the generation above the slot, and fits a pointer, since kqueue carries it
    /// in `udata`: 32 bits of each on 64-bit platforms; on 32-bit ones (arm64_32 watches) 20
    /// bits of slot (about a million registrations) and 12 of generation.
    static var slotBits: Int { UInt.bitWidth == 64 ? 32 : 20 }
    private static var slotMask: UInt64 { (1 << UInt64(slotBits)) - 1 }
    private static var lastGeneration: UInt32 { UInt.bitWidth == 64 ? .max : (1 << 12) - 1 }

    /// The slot a token names.
    static func slot(of token: UInt64) -> Int { Int(truncatingIfNeeded: token & slotMask) }

    /// Holds `handler` and returns the token that names it until it is removed; nil when
    /// every slot a token can name is taken.
    mutating func insert(_ handler: any IOHandler) -> UInt64? {
        let slot: Int
        if let reused = free.popLast() {
            slot = reused
            handlers[slot] = handler
        } else {
            // The last slot is never used, so no token is all ones (the selector's wakeup token).
            guard UInt64(handlers.count) < Self.slotMask else { return nil }
            slot = handlers.count
            handlers.append(handler)
            generations.append(1)
        }
        count += 1
        // Generations start at 1, so no token is 0 (what channels keep for "not registered").
        return UInt64(generations[slot]) << UInt64(Self.slotBits) | UInt64(slot)
    }

    /// The handler `token` names, or nil once it was removed.
    subscript(token: UInt64) -> (any IOHandler)? {
        guard let slot = live(token) else { return nil }
        return handlers[slot]
    }

    /// Drops the handler `token` names; a token already removed is ignored.
    mutating func remove(_ token: UInt64) {
        guard let slot = live(token), handlers[slot] != nil else { return }
        release(slot)
        count -= 1
    }

    /// Every handler held, each once.
    var live: [any IOHandler] {
        var seen = Set<ObjectIdentifier>()
        return handlers.compactMap { $0 }.filter { seen.insert(ObjectIdentifier($0)).inserted }
    }

    /// Drops every handler; tokens handed out before find nothing.
    mutating func removeAll() {
        for slot in handlers.indices where handlers[slot] != nil { release(slot) }
        count = 0
    }

    /// The slot `token` names while its generation is current.
    private func live(_ token: UInt64) -> Int? {
        let slot = Self.slot(of: token)
        guard slot < handlers.count, UInt64(generations[slot]) == token >> UInt64(Self.slotBits) else { return nil }
        return slot
    }

    private mutating func release(_ slot: Int) {
        handlers[slot] = nil
        generations[slot] = generations[slot] == Self.lastGeneration ? 1 : generations[slot] + 1
        free.append(slot)
    }
}
