import Foundation

/// A value set once, later than it is first awaited: a push can arrive on a connection
/// before the bridge that will queue it exists.
final class Eventual<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value??
    private var waiters: [CheckedContinuation<Value?, Never>] = []

    /// The value once set (`nil` if it was given up).
    var wait: Value? {
        get async {
            await withCheckedContinuation { continuation in
                lock.lock()
                if let value {
                    lock.unlock()
                    continuation.resume(returning: value)
                } else {
                    waiters.append(continuation)
                    lock.unlock()
                }
            }
        }
    }

    /// Sets the value (or gives up with `nil`) and wakes every waiter; later calls do nothing.
    func resolve(_ newValue: Value?) {
        lock.lock()
        guard value == nil else {
            lock.unlock()
            return
        }
        value = .some(newValue)
        let woken = waiters
        waiters = []
        lock.unlock()
        for waiter in woken { waiter.resume(returning: newValue) }
    }
}

/// A reference that does not keep its object alive.
final class WeakReference<Object: AnyObject & Sendable>: @unchecked Sendable {
    private(set) weak var value: Object?

    init(_ value: Object) { self.value = value }
}
