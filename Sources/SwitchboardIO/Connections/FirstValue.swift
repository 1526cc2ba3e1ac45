import Foundation

/// The first of several offered values, handed to one waiter: a connection attempt, a
/// deadline and a cancellation racing, say. Later offers are dropped, and an offer made before
/// anyone waits is kept for the waiter.
package final class FirstValue<Value: Sendable>: @unchecked Sendable {
    private let lock = AdaptiveLock()
    private var settled: Value?
    private var waiter: CheckedContinuation<Value, Never>?

    package init() {}

    /// Settles the value unless it is settled already.
    package func offer(_ value: Value) {
        let waiting: CheckedContinuation<Value, Never>? = lock.withLock {
            guard settled == nil else { return nil }
            settled = value
            defer { waiter = nil }
            return waiter
        }
        waiting?.resume(returning: value)
    }

    /// The value, once offered.
    package var value: Value {
        get async {
            await withCheckedContinuation { continuation in
                let ready: Value? = lock.withLock {
                    if let settled { return settled }
                    waiter = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        }
    }
}
