import Foundation
#if canImport(Glibc)
import Glibc
internal import CSwitchboardIO
#elseif canImport(Darwin)
import Darwin
#endif

/// What a registered descriptor is watched for, and what it turned out ready for.
package struct IOInterest: OptionSet, Sendable, Hashable {
    package let rawValue: UInt8
    package init(rawValue: UInt8) { self.rawValue = rawValue }
    /// Bytes (or a connection, or the end of the stream) to read.
    package static let read = IOInterest(rawValue: 1)
    /// Room to write.
    package static let write = IOInterest(rawValue: 2)
}

/// The operating system's readiness notification: epoll on Linux, kqueue on Apple platforms.
/// Level-triggered, so a handler that reads only part of what is waiting is told again.
///
/// Registration calls are safe from any thread (the kernel serializes them); ``wait`` runs
/// on the loop's thread only, and ``wakeUp()`` from any thread ends a wait at once.
final class Selector: @unchecked Sendable {
    /// The most events one wait returns; more stay pending for the next.
    static let eventCapacity = 256

    #if canImport(Glibc)
    private let epoll: Int32
    private let wakeup: Int32
    private var events: UnsafeMutablePointer<epoll_event>
    #elseif canImport(Darwin)
    private let queue: Int32
    private var events: UnsafeMutablePointer<kevent>
    #endif
    /// The token wakeups arrive with, never a registration's.
    static let wakeupToken: UInt64 = .max

    init() throws(IOError) {
        #if canImport(Glibc)
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
        #elseif canImport(Darwin)
        queue = kqueue()
        guard queue >= 0 else { throw .system("kqueue", errno) }
        events = .allocate(capacity: Self.eventCapacity)
        var change = kevent(ident: 0, filter: Int16(EVFILT_USER), flags: UInt16(EV_ADD | EV_CLEAR), fflags: 0, data: 0, udata: nil)
        guard kevent(queue, &change, 1, nil, 0, nil) == 0 else {
            let code = errno
            _ = Darwin.close(queue)
            events.deallocate()
            throw .system("kevent", code)
        }
        #endif
    }

    deinit {
        #if canImport(Glibc)
        _ = Glibc.close(wakeup)
        _ = Glibc.close(epoll)
        #elseif canImport(Darwin)
        _ = Darwin.close(queue)
        #endif
        events.deallocate()
    }

    /// Starts watching `descriptor`; its events arrive with `token`.
    func register(_ descriptor: Int32, token: UInt64, interest: IOInterest) throws(IOError) {
        #if canImport(Glibc)
        var event = Self.event(token: token, interest: interest)
        guard epoll_ctl(epoll, EPOLL_CTL_ADD, descriptor, &event) == 0 else { throw .system("epoll_ctl(ADD)", errno) }
        #elseif canImport(Darwin)
        try change(descriptor, token: token, from: [], to: interest, adding: true)
        #endif
    }

    /// Changes what `descriptor` is watched for (`previous` is what it was).
    func reregister(_ descriptor: Int32, token: UInt64, from previous: IOInterest, to interest: IOInterest) throws(IOError) {
        #if canImport(Glibc)
        var event = Self.event(token: token, interest: interest)
        guard epoll_ctl(epoll, EPOLL_CTL_MOD, descriptor, &event) == 0 else { throw .system("epoll_ctl(MOD)", errno) }
        #elseif canImport(Darwin)
        try change(descriptor, token: token, from: previous, to: interest, adding: false)
        #endif
    }

    /// Stops watching `descriptor`; its pending events are dropped by their token.
    func deregister(_ descriptor: Int32, interest: IOInterest) {
        #if canImport(Glibc)
        var event = epoll_event()
        _ = epoll_ctl(epoll, EPOLL_CTL_DEL, descriptor, &event)
        #elseif canImport(Darwin)
        try? change(descriptor, token: 0, from: interest, to: [], adding: false)
        #endif
    }

