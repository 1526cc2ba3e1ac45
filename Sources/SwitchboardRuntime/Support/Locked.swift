import Foundation
#if !canImport(Darwin) && !SWITCHBOARD_TSAN
import Synchronization
#endif

/// A value guarded by a lock, for state shared across tasks (mocks, fakes, routing tables,
/// a connection's pending calls).
///
/// On Linux the lock is the standard library's futex-based `Mutex` (an uncontended lock and
/// unlock cost about 15 instructions with Swift 6.3, `NSLock`'s several times that); `Mutex`
/// needs macOS 15 on Apple platforms, which keep `NSLock`, as do builds under ThreadSanitizer
/// (`SWITCHBOARD_TSAN`, see `AdaptiveLock`). It is
/// `Sendable` only for a `Sendable` value: the value is copied out (``current``) and
/// handed to closures, so a reference type without its own locking must not cross tasks in it.
public final class Locked<Value> {
    #if canImport(Darwin) || SWITCHBOARD_TSAN
    @usableFromInline let lock = NSLock()
    #else
    @usableFromInline let lock = Mutex<Void>(())
    #endif
    // Only reached under `lock`, which already makes each access exclusive: the runtime's
    // own check (about 80 instructions an access) is dropped.
    @usableFromInline @exclusivity(unchecked) var value: Value

    /// Wraps `value`.
    public init(_ value: Value) { self.value = value }

    /// Runs `body` with exclusive access to the value. Inlinable, so each caller gets a
    /// specialized copy instead of the generic one's metadata-driven copies.
    @inlinable
    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        #if canImport(Darwin) || SWITCHBOARD_TSAN
        lock.lock()
        defer { lock.unlock() }
        #else
        // `Mutex<Void>`'s lock without a closure: the value lives outside it.
        lock._unsafeLock()
        defer { lock._unsafeUnlock() }
        #endif
        return try body(&value)
    }

    /// A copy of the current value.
    public var current: Value { withLock { $0 } }
}

extension Locked: @unchecked Sendable where Value: Sendable {}
