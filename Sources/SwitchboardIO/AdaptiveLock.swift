#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A mutex that spins a little before it sleeps: for state that threads on different cores
/// take for a few microseconds at a time (an HTTP/2 connection's), where putting a waiter to
/// sleep and waking it costs more than the wait. glibc's adaptive mutex on Linux;
/// `os_unfair_lock` (adaptive already) on Apple platforms.
///
/// Public, as swift-nio's `NIOLock` is, so that ``withLock(_:)`` is specialized in every
/// module that calls it: called generically from the HTTP/2 and gRPC modules, each call
/// copied its result through the type's metadata (and a `package` inlinable function is not
/// inlined across modules).
public final class AdaptiveLock: @unchecked Sendable {
    #if canImport(Glibc)
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    #else
    private let mutex: UnsafeMutablePointer<os_unfair_lock_s>
    #endif

    /// A new, unlocked mutex.
    public init() {
        #if canImport(Glibc)
        mutex = .allocate(capacity: 1)
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ADAPTIVE_NP))
        pthread_mutex_init(mutex, &attributes)
        pthread_mutexattr_destroy(&attributes)
        #else
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: os_unfair_lock_s())
        #endif
    }

    deinit {
        #if canImport(Glibc)
        pthread_mutex_destroy(mutex)
        #endif
        mutex.deallocate()
    }

    /// Takes the lock, spinning briefly and then sleeping until it is free.
    public func lock() {
        #if canImport(Glibc)
        pthread_mutex_lock(mutex)
        #else
        os_unfair_lock_lock(mutex)
        #endif
    }

    /// Releases the lock, which the calling thread holds.
    public func unlock() {
        #if canImport(Glibc)
        pthread_mutex_unlock(mutex)
        #else
        os_unfair_lock_unlock(mutex)
        #endif
    }

    /// Runs `body` holding the lock.
    @inlinable
    public func withLock<T>(_ body: () throws -> T) rethrows -> T {
        lock()
        defer { unlock() }
        return try body()
    }
}