    #if canImport(Glibc)
    private static func event(token: UInt64, interest: IOInterest) -> epoll_event {
        var event = epoll_event()
        // Errors and hangups are always reported; they reach the handler as readable, and its
        // read then says what happened.
        var mask: UInt32 = EPOLLRDHUP.rawValue
        if interest.contains(.read) { mask |= EPOLLIN.rawValue }
        if interest.contains(.write) { mask |= EPOLLOUT.rawValue }
        event.events = mask
        event.data.u64 = token
        return event
    }
    #elseif canImport(Darwin)
    private func change(_ descriptor: Int32, token: UInt64, from previous: IOInterest, to interest: IOInterest, adding: Bool) throws(IOError) {
        var changes: [kevent] = []
        for (filter, flag) in [(Int16(EVFILT_READ), IOInterest.read), (Int16(EVFILT_WRITE), IOInterest.write)] {
            let wanted = interest.contains(flag)
            guard adding ? wanted : wanted != previous.contains(flag) else { continue }
            changes.append(kevent(ident: UInt(descriptor), filter: filter, flags: UInt16(wanted ? EV_ADD : EV_DELETE), fflags: 0, data: 0,
                                  udata: UnsafeMutableRawPointer(bitPattern: UInt(token))))
        }
        guard !changes.isEmpty else { return }
        guard kevent(queue, changes, Int32(changes.count), nil, 0, nil) == 0 || !adding else { throw .system("kevent", errno) }
    }
    #endif

    /// Waits at most `timeout` (`nil`: until something happens) and reports each ready
    /// registration's token once with what it is ready for. A wakeup returns early.
    func wait(timeout: Duration?, _ report: (UInt64, IOInterest) -> Void) throws(IOError) {
        #if canImport(Glibc)
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
        #elseif canImport(Darwin)
        var spec = timespec()
        var limit: UnsafePointer<timespec>?
        if let timeout {
            let (seconds, attoseconds) = max(timeout, .zero).components
            spec = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
            limit = withUnsafePointer(to: &spec) { $0 }
        }
        let count = kevent(queue, nil, 0, events, Int32(Self.eventCapacity), limit)
        if count < 0 {
            if errno == EINTR { return }
            throw .system("kevent", errno)
        }
        for index in 0..<Int(count) {
            let event = events[index]
            if event.filter == Int16(EVFILT_USER) { continue }
            let token = UInt64(UInt(bitPattern: event.udata))
            report(token, event.filter == Int16(EVFILT_WRITE) ? .write : .read)
        }
        #endif
    }

    /// Ends the wait under way (or the next one) at once; safe from any thread.
    func wakeUp() {
        #if canImport(Glibc)
        var one: UInt64 = 1
        _ = write(wakeup, &one, 8)
        #elseif canImport(Darwin)
        var change = kevent(ident: 0, filter: Int16(EVFILT_USER), flags: 0, fflags: UInt32(NOTE_TRIGGER), data: 0, udata: nil)
        _ = kevent(queue, &change, 1, nil, 0, nil)
        #endif
    }

    /// Whole milliseconds, rounded up so a timer never fires early, within what epoll takes.
    static func milliseconds(_ duration: Duration) -> Int32 {
        let (seconds, attoseconds) = max(duration, .zero).components
        let total = Double(seconds) * 1000 + (Double(attoseconds) / 1e15).rounded(.up)
        return Int32(min(total, Double(Int32.max)))
    }
}

/// An operating-system call failed.
public enum IOError: Error, Sendable, Hashable, CustomStringConvertible {
    /// `call` failed with `errno`.
    case system(String, Int32)
    /// The loop has shut down and takes no more work.
    case shutDown

    public var description: String {
        switch self {
        case let .system(call, code): return "\(call) failed: \(String(cString: strerror(code)))"
        case .shutDown: return "the event loop has shut down"
        }
    }
}
