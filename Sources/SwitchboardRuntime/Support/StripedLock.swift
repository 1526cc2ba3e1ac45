#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A fixed set of mutexes shared by many small objects, each taking the one its address
/// picks: an object made for every request (a handler's response headers) then costs one
/// allocation, not its own lock's too (an `NSLock` is several on Linux). Hold it only for a
/// few loads and stores, never while taking another.
enum StripedLock {
    private static let count = 32

    #if canImport(Glibc)
    private nonisolated(unsafe) static let mutexes: UnsafeMutablePointer<pthread_mutex_t> = {
        let mutexes = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: count)
        for index in 0..<count {
            (mutexes + index).initialize(to: pthread_mutex_t())
            pthread_mutex_init(mutexes + index, nil)
        }
        return mutexes
    }()
    #else
    private nonisolated(unsafe) static let mutexes: UnsafeMutablePointer<os_unfair_lock_s> = {
        let mutexes = UnsafeMutablePointer<os_unfair_lock_s>.allocate(capacity: count)
        mutexes.initialize(repeating: os_unfair_lock_s(), count: count)
        return mutexes
    }()
    #endif

    /// Runs `body` holding the mutex `object`'s address picks.
    static func withLock<T>(for object: AnyObject, _ body: () -> T) -> T {
        // Objects are at least 16-byte aligned: the bits above those pick the stripe.
        let mutex = mutexes + Int((UInt(bitPattern: ObjectIdentifier(object)) >> 4) % UInt(count))
        #if canImport(Glibc)
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        #else
        os_unfair_lock_lock(mutex)
        defer { os_unfair_lock_unlock(mutex) }
        #endif
        return body()
    }
}
