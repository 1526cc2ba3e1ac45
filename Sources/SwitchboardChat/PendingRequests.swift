import Foundation
import SwitchboardIO

/// The client's requests awaiting their answer, by id, with their deadlines. Once closed,
/// every waiter and every later request gets the close value at once, so nothing waits
/// on a dead socket.
///
/// Each request is one dictionary entry holding its waiter and deadline directly, so a call
/// costs no objects of its own beyond the continuation and one hash insert and removal:
/// this sits on every request's path. Deadlines are scanned only when the timer fires.
final class PendingRequests<Value: Sendable>: @unchecked Sendable {
    /// Where one request is: sent, with its caller waiting, or answered before it waited.
    private enum Slot {
        case registered
        case waiting(UnsafeContinuation<Value, Never>)
        case answered(Value)
    }

    private struct Entry {
        var slot: Slot
        var deadline: ContinuousClock.Instant?
    }

    private let lock = AdaptiveLock()
    // Stored state below is reached only under its lock or on the loop's thread, which
    // already makes each access exclusive: `@exclusivity(unchecked)` drops the runtime's own
    // check, about 80 instructions an access and 5% of a call (docs/performance.md).
    @exclusivity(unchecked) private var nextID: UInt64
    @exclusivity(unchecked) private var entries: [UInt64: Entry] = [:]
    @exclusivity(unchecked) private var closedValue: Value?

    /// `firstID` is where the id counter starts.
    init(firstID: UInt64) { nextID = firstID }

    /// The next id, wrapping at 2^64, for a request nobody waits on (a keepalive).
    func makeID() -> UInt64 {
        lock.withLock { takeID() }
    }

    /// Takes the next id and registers it before its request is sent, so an answer can
    /// never arrive unclaimed. Once closed, the id is answered with the close value.
    func register(deadline: ContinuousClock.Instant?) -> UInt64 {
        lock.withLock {
            let id = takeID()
            if let closedValue {
                entries[id] = Entry(slot: .answered(closedValue))
            } else {
                entries[id] = Entry(slot: .registered, deadline: deadline)
            }
            return id
        }
    }

    /// Waits for the answer to a registered `id`; each id is waited on once. `fallback`
    /// answers an id that is not registered, which the callers never do.
    func answer(to id: UInt64, fallback: @autoclosure () -> Value) async -> Value {
        await withUnsafeContinuation { continuation in
            let ready = lock.withLock { () -> Value? in
                // One hash lookup, then the entry is changed in place.
                guard let index = entries.index(forKey: id) else { return closedValue ?? fallback() }
                switch entries.values[index].slot {
                case .registered:
                    entries.values[index].slot = .waiting(continuation)
                    return nil
                case let .answered(value):
                    entries.remove(at: index)
                    return value
                case .waiting:
                    return closedValue ?? fallback()
                }
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    /// Answers `id`; `false` for an unknown or already answered id, which is otherwise ignored.
    @discardableResult
    func resume(_ id: UInt64, with value: Value) -> Bool {
        let outcome = lock.withLock { settle(id, with: value) }
        guard let outcome else { return false }
        outcome?.resume(returning: value)
        return true
    }

    /// The earliest deadline still pending.
    var nextDeadline: ContinuousClock.Instant? { lock.withLock { entries.values.lazy.compactMap(\.deadline).min() } }

    /// Answers every request whose deadline is at or before `now` with `value`.
    func expire(now: ContinuousClock.Instant, with value: Value) {
        let waiters = lock.withLock { () -> [UnsafeContinuation<Value, Never>] in
            let due = entries.filter { $0.value.deadline.map { $0 <= now } ?? false }.map(\.key)
            return due.compactMap { id in settle(id, with: value) ?? nil }
        }
        for waiter in waiters { waiter.resume(returning: value) }
    }

    /// Answers every waiter with `value`, and every later request too. The first close wins.
    func close(with value: Value) {
        let (waiters, answer) = lock.withLock { () -> ([UnsafeContinuation<Value, Never>], Value) in
            let answer = closedValue ?? value
            closedValue = answer
            var waiters: [UnsafeContinuation<Value, Never>] = []
            for (id, entry) in entries {
                switch entry.slot {
                case let .waiting(waiter):
                    waiters.append(waiter)
                    entries.removeValue(forKey: id)
                case .registered:
                    entries[id] = Entry(slot: .answered(answer))
                case .answered:
                    break
                }
            }
            return (waiters, answer)
        }
        for waiter in waiters { waiter.resume(returning: answer) }
    }

    /// Called with the lock held.
    private func takeID() -> UInt64 {
        defer { nextID &+= 1 }
        return nextID
    }

    /// Records the answer for `id`, with the lock held. `nil` if `id` is unknown or already
    /// answered; otherwise the waiter to resume (outside the lock), if one is waiting yet.
    private func settle(_ id: UInt64, with value: Value) -> UnsafeContinuation<Value, Never>?? {
        guard let index = entries.index(forKey: id) else { return nil }
        switch entries.values[index].slot {
        case .registered:
            entries.values[index] = Entry(slot: .answered(value))
            return .some(nil)
        case let .waiting(waiter):
            entries.remove(at: index)
            return .some(waiter)
        case .answered:
            return nil
        }
    }
}
