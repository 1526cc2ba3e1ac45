import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Opens TCP connections without blocking a thread: the name is resolved on a thread of the
/// global pool (address literals at once), and each address is connected to by a
/// non-blocking `connect` that the loop watches, with an even share of the time left, so
/// one address that never answers cannot use up the time of those after it.
package enum SocketConnector {
    /// A connected, non-blocking socket to `host:port`, within `deadline`.
    package static func connect(host: String, port: Int, deadline: ContinuousClock.Instant, loop: EventLoop) async throws(NetworkError) -> Int32 {
        let results = try await resolve(host: host, port: port, deadline: deadline)
        defer { freeaddrinfo(results) }
        var addresses: [UnsafeMutablePointer<addrinfo>] = []
        var candidate: UnsafeMutablePointer<addrinfo>? = results
        while let info = candidate {
            addresses.append(info)
            candidate = info.pointee.ai_next
        }
        var lastError = NetworkError.io("no addresses for \(host)")
        for (index, info) in addresses.enumerated() {
            if Task.isCancelled { throw .io("connect cancelled") }
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero else { throw .timeout("TCP connect") }
            // Not inherited by processes the app starts, which would keep the socket open.
            let descriptor = SocketDescriptor.openSocket(family: info.pointee.ai_family, type: info.pointee.ai_socktype, protocol: info.pointee.ai_protocol)
            guard descriptor >= 0 else {
                // Out of descriptors (EMFILE), say: that is the news, not "no addresses".
                lastError = .io("cannot open a socket: \(String(cString: strerror(errno)))")
                continue
            }
            let flags = fcntl(descriptor, F_GETFL, 0)
            _ = fcntl(descriptor, F_SETFL, flags | O_NONBLOCK)
            let started = systemConnect(descriptor, info.pointee.ai_addr, info.pointee.ai_addrlen)
            if started == 0 { return descriptor }
            guard errno == EINPROGRESS else {
                lastError = .io("connect failed: \(String(cString: strerror(errno)))")
                _ = SocketDescriptor.systemClose(descriptor)
                continue
            }
            let share = remaining / (addresses.count - index)
            if let failure = await PendingConnect(descriptor: descriptor, loop: loop).wait(until: .now.advanced(by: share)) {
                _ = SocketDescriptor.systemClose(descriptor)
                lastError = failure
                continue
            }
            return descriptor
        }
        throw lastError
    }

    /// Resolves `host` before `deadline`. getaddrinfo cannot be interrupted, so a name (not
    /// an address literal) is resolved on a thread of the global pool; past the deadline the
    /// caller moves on and that thread frees what it finds.
    package static func resolve(host: String, port: Int, deadline: ContinuousClock.Instant) async throws(NetworkError) -> UnsafeMutablePointer<addrinfo> {
        if isAddressLiteral(host) { return try resolveNow(host: host, port: port, passive: false) }
        let resolution = PendingResolution()
        // Cancelling the task stops the wait as the deadline does; the lookup's thread frees
        // what it finds.
        let outcome: Result<AddressList, NetworkError>? = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                resolution.start(continuation)
                DispatchQueue.global().async {
                    resolution.finish(Result { () throws(NetworkError) in AddressList(first: try resolveNow(host: host, port: port, passive: false)) })
                }
                let remaining = max(.zero, deadline - ContinuousClock.now)
                DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(remaining.saturatingNanoseconds)) {
                    resolution.giveUp()
                }
            }
        } onCancel: {
            resolution.giveUp()
        }
        guard let outcome else {
            if Task.isCancelled { throw .io("resolving \(host) cancelled") }
            throw .timeout("resolving \(host)")
        }
        return try outcome.get().first
    }

    /// Resolves a stream address for `host:port` on the calling thread; the caller frees it.
    package static func resolveNow(host: String, port: Int, passive: Bool) throws(NetworkError) -> UnsafeMutablePointer<addrinfo> {
        // getaddrinfo keeps a service number's low 16 bits: 70000 would reach port 4464.
        guard (0...65535).contains(port) else { throw .io("port \(port) is out of range (0-65535)") }
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_flags = passive ? AI_PASSIVE : 0
        #if canImport(Glibc)
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
        hints.ai_socktype = SOCK_STREAM
        #endif
        var results: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &results)
        guard status == 0, let first = results else {
            throw .io("cannot resolve \(host): \(String(cString: gai_strerror(status)))")
        }
        return first
    }

    /// Whether `host` is an IPv4 or IPv6 address literal (resolved at once, and checked as an
    /// address, not a name, against a certificate).
    package static func isAddressLiteral(_ host: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
    }

    package static func systemConnect(_ descriptor: Int32, _ address: UnsafeMutablePointer<sockaddr>?, _ length: socklen_t) -> Int32 {
        #if canImport(Glibc)
        Glibc.connect(descriptor, address, length)
        #else
        Darwin.connect(descriptor, address, length)
        #endif
    }
}

