#if os(Linux)
import Synchronization
#elseif canImport(Darwin)
import Darwin
#endif

/// A mutex for state that threads on different cores take for a few microseconds at a time
/// (an HTTP/2 connection's, a socket's, a connection's pending calls).
///
/// On Linux, the standard library's futex-based `Mutex`: an uncontended lock and unlock are
/// one atomic compare-and-exchange each, about 15 instructions together, where `NSLock`
/// measured about 170 (a class call into Foundation, then `pthread_mutex_lock`) and glibc's
/// adaptive mutex about 75. On Apple platforms `os_unfair_lock`, since `Mutex` needs
/// macOS 15 there.
///
/// Public, as swift-nio's `NIOLock` is, so that ``withLock(_:)`` is specialized in every
/// module that calls it: called generically from the HTTP/2 and gRPC modules, each call
/// copied its result through the type's metadata (and a `package` inlinable function is not
/// inlined across modules).
public final class AdaptiveLock: @unchecked Sendable {
    #if os(Linux)
    @usableFromInline let mutex = Mutex<Void>(())
    #else
    @usableFromInline let mutex: UnsafeMutablePointer<os_unfair_lock_s>
    #endif

    /// A new, unlocked mutex.
    public init() {
        #if !os(Linux)
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: os_unfair_lock_s())
        #endif
    }

    #if !os(Linux)
    deinit {
        mutex.deallocate()
    }
    #endif

    /// Takes the lock, sleeping until it is free. Not from async code: the thread that takes
    /// the lock must release it (the Linux mutex records its owner), and an `await` in between
    /// may resume on another thread.
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
        #if os(Linux)
        // `Mutex<Void>`'s lock without a closure, which the standard library offers for
        // exactly this: the state it guards lives outside it.
        mutex._unsafeLock()
        #else
        os_unfair_lock_lock(mutex)
        #endif
    }

    @inlinable
    func unlockNow() {
        #if os(Linux)
        mutex._unsafeUnlock()
        #else
        os_unfair_lock_unlock(mutex)
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
