import Foundation

/// The client's requests awaiting their answer, by id. Once closed, every waiter and every
/// later request gets the close value at once, so nothing waits on a dead socket.
final class PendingRequests<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var nextID: UInt64
    private var waiting: [UInt64: CheckedContinuation<Value, Never>] = [:]
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

    /// Registers `id`, runs `start` (which sends the request), and waits for its answer.
    /// Cancelling the calling task answers `cancelled` and drops the entry.
    func wait(for id: UInt64, cancelled: Value, start: @escaping @Sendable () -> Void) async -> Value {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let immediate: Value? = lock.withLock {
                    if let closedValue { return closedValue }
                    waiting[id] = continuation
                    return nil
                }
                if let immediate {
                    continuation.resume(returning: immediate)
                } else if Task.isCancelled {
                    // The cancellation handler ran before the entry existed.
                    resume(id, with: cancelled)
                } else {
                    start()
                }
            }
        } onCancel: {
            self.resume(id, with: cancelled)
        }
    }

    /// Answers `id`; an unknown or already answered id is ignored.
    func resume(_ id: UInt64, with value: Value) {
        lock.withLock { waiting.removeValue(forKey: id) }?.resume(returning: value)
    }

    /// Answers every waiter with `value`, and every later request too. The first close wins.
    func close(with value: Value) {
        let waiters = lock.withLock { () -> [CheckedContinuation<Value, Never>] in
            if closedValue == nil { closedValue = value }
            defer { waiting.removeAll() }
            return Array(waiting.values)
        }
        let answer = lock.withLock { closedValue } ?? value
        for waiter in waiters { waiter.resume(returning: answer) }
    }
}
