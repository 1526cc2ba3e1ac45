import Foundation
internal import SwitchboardThreads
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A connected TCP socket (IPv4 or IPv6) with TCP_NODELAY, used through blocking calls
/// on the threads the WebSocket layer dedicates to it.
public final class TCPSocket: ByteStream, @unchecked Sendable {
    let handle: SocketDescriptor
    private var scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 0, alignment: 16)
    /// When blocking writes must have ended (``setWriteDeadline(_:)``).
    private let writeDeadline = LockedState<ContinuousClock.Instant?>(nil)

    /// The descriptor's number, for socket options in tests; it is released when the socket closes.
    var descriptor: Int32 { handle.number }

    init(descriptor: Int32) {
        handle = SocketDescriptor(descriptor)
        var yes: Int32 = 1
        setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &yes, socklen_t(MemoryLayout<Int32>.size))
        #if canImport(Darwin)
        setsockopt(descriptor, SOL_SOCKET, SO_NOSIGPIPE, &yes, socklen_t(MemoryLayout<Int32>.size))
        #endif
    }

    deinit {
        handle.close()
        scratch.deallocate()
    }

    /// Resolves `host` and connects to the first address that answers within `timeout`.
    public static func connect(host: String, port: Int, timeout: Duration) throws(NetworkError) -> TCPSocket {
        try connect(host: host, port: port, deadline: ContinuousClock.now.advanced(by: timeout))
    }

    /// Resolves `host` and connects to the first address that answers, all before `deadline`:
    /// name resolution included, and each address gets an even share of the time left, so
    /// one that never answers cannot use up the time of those after it.
    public static func connect(host: String, port: Int, deadline: ContinuousClock.Instant) throws(NetworkError) -> TCPSocket {
        let results = try resolve(host: host, port: port, deadline: deadline)
        defer { freeaddrinfo(results) }
        var addresses: [UnsafeMutablePointer<addrinfo>] = []
        var candidate: UnsafeMutablePointer<addrinfo>? = results
        while let info = candidate {
            addresses.append(info)
            candidate = info.pointee.ai_next
        }
        var lastError = NetworkError.io("no addresses for \(host)")
        for (index, info) in addresses.enumerated() {
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero else { throw .timeout("TCP connect to \(host)") }
            let descriptor = SocketDescriptor.openSocket(family: info.pointee.ai_family, type: info.pointee.ai_socktype, protocol: info.pointee.ai_protocol)
            guard descriptor >= 0 else { continue }
            do throws(NetworkError) {
                try connectWithTimeout(descriptor, info.pointee.ai_addr, info.pointee.ai_addrlen, timeout: remaining / (addresses.count - index))
                return TCPSocket(descriptor: descriptor)
            } catch {
                _ = SocketDescriptor.systemClose(descriptor)
                lastError = error
            }
        }
        throw lastError
    }

    /// Resolves `host` before `deadline`. getaddrinfo cannot be interrupted, so a name (not an
    /// address literal) is resolved on a thread of its own; past the deadline the caller moves
    /// on and that thread frees what it finds.
    static func resolve(host: String, port: Int, deadline: ContinuousClock.Instant) throws(NetworkError) -> UnsafeMutablePointer<addrinfo> {
        if SocketConnector.isAddressLiteral(host) { return try SocketConnector.resolveNow(host: host, port: port, passive: false) }
        let resolution = PendingResolution()
        do throws(SystemThread.StartError) {
            try SystemThread.start(stackSize: 1 << 20) {
                resolution.finish(Result { () throws(NetworkError) in try SocketConnector.resolveNow(host: host, port: port, passive: false) })
            }
        } catch {
            // A Foundation thread refused this way never ran, and the wait below went to the deadline.
            throw .io("resolving \(host): \(error)")
        }
        let remaining = max(.zero, deadline - ContinuousClock.now)
        _ = resolution.done.wait(timeout: .now() + .nanoseconds(remaining.saturatingNanoseconds))
        guard let result = resolution.take() else { throw .timeout("resolving \(host)") }
        return try result.get()
    }

    /// Non-blocking connect, then `poll` for at most `timeout`, then back to blocking mode.
    static func connectWithTimeout(_ descriptor: Int32, _ address: UnsafeMutablePointer<sockaddr>?, _ length: socklen_t, timeout: Duration) throws(NetworkError) {
        let flags = fcntl(descriptor, F_GETFL, 0)
        _ = fcntl(descriptor, F_SETFL, flags | O_NONBLOCK)
        let result = SocketConnector.systemConnect(descriptor, address, length)
        if result != 0 {
            guard errno == EINPROGRESS else { throw .io("connect failed: \(String(cString: strerror(errno)))") }
            var descriptorSet = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
            // A signal interrupting the wait is no failure: wait again for the time left.
            let deadline = ContinuousClock.now.advanced(by: timeout)
            var ready: Int32
            repeat {
                ready = poll(&descriptorSet, 1, max(.zero, ContinuousClock.now.duration(to: deadline)).pollMilliseconds)
            } while ready < 0 && errno == EINTR
            guard ready > 0 else { throw ready == 0 ? .timeout("TCP connect") : .io("poll failed: \(String(cString: strerror(errno)))") }
            var socketError: Int32 = 0
            var size = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &socketError, &size)
            guard socketError == 0 else { throw .io("connect failed: \(String(cString: strerror(socketError)))") }
        }
        _ = fcntl(descriptor, F_SETFL, flags & ~O_NONBLOCK)
    }

    public func read(maximum: Int) throws(NetworkError) -> [UInt8] {
        // One reader at a time reads into a scratch buffer kept for the socket's life, so a
        // read costs one copy of the bytes received rather than a fresh zeroed buffer.
        if scratch.count < maximum {
            scratch.deallocate()
            scratch = .allocate(byteCount: maximum, alignment: 16)
        }
        let count = try read(into: UnsafeMutableRawBufferPointer(rebasing: scratch[0..<maximum]))
        return Array(UnsafeRawBufferPointer(rebasing: scratch[0..<count]))
    }

    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(NetworkError) -> Int {
        try handle.withDescriptor { descriptor throws(NetworkError) -> Int in
            while true {
                let count = recv(descriptor, buffer.baseAddress, buffer.count, 0)
                if count >= 0 { return count }
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK { throw .timeout("read") }
                if handle.isClosedNow { return 0 }
                throw .io("read failed: \(String(cString: strerror(errno)))")
            }
        } ?? 0
    }

    public func write(_ bytes: [UInt8]) throws(NetworkError) {
        let deadline = writeDeadline.value
        let done: Void? = try handle.withDescriptor { descriptor throws(NetworkError) in
            var offset = 0
            while offset < bytes.count {
                // The time left, before each send: a peer that reads a little now and then
                // must not restart a whole timeout with every partial send.
                if let deadline { try Self.limitSend(descriptor, until: deadline) }
                let sent = bytes.withUnsafeBytes { buffer in
                    send(descriptor, buffer.baseAddress! + offset, bytes.count - offset, Self.sendFlags)
                }
                if sent < 0 {
                    if errno == EINTR { continue }
                    // The write deadline passed with the peer not reading.
                    if errno == EAGAIN || errno == EWOULDBLOCK { throw .timeout("write") }
                    throw .io("write failed: \(String(cString: strerror(errno)))")
                }
                offset += sent
            }
        }
        if done == nil { throw Self.closedError }
    }

    static let closedError = NetworkError.io("write failed: the socket is closed")

    public func writeWithoutBlocking(_ bytes: [UInt8], from offset: Int) throws(NetworkError) -> Int {
        let count = try handle.withDescriptor { descriptor throws(NetworkError) -> Int in
            var written = offset
            while written < bytes.count {
                let sent = bytes.withUnsafeBytes { buffer in
                    send(descriptor, buffer.baseAddress! + written, bytes.count - written, Self.sendFlags | Self.dontWait)
                }
                if sent < 0 {
                    if errno == EINTR { continue }
                    if errno == EAGAIN || errno == EWOULDBLOCK { break }
                    throw .io("write failed: \(String(cString: strerror(errno)))")
                }
                written += sent
            }
            return written - offset
        }
        guard let count else { throw Self.closedError }
        return count
    }

    #if canImport(Glibc)
    static let dontWait = Int32(MSG_DONTWAIT)
    #else
    static let dontWait = Int32(MSG_DONTWAIT)
    #endif

    #if canImport(Glibc)
    static let sendFlags = Int32(MSG_NOSIGNAL)
    #else
    static let sendFlags: Int32 = 0
    #endif

    /// Shuts the socket down, waking a blocked read, and releases the descriptor once no
    /// call is using it.
    public func close() {
        handle.close()
    }
}

