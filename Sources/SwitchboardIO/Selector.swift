#if os(Linux)
internal import CSwitchboardIO
import Foundation
import Glibc

/// The operating system's readiness notification on Linux: epoll, with an eventfd for wakeups.
/// (`KqueueSelector.swift` is the same on Apple platforms.)
/// Level-triggered, so a handler that reads only part of what is waiting is told again.
///
/// Registration calls are safe from any thread (the kernel serializes them); ``wait`` runs
/// on the loop's thread only, and ``wakeUp()`` from any thread ends a wait at once.
/// ``close()`` releases the descriptors when the loop stops; calls after it do nothing, so a
/// late one from another thread cannot reach whatever file has since taken their numbers.
final class Selector: @unchecked Sendable {
    /// The most events one wait returns; more stay pending for the next.
    static let eventCapacity = 256

    private let epoll: Int32
    private let wakeup: Int32
    private var events: UnsafeMutablePointer<epoll_event>
    /// Guards the descriptors against ``close()``: each call that uses them from another
    /// thread holds it, so none runs on a number the system has given to another file.
    private let lock = AdaptiveLock()
    @exclusivity(unchecked) private var isClosed = false
    /// The token wakeups arrive with, never a registration's.
    static let wakeupToken: UInt64 = .max

    init() throws(IOError) {
        epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard epoll >= 0 else { throw .system("epoll_create1", errno) }
        wakeup = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        guard wakeup >= 0 else {
            let code = errno
            _ = Glibc.close(epoll)
            throw .system("eventfd", code)
        }
        events = .allocate(capacity: Self.eventCapacity)
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.u64 = Self.wakeupToken
        guard epoll_ctl(epoll, EPOLL_CTL_ADD, wakeup, &event) == 0 else {
            let code = errno
            _ = Glibc.close(wakeup)
            _ = Glibc.close(epoll)
            events.deallocate()
            throw .system("epoll_ctl", code)
        }
    }

    deinit {
        if !isClosed { release() }
    }

    /// The epoll and wakeup descriptors (tests check they are released).
    package var descriptors: [Int32] { [epoll, wakeup] }

    /// Releases the descriptors and the event buffer; on the loop's thread, after its last
    /// ``wait``. The registrations go with the epoll set.
    func close() {
        guard lock.withLock({ () -> Bool in
            guard !isClosed else { return false }
            isClosed = true
            return true
        }) else { return }
        release()
    }

    private func release() {
        _ = Glibc.close(wakeup)
        _ = Glibc.close(epoll)
        events.deallocate()
    }

    /// Runs `body` with the epoll descriptor unless the selector is closed (then `nil`).
    private func withEpoll<T>(_ body: (Int32) -> T) -> T? {
        lock.withLock { isClosed ? nil : body(epoll) }
    }

    /// Starts watching `descriptor`; its events arrive with `token`. A descriptor watched for
    /// nothing is left out of the epoll set until it is: epoll reports hangups and errors
    /// whatever the mask, and level-triggered it would report them on every turn (a socket
    /// the peer has closed, that nobody reads, would spin the loop).
    func register(_ descriptor: Int32, token: UInt64, interest: IOInterest) throws(IOError) {
        guard !interest.isEmpty else { return }
        var event = Self.event(token: token, interest: interest)
        guard let failure = withEpoll({ epoll_ctl($0, EPOLL_CTL_ADD, descriptor, &event) == 0 ? 0 : errno }) else { throw .shutDown }
        guard failure == 0 else { throw .system("epoll_ctl(ADD)", failure) }
    }

    /// Changes what `descriptor` is watched for (`previous` is what it was).
    func reregister(_ descriptor: Int32, token: UInt64, from previous: IOInterest, to interest: IOInterest) throws(IOError) {
        if interest.isEmpty {
            deregister(descriptor, interest: previous)
            return
        }
        var event = Self.event(token: token, interest: interest)
        let operation = previous.isEmpty ? EPOLL_CTL_ADD : EPOLL_CTL_MOD
        guard let failure = withEpoll({ epoll_ctl($0, operation, descriptor, &event) == 0 ? 0 : errno }) else { throw .shutDown }
        guard failure == 0 else { throw .system("epoll_ctl", failure) }
    }

    /// Stops watching `descriptor`; its pending events are dropped by their token.
    func deregister(_ descriptor: Int32, interest: IOInterest) {
        var event = epoll_event()
        _ = withEpoll { epoll_ctl($0, EPOLL_CTL_DEL, descriptor, &event) }
    }

    private static func event(token: UInt64, interest: IOInterest) -> epoll_event {
        var event = epoll_event()
        // Errors and hangups are always reported; they reach the handler as readable, and its
        // read then says what happened. The peer's FIN only while reading: level-triggered,
        // it would otherwise be reported on every turn.
        var mask: UInt32 = 0
        if interest.contains(.read) { mask |= EPOLLIN.rawValue | EPOLLRDHUP.rawValue }
        if interest.contains(.write) { mask |= EPOLLOUT.rawValue }
        event.events = mask
        event.data.u64 = token
        return event
    }

    /// Waits at most `timeout` (`nil`: until something happens) and reports each ready
    /// registration's token once with what it is ready for. A wakeup returns early.
    func wait(timeout: Duration?, _ report: (UInt64, IOInterest) -> Void) throws(IOError) {
        let milliseconds: Int32 = timeout.map { Self.milliseconds($0) } ?? -1
        let count = epoll_wait(epoll, events, Int32(Self.eventCapacity), milliseconds)
        if count < 0 {
            if errno == EINTR { return }
            throw .system("epoll_wait", errno)
        }
        for index in 0..<Int(count) {
            let event = events[index]
            let token = event.data.u64
            if token == Self.wakeupToken {
                var value: UInt64 = 0
                _ = read(wakeup, &value, 8)
                continue
            }
            var ready: IOInterest = []
            if event.events & (EPOLLIN.rawValue | EPOLLRDHUP.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0 { ready.insert(.read) }
            if event.events & (EPOLLOUT.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0 { ready.insert(.write) }
            report(token, ready)
        }
    }

    /// Ends the wait under way (or the next one) at once; safe from any thread.
    func wakeUp() {
        var one: UInt64 = 1
        lock.withLock {
            guard !isClosed else { return }
            _ = write(wakeup, &one, 8)
        }
    }

    /// Whole milliseconds, rounded up so a timer never fires early, within what epoll takes.
    static func milliseconds(_ duration: Duration) -> Int32 {
        let (seconds, attoseconds) = max(duration, .zero).components
        let total = Double(seconds) * 1000 + (Double(attoseconds) / 1e15).rounded(.up)
        return Int32(min(total, Double(Int32.max)))
    }
}
#endif
