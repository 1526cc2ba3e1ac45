import Foundation

/// A small value behind a lock, shared between a thread that writes it and others that read it.
package final class LockedState<Value: Equatable & Sendable>: @unchecked Sendable {
    private let lock = AdaptiveLock()
    private var stored: Value
    package init(_ value: Value) { stored = value }
    package var value: Value { lock.withLock { stored } }

    package func set(_ value: Value) { lock.withLock { stored = value } }

    /// Sets `new` only if the value is `old`; whether it did.
    package func transition(from old: Value, to new: Value) -> Bool {
        lock.withLock {
            guard stored == old else { return false }
            stored = new
            return true
        }
    }
}