extension TCPSocket {
    public func setReadDeadline(_ deadline: ContinuousClock.Instant?) throws(NetworkError) {
        try setReceiveTimeout(until: deadline)
    }

    /// Bounds the next blocking writes by `deadline` (a write then throws `timeout`, some of
    /// its bytes perhaps sent); `nil`, the default, removes the bound. Without one, a peer
    /// that stops reading holds a blocking `write` for as long as it likes.
    public func setWriteDeadline(_ deadline: ContinuousClock.Instant?) throws(NetworkError) {
        if let deadline, deadline <= .now { throw .timeout("write") }
        writeDeadline.set(deadline)
        if deadline == nil { try setTimeout(SO_SNDTIMEO, until: nil, for: "write") }
    }

    /// Bounds the next `send` on `descriptor` by the time left until `deadline`.
    static func limitSend(_ descriptor: Int32, until deadline: ContinuousClock.Instant) throws(NetworkError) {
        let remaining = deadline - ContinuousClock.now
        guard remaining > .zero else { throw .timeout("write") }
        let (seconds, attoseconds) = remaining.components
        var value = timeval()
        value.tv_sec = .init(clamping: seconds)
        value.tv_usec = .init(max(1, attoseconds / 1_000_000_000_000))
        _ = setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Bounds the next blocking reads by `deadline`; `nil` removes the bound.
    func setReceiveTimeout(until deadline: ContinuousClock.Instant?) throws(NetworkError) {
        try setTimeout(SO_RCVTIMEO, until: deadline, for: "handshake")
    }

    private func setTimeout(_ option: Int32, until deadline: ContinuousClock.Instant?, for what: String) throws(NetworkError) {
        var value = timeval()
        if let deadline {
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero else { throw .timeout(what) }
            let (seconds, attoseconds) = remaining.components
            value.tv_sec = .init(clamping: seconds)
            value.tv_usec = .init(max(1, attoseconds / 1_000_000_000_000))
        }
        _ = handle.withDescriptor { descriptor in
            _ = setsockopt(descriptor, SOL_SOCKET, option, &value, socklen_t(MemoryLayout<timeval>.size))
        }
    }
}

extension TCPSocket {
    /// Switches to non-blocking mode, for streams that poll (TLS).
    func setNonBlocking() {
        _ = handle.withDescriptor { descriptor in
            let flags = fcntl(descriptor, F_GETFL, 0)
            _ = fcntl(descriptor, F_SETFL, flags | O_NONBLOCK)
        }
    }
}

/// A name resolution that its caller may stop waiting for: whoever comes second (the
/// resolver finishing, or the caller giving up) frees the result.
private final class PendingResolution: @unchecked Sendable {
    let done = DispatchSemaphore(value: 0)
    private let lock = AdaptiveLock()
    private var result: Result<UnsafeMutablePointer<addrinfo>, NetworkError>?
    private var abandoned = false

    func finish(_ outcome: Result<UnsafeMutablePointer<addrinfo>, NetworkError>) {
        let keep: Bool = lock.withLock {
            guard !abandoned else { return false }
            result = outcome
            return true
        }
        if !keep, case let .success(list) = outcome { freeaddrinfo(list) }
        done.signal()
    }

    /// The result if it came, else `nil`, after which a late result is freed by `finish`.
    func take() -> Result<UnsafeMutablePointer<addrinfo>, NetworkError>? {
        lock.withLock {
            if result == nil { abandoned = true }
            defer { result = nil }
            return result
        }
    }
}
