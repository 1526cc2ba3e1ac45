import Foundation
import SwitchboardRuntime

/// The client's requests awaiting their answer, by id, with their deadlines. Once closed,
/// every waiter and every later request gets the close value at once, so nothing waits
/// on a dead socket.
final class PendingRequests<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var nextID: UInt64
    private var waiting: [UInt64: FirstAnswer<Value>] = [:]
    private var deadlines: [UInt64: ContinuousClock.Instant] = [:]
    private var closedValue: Value?

    /// `firstID` is where the id counter starts.
    init(firstID: UInt64) { nextID = firstID }

    /// The next id, wrapping at 2^64.
    func makeID() -> UInt64 {
        lock.withLock {
            defer { nextID &+= 1 }
            return nextID
        }
    }

    /// Registers `id` before its request is sent, so an answer can never arrive unclaimed.
    func register(_ id: UInt64, deadline: ContinuousClock.Instant?) -> FirstAnswer<Value> {
        let slot = FirstAnswer<Value>()
        let closed: Value? = lock.withLock {
            if let closedValue { return closedValue }
            waiting[id] = slot
            if let deadline { deadlines[id] = deadline }
            return nil
        }
        if let closed { _ = slot.offer(closed) }
        return slot
    }

    /// Answers `id`; `false` for an unknown or already answered id, which is otherwise ignored.
    @discardableResult
    func resume(_ id: UInt64, with value: Value) -> Bool {
        let slot = lock.withLock { () -> FirstAnswer<Value>? in
            deadlines.removeValue(forKey: id)
            return waiting.removeValue(forKey: id)
        }
        return slot?.offer(value) ?? false
    }

    /// The earliest deadline still pending.
    var nextDeadline: ContinuousClock.Instant? { lock.withLock { deadlines.values.min() } }

    /// Answers every request whose deadline is at or before `now` with `value`.
    func expire(now: ContinuousClock.Instant, with value: Value) {
        let expired = lock.withLock { () -> [FirstAnswer<Value>] in
            let due = deadlines.filter { $0.value <= now }.map(\.key)
            return due.compactMap { id in
                deadlines.removeValue(forKey: id)
                return waiting.removeValue(forKey: id)
            }
        }
        for slot in expired { _ = slot.offer(value) }
    }

    /// Answers every waiter with `value`, and every later request too. The first close wins.
    func close(with value: Value) {
        let (slots, answer) = lock.withLock { () -> ([FirstAnswer<Value>], Value) in
            if closedValue == nil { closedValue = value }
            defer {
                waiting.removeAll()
                deadlines.removeAll()
            }
            return (Array(waiting.values), closedValue ?? value)
        }
        for slot in slots { _ = slot.offer(answer) }
    }
}
