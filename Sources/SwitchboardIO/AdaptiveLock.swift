#if canImport(Darwin)
import Darwin
#elseif SWITCHBOARD_TSAN
import Foundation
#else
import Synchronization
#endif

/// A mutex for state that threads on different cores take for a few microseconds at a time
/// (an HTTP/2 connection's, a socket's, a connection's pending calls).
///
/// On Linux, the standard library's futex-based `Mutex`, whose uncontended lock and unlock are
/// one atomic compare-and-exchange each (about 15 instructions together with Swift 6.3, where
/// glibc's adaptive mutex took about 75 and `NSLock` more). On Apple platforms
/// `os_unfair_lock`, since `Mutex` needs macOS 15 there.
///
/// Public, as swift-nio's `NIOLock` is, so that ``withLock(_:)`` is specialized in every
/// module that calls it: called generically from the HTTP/2 and gRPC modules, each call
/// copied its result through the type's metadata (and a `package` inlinable function is not
/// inlined across modules).
///
/// Builds under ThreadSanitizer (`scripts/sanitize.sh` defines `SWITCHBOARD_TSAN`) take an
/// `NSLock` instead: `Mutex` waits for a contended lock in the kernel (a priority-inheriting
/// futex), where TSan cannot see the hand-over, and it would report the guarded state as raced.
public final class AdaptiveLock: @unchecked Sendable {
    #if canImport(Darwin)
    @usableFromInline let mutex: UnsafeMutablePointer<os_unfair_lock_s>
    #elseif SWITCHBOARD_TSAN
    @usableFromInline let mutex = NSLock()
    #else
    @usableFromInline let mutex = Mutex<Void>(())
    #endif

    /// A new, unlocked mutex.
    public init() {
        #if canImport(Darwin)
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: os_unfair_lock_s())
        #endif
    }

    #if canImport(Darwin)
    deinit {
        mutex.deallocate()
    }
    #endif

    /// Takes the lock, sleeping until it is free. Not from async code: the thread that takes
    /// the lock must release it (both `os_unfair_lock` and the standard library's `Mutex`
    /// require it), and an `await` in between may resume on another thread.
    @available(*, noasync, message: "use withLock(_:) in async code")
    @inlinable
    public func lock() {
        lockNow()
    }

    /// Releases the lock, which the calling thread holds.
    @available(*, noasync, message: "use withLock(_:) in async code")
    @inlinable
    public func unlock() {
        unlockNow()
    }

    @inlinable
    func lockNow() {
        #if canImport(Darwin)
        os_unfair_lock_lock(mutex)
        #elseif SWITCHBOARD_TSAN
        mutex.lock()
        #else
        // `Mutex<Void>`'s lock without a closure, which the standard library offers for
        // exactly this: the state it guards lives outside it.
        mutex._unsafeLock()
        #endif
    }

    @inlinable
    func unlockNow() {
        #if canImport(Darwin)
        os_unfair_lock_unlock(mutex)
        #elseif SWITCHBOARD_TSAN
        mutex.unlock()
        #else
        mutex._unsafeUnlock()
        #endif
    }

    /// Runs `body` holding the lock.
    @inlinable
    public func withLock<T>(_ body: () throws -> T) rethrows -> T {
        lockNow()
        defer { unlockNow() }
        return try body()
    }
}
