import Foundation
#if canImport(Glibc)
import Glibc
internal import CSwitchboardIO
#elseif canImport(Darwin)
import Darwin
#endif

/// A socket descriptor shared by the threads that read, write and close it.
///
/// Closing shuts the socket down at once, which wakes a call blocked in it; the number
/// itself is released as soon as the last call in progress returns. So a descriptor is
/// given back when its connection ends, however long the owning object lives, and no call
/// can ever reach a newer socket that reused the number.
package final class SocketDescriptor: @unchecked Sendable {
    /// The number; use it only inside ``withDescriptor(ifClosed:_:)``.
    package let number: Int32
    private let lock = AdaptiveLock()
    private var isClosed = false
    private var callsInProgress = 0
    private var isReleased = false

    package init(_ number: Int32) {
        self.number = number
    }

    deinit {
        if !isReleased { _ = Self.systemClose(number) }
    }

    /// Whether ``close()`` has been called.
    package var isClosedNow: Bool {
        lock.lock()
        defer { lock.unlock() }
        return isClosed
    }

    /// Runs `body` with the number, which stays valid until it returns; once the socket is
    /// closed, returns `nil` without running it.
    @inline(__always)
    package func withDescriptor<T, E: Error>(_ body: (Int32) throws(E) -> T) throws(E) -> T? {
        lock.lock()
        if isClosed {
            lock.unlock()
            return nil
        }
        callsInProgress += 1
        lock.unlock()
        defer { endCall() }
        return try body(number)
    }

    /// Shuts the socket down (waking blocked calls) the first time; releases the number now
    /// if no call is in progress, or when the last one returns.
    package func close() {
        lock.lock()
        let release = !isClosed && callsInProgress == 0
        if !isClosed {
            isClosed = true
            // Under the lock: a call ending meanwhile could release the number first.
            _ = shutdown(number, Int32(SHUT_RDWR))
        }
        if release { isReleased = true }
        lock.unlock()
        if release { _ = Self.systemClose(number) }
    }

    /// Shuts the sending side down: the peer reads what was sent, then the end; reading goes on.
    package func shutdownWrite() {
        lock.lock()
        if !isClosed { _ = shutdown(number, Int32(SHUT_WR)) }
        lock.unlock()
    }

    /// Shuts both directions down at once, so the peer sees the end and blocked or ready
    /// calls return, but keeps the number (and any registration on it) until ``close()``.
    package func shutdownNow() {
        lock.lock()
        if !isClosed { _ = shutdown(number, Int32(SHUT_RDWR)) }
        lock.unlock()
    }

    private func endCall() {
        lock.lock()
        callsInProgress -= 1
        let release = isClosed && callsInProgress == 0 && !isReleased
        if release { isReleased = true }
        lock.unlock()
        if release { _ = Self.systemClose(number) }
    }

    /// A new socket that processes the app starts never inherit: close-on-exec from its
    /// creation on Linux (between `socket` and `fcntl` a fork would copy it), just after it
    /// on Apple platforms, which have no such flag.
    package static func openSocket(family: Int32, type: Int32, protocol: Int32) -> Int32 {
        #if canImport(Glibc)
        return sb_socket_cloexec(family, type, `protocol`)
        #else
        let descriptor = Darwin.socket(family, type, `protocol`)
        if descriptor >= 0 { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
        return descriptor
        #endif
    }

    /// A connection accepted from `listener` (or -1, with `errno` set), close-on-exec as
    /// ``openSocket(family:type:protocol:)`` makes it.
    package static func acceptConnection(on listener: Int32) -> Int32 {
        #if canImport(Glibc)
        return sb_accept_cloexec(listener)
        #else
        let client = Darwin.accept(listener, nil, nil)
        if client >= 0 { _ = fcntl(client, F_SETFD, FD_CLOEXEC) }
        return client
        #endif
    }

    package static func systemClose(_ descriptor: Int32) -> Int32 {
        #if canImport(Glibc)
        Glibc.close(descriptor)
        #else
        Darwin.close(descriptor)
        #endif
    }
}
