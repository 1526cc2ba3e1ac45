/// A connection's open streams by id (the core's stream states, the driver's delegates).
/// Open addressing with linear probing on the id's bits
/// (multiply-shift hashing with a random odd multiplier per connection, a universal family)
/// instead of a `Dictionary`: its SipHash costs about 130 instructions a lookup, and a unary call
/// looks its stream up dozens of times on each side. The peer picks its ids, but cannot know the
/// multiplier, so it cannot pick ids that collide; and no more streams than
/// MAX_CONCURRENT_STREAMS (and this side's own) are ever held, which bounds any probe.
struct HTTP2StreamMap<Value> {
    /// 0 marks an empty slot: no stream has id 0.
    private var ids: [UInt32]
    private var states: [Value?]
    /// How many streams are held.
    private(set) var count = 0
    /// 32 minus log2 of the capacity: the hash keeps the product's top bits.
    private var shift: UInt32
    private let multiplier: UInt32

    private static var initialCapacity: Int { 8 }

    /// A table hashing with a random multiplier.
    init() {
        self.init(multiplier: UInt32.random(in: 0...UInt32.max))
    }

    /// A table hashing with `multiplier` (made odd): tests choose it, to repeat a run.
    init(multiplier: UInt32) {
        ids = Array(repeating: 0, count: Self.initialCapacity)
        states = Array(repeating: nil, count: Self.initialCapacity)
        shift = UInt32(32 - Self.initialCapacity.trailingZeroBitCount)
        self.multiplier = multiplier | 1
    }

    /// Whether no stream is held.
    var isEmpty: Bool { count == 0 }

    /// The ids held, in no particular order (a copy: the table may change while it is walked).
    var keys: [UInt32] { ids.filter { $0 != 0 } }

    /// The values held, in no particular order (a copy).
    var values: [Value] { states.compactMap { $0 } }

    /// The stream with `id`; setting nil removes it.
    subscript(id: UInt32) -> Value? {
        get { slot(of: id).map { states[$0] } ?? nil }
        set {
            if let slot = slot(of: id) {
                if let newValue { states[slot] = newValue } else { remove(at: slot) }
            } else if let newValue {
                insert(newValue, for: id)
            }
        }
    }

    /// Removes the stream with `id` and returns it.
    @discardableResult
    mutating func removeValue(forKey id: UInt32) -> Value? {
        guard let slot = slot(of: id) else { return nil }
        let removed = states[slot]
        remove(at: slot)
        return removed
    }

    /// Removes every stream.
    mutating func removeAll() {
        self = HTTP2StreamMap(multiplier: multiplier)
    }

    private var mask: Int { ids.count - 1 }

    private func home(of id: UInt32) -> Int {
        Int((id &* multiplier) >> shift)
    }

    private func slot(of id: UInt32) -> Int? {
        guard id != 0 else { return nil }
        var index = home(of: id)
        while true {
            let held = ids[index]
            if held == id { return index }
            if held == 0 { return nil }
            index = (index &+ 1) & mask
        }
    }

    private mutating func insert(_ state: Value, for id: UInt32) {
        precondition(id != 0, "stream 0 is the connection")
        // At most half full, so probes stay short.
        if (count + 1) * 2 > ids.count { grow() }
        var index = home(of: id)
        while ids[index] != 0 { index = (index &+ 1) & mask }
        ids[index] = id
        states[index] = state
        count += 1
    }

    private mutating func grow() {
        let oldIDs = ids, oldStates = states
        ids = Array(repeating: 0, count: oldIDs.count * 2)
        states = Array(repeating: nil, count: oldIDs.count * 2)
        shift -= 1
        count = 0
        for (index, id) in oldIDs.enumerated() where id != 0 {
            if let state = oldStates[index] { insert(state, for: id) }
        }
    }

    /// Empties `slot` and moves later members of its run back, so every lookup's probe stays
    /// unbroken without tombstones.
    private mutating func remove(at slot: Int) {
        var hole = slot
        ids[hole] = 0
        states[hole] = nil
        count -= 1
        var next = (hole &+ 1) & mask
        while ids[next] != 0 {
            let wanted = home(of: ids[next])
            // The member at `next` may fill the hole unless its home lies cyclically in (hole, next].
            let staysPut = hole <= next ? (wanted > hole && wanted <= next) : (wanted > hole || wanted <= next)
            if !staysPut {
                ids[hole] = ids[next]
                states[hole] = states[next]
                ids[next] = 0
                states[next] = nil
                hole = next
            }
            next = (next &+ 1) & mask
        }
    }
}

extension HTTP2StreamMap: Sendable where Value: Sendable {}

/// The core's streams.
typealias HTTP2StreamTable = HTTP2StreamMap<HTTP2StreamState>