/// One non-blocking connect the loop watches: writable means it finished, one way or the other.
private final class PendingConnect: IOHandler, @unchecked Sendable {
    private let descriptor: Int32
    private let loop: EventLoop
    private let lock = AdaptiveLock()
    private var continuation: CheckedContinuation<NetworkError?, Never>?
    private var cancelled = false
    private var token: UInt64 = 0
    private var timer: LoopTimer?

    init(descriptor: Int32, loop: EventLoop) {
        self.descriptor = descriptor
        self.loop = loop
    }

    /// `nil` once connected, else why not. Cancelling the task ends the wait at once.
    func wait(until deadline: ContinuousClock.Instant) async -> NetworkError? {
        await withTaskCancellationHandler {
            await waitUncancelled(until: deadline)
        } onCancel: {
            let waiting = lock.withLock { () -> Bool in
                cancelled = true
                return continuation != nil
            }
            if waiting { loop.execute { [self] in finish(.io("connect cancelled")) } }
        }
    }

    private func waitUncancelled(until deadline: ContinuousClock.Instant) async -> NetworkError? {
        await withCheckedContinuation { continuation in
            let early = lock.withLock { () -> Bool in
                self.continuation = continuation
                return cancelled
            }
            if early {
                loop.execute { [self] in finish(.io("connect cancelled")) }
                return
            }
            loop.execute { [self] in
                // Cancelled in between: the waiter has been answered, and its caller may have
                // closed the descriptor (whose number a new socket may now have).
                guard lock.withLock({ self.continuation != nil }) else { return }
                do throws(IOError) {
                    token = try loop.register(descriptor, interest: .write, handler: self)
                } catch {
                    finish(.io("cannot watch the socket: \(error)"))
                    return
                }
                timer = loop.schedule(at: deadline) { [self] in finish(.timeout("TCP connect")) }
            }
        }
    }

    func readable() { writable() }

    func loopStopped() { finish(.io("connect failed: the event loop shut down")) }

    func writable() {
        var socketError: Int32 = 0
        var size = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &socketError, &size)
        finish(socketError == 0 ? nil : .io("connect failed: \(String(cString: strerror(socketError)))"))
    }

    /// On the loop: stops watching and resumes the waiter, once.
    private func finish(_ outcome: NetworkError?) {
        timer?.cancel()
        timer = nil
        if token != 0 {
            loop.deregister(descriptor, token: token, interest: .write)
            token = 0
        }
        lock.withLock {
            defer { continuation = nil }
            return continuation
        }?.resume(returning: outcome)
    }
}

/// A resolver's result list, handed from the resolving thread to the waiting task once.
private struct AddressList: @unchecked Sendable {
    let first: UnsafeMutablePointer<addrinfo>
}

/// A name resolution its caller may stop waiting for: whoever comes second (the resolver
/// finishing, or the caller giving up) frees the result.
private final class PendingResolution: @unchecked Sendable {
    private let lock = AdaptiveLock()
    private var continuation: CheckedContinuation<Result<AddressList, NetworkError>?, Never>?
    private var done = false

    func start(_ continuation: CheckedContinuation<Result<AddressList, NetworkError>?, Never>) {
        // Given up already (cancelled before the wait began): answer at once.
        let over = lock.withLock { () -> Bool in
            if done { return true }
            self.continuation = continuation
            return false
        }
        if over { continuation.resume(returning: nil) }
    }

    func finish(_ outcome: Result<AddressList, NetworkError>) {
        let waiter: CheckedContinuation<Result<AddressList, NetworkError>?, Never>? = lock.withLock {
            guard !done else { return nil }
            done = true
            defer { continuation = nil }
            return continuation
        }
        guard let waiter else {
            if case let .success(list) = outcome { freeaddrinfo(list.first) }
            return
        }
        waiter.resume(returning: outcome)
    }

    func giveUp() {
        let waiter: CheckedContinuation<Result<AddressList, NetworkError>?, Never>? = lock.withLock {
            guard !done else { return nil }
            done = true
            defer { continuation = nil }
            return continuation
        }
        waiter?.resume(returning: nil)
    }
}
