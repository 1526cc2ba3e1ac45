#if canImport(Darwin)
import Darwin

/// The operating system's readiness notification on Apple platforms: kqueue, with an
/// `EVFILT_USER` event for wakeups. (`Selector.swift` is the same on Linux.) Type-checked on
/// Linux against stand-ins (`Tests/AppleStandIns/Darwin/`), not run here.
/// Level-triggered, so a handler that reads only part of what is waiting is told again.
///
/// Registration calls are safe from any thread (the kernel serializes them); ``wait`` runs
/// on the loop's thread only, and ``wakeUp()`` from any thread ends a wait at once.
/// ``close()`` releases the queue when the loop stops; calls after it do nothing, so a late
/// one from another thread cannot reach whatever file has since taken its number.
final class Selector: @unchecked Sendable {
    /// The most events one wait returns; more stay pending for the next.
    static let eventCapacity = 256

    private let queue: Int32
    private var events: UnsafeMutablePointer<kevent>
    /// Guards the queue against ``close()``: each call that uses it from another thread
    /// holds it, so none runs on a number the system has given to another file.
    private let lock = AdaptiveLock()
    private var isClosed = false
    /// The token wakeups arrive with, never a registration's.
    static let wakeupToken: UInt64 = .max

    init() throws(IOError) {
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
    }

    deinit {
        if !isClosed { release() }
    }

    /// The kqueue descriptor (tests check it is released).
    package var descriptors: [Int32] { [queue] }

    /// Releases the queue and the event buffer; on the loop's thread, after its last
    /// ``wait``. The registrations go with the queue.
    func close() {
        guard lock.withLock({ () -> Bool in
            guard !isClosed else { return false }
            isClosed = true
            return true
        }) else { return }
        release()
    }

    private func release() {
        _ = Darwin.close(queue)
        events.deallocate()
    }

    /// Starts watching `descriptor`; its events arrive with `token`.
    func register(_ descriptor: Int32, token: UInt64, interest: IOInterest) throws(IOError) {
        try change(descriptor, token: token, from: [], to: interest, adding: true)
    }

    /// Changes what `descriptor` is watched for (`previous` is what it was).
    func reregister(_ descriptor: Int32, token: UInt64, from previous: IOInterest, to interest: IOInterest) throws(IOError) {
        try change(descriptor, token: token, from: previous, to: interest, adding: false)
    }

    /// Stops watching `descriptor`; its pending events are dropped by their token.
    func deregister(_ descriptor: Int32, interest: IOInterest) {
        try? change(descriptor, token: 0, from: interest, to: [], adding: false)
    }

    private func change(_ descriptor: Int32, token: UInt64, from previous: IOInterest, to interest: IOInterest, adding: Bool) throws(IOError) {
        var changes: [kevent] = []
        for (filter, flag) in [(Int16(EVFILT_READ), IOInterest.read), (Int16(EVFILT_WRITE), IOInterest.write)] {
            let wanted = interest.contains(flag)
            guard adding ? wanted : wanted != previous.contains(flag) else { continue }
            changes.append(kevent(ident: UInt(descriptor), filter: filter, flags: UInt16(wanted ? EV_ADD : EV_DELETE), fflags: 0, data: 0,
                                  udata: UnsafeMutableRawPointer(bitPattern: UInt(token))))
        }
        guard !changes.isEmpty else { return }
        // One result per change (EV_RECEIPT), so a refused addition is told apart from a
        // deletion the kernel already made (it drops a closed descriptor's filters itself):
        // the first fails the call, as epoll_ctl's refusal does on Linux; the second is
        // nothing to report.
        for index in changes.indices { changes[index].flags |= UInt16(EV_RECEIPT) }
        var results: [kevent] = Array(repeating: kevent(ident: 0, filter: 0, flags: 0, fflags: 0, data: 0, udata: nil), count: changes.count)
        let outcome: (count: Int32, code: Int32)? = lock.withLock {
            guard !isClosed else { return nil }
            let count = kevent(queue, changes, Int32(changes.count), &results, Int32(results.count), nil)
            return (count, count < 0 ? errno : 0)
        }
        // Closed: the loop has stopped, and its queue's registrations went with it.
        guard let (count, code) = outcome else {
            if interest.isEmpty { return }
            throw .shutDown
        }
        guard count >= 0 else { throw .system("kevent", code) }
        for index in 0..<Int(count) where results[index].flags & UInt16(EV_ERROR) != 0 && results[index].data != 0 {
            let code = Int32(truncatingIfNeeded: results[index].data)
            let deleting = changes[index].flags & UInt16(EV_DELETE) != 0
            if deleting && code == ENOENT { continue }
            throw .system("kevent", code)
        }
    }

    /// Waits at most `timeout` (`nil`: until something happens) and reports each ready
    /// registration's token once with what it is ready for. A wakeup returns early.
    func wait(timeout: Duration?, _ report: (UInt64, IOInterest) -> Void) throws(IOError) {
        let count: Int32
        if let timeout {
            // At most a day: XNU refuses a tv_sec past Int32.max with EINVAL, which would stop
            // the loop; a far timer only costs an extra wakeup a day.
            let (seconds, attoseconds) = min(max(timeout, .zero), .seconds(86_400)).components
            var spec = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
            count = kevent(queue, nil, 0, events, Int32(Self.eventCapacity), &spec)
        } else {
            count = kevent(queue, nil, 0, events, Int32(Self.eventCapacity), nil)
        }
        if count < 0 {
            if errno == EINTR { return }
            throw .system("kevent", errno)
        }
        for index in 0..<Int(count) {
            let event = events[index]
            if event.filter == Int16(EVFILT_USER) { continue }
            let token = UInt64(UInt(bitPattern: event.udata))
            report(token, event.filter == Int16(EVFILT_WRITE) ? IOInterest.write : IOInterest.read)
        }
    }

    /// Ends the wait under way (or the next one) at once; safe from any thread.
    func wakeUp() {
        var change = kevent(ident: 0, filter: Int16(EVFILT_USER), flags: 0, fflags: UInt32(NOTE_TRIGGER), data: 0, udata: nil)
        lock.withLock {
            guard !isClosed else { return }
            _ = kevent(queue, &change, 1, nil, 0, nil)
        }
    }
}
#endif
