import Foundation
import SwitchboardIO
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
    public static func connect(host: String, port: Int, timeout: Duration) throws(WebSocketError) -> TCPSocket {
        try connect(host: host, port: port, deadline: ContinuousClock.now.advanced(by: timeout))
    }

    /// Resolves `host` and connects to the first address that answers, all before `deadline`:
    /// name resolution included, and each address gets an even share of the time left, so
    /// one that never answers cannot use up the time of those after it.
    public static func connect(host: String, port: Int, deadline: ContinuousClock.Instant) throws(WebSocketError) -> TCPSocket {
        let results = try resolve(host: host, port: port, deadline: deadline)
        defer { freeaddrinfo(results) }
        var addresses: [UnsafeMutablePointer<addrinfo>] = []
        var candidate: UnsafeMutablePointer<addrinfo>? = results
        while let info = candidate {
            addresses.append(info)
            candidate = info.pointee.ai_next
        }
        var lastError = WebSocketError.io("no addresses for \(host)")
        for (index, info) in addresses.enumerated() {
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero else { throw .timeout("TCP connect to \(host)") }
            let descriptor = socket(info.pointee.ai_family, info.pointee.ai_socktype, info.pointee.ai_protocol)
            guard descriptor >= 0 else { continue }
            do throws(WebSocketError) {
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
    static func resolve(host: String, port: Int, deadline: ContinuousClock.Instant) throws(WebSocketError) -> UnsafeMutablePointer<addrinfo> {
        if TCPSocket.isAddressLiteral(host) { return try resolve(host: host, port: port, passive: false) }
        let resolution = PendingResolution()
        Thread.detachNewThread {
            resolution.finish(Result { () throws(WebSocketError) in try resolve(host: host, port: port, passive: false) })
        }
        let remaining = max(.zero, deadline - ContinuousClock.now)
        _ = resolution.done.wait(timeout: .now() + .nanoseconds(remaining.saturatingNanoseconds))
        guard let result = resolution.take() else { throw .timeout("resolving \(host)") }
        return try result.get()
    }

    /// Whether `host` is an IPv4 or IPv6 address literal.
    static func isAddressLiteral(_ host: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
    }

    /// Non-blocking connect, then `poll` for at most `timeout`, then back to blocking mode.
    static func connectWithTimeout(_ descriptor: Int32, _ address: UnsafeMutablePointer<sockaddr>?, _ length: socklen_t, timeout: Duration) throws(WebSocketError) {
        let flags = fcntl(descriptor, F_GETFL, 0)
        _ = fcntl(descriptor, F_SETFL, flags | O_NONBLOCK)
        let result = systemConnect(descriptor, address, length)
        if result != 0 {
            guard errno == EINPROGRESS else { throw .io("connect failed: \(String(cString: strerror(errno)))") }
            var descriptorSet = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
            let ready = poll(&descriptorSet, 1, timeout.pollMilliseconds)
            guard ready > 0 else { throw ready == 0 ? .timeout("TCP connect") : .io("poll failed") }
            var socketError: Int32 = 0
            var size = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &socketError, &size)
            guard socketError == 0 else { throw .io("connect failed: \(String(cString: strerror(socketError)))") }
        }
        _ = fcntl(descriptor, F_SETFL, flags & ~O_NONBLOCK)
    }

    public func read(maximum: Int) throws(WebSocketError) -> [UInt8] {
        // One reader at a time reads into a scratch buffer kept for the socket's life, so a
        // read costs one copy of the bytes received rather than a fresh zeroed buffer.
        if scratch.count < maximum {
            scratch.deallocate()
            scratch = .allocate(byteCount: maximum, alignment: 16)
        }
        let count = try read(into: UnsafeMutableRawBufferPointer(rebasing: scratch[0..<maximum]))
        return Array(UnsafeRawBufferPointer(rebasing: scratch[0..<count]))
    }

    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(WebSocketError) -> Int {
        try handle.withDescriptor { descriptor throws(WebSocketError) -> Int in
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

    public func write(_ bytes: [UInt8]) throws(WebSocketError) {
        let done: Void? = try handle.withDescriptor { descriptor throws(WebSocketError) in
            var offset = 0
            while offset < bytes.count {
                let sent = bytes.withUnsafeBytes { buffer in
                    send(descriptor, buffer.baseAddress! + offset, bytes.count - offset, Self.sendFlags)
                }
                if sent < 0 {
                    if errno == EINTR { continue }
                    throw .io("write failed: \(String(cString: strerror(errno)))")
                }
                offset += sent
            }
        }
        if done == nil { throw Self.closedError }
    }

    static let closedError = WebSocketError.io("write failed: the socket is closed")

    public func writeWithoutBlocking(_ bytes: [UInt8], from offset: Int) throws(WebSocketError) -> Int {
        let count = try handle.withDescriptor { descriptor throws(WebSocketError) -> Int in
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

    /// Resolves a stream address for `host:port`; the caller frees the list.
    static func resolve(host: String, port: Int, passive: Bool) throws(WebSocketError) -> UnsafeMutablePointer<addrinfo> {
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

    static func systemConnect(_ descriptor: Int32, _ address: UnsafeMutablePointer<sockaddr>?, _ length: socklen_t) -> Int32 {
        #if canImport(Glibc)
        Glibc.connect(descriptor, address, length)
        #else
        Darwin.connect(descriptor, address, length)
        #endif
    }
}

/// A listening TCP socket.
public final class TCPListener: @unchecked Sendable {
    let handle: SocketDescriptor
    /// The port the listener is bound to (useful after binding port 0).
    public let port: Int

    /// Binds `host` (an IPv4 or IPv6 literal, or `localhost`) and `port` (0 picks a free one).
    public init(host: String = "127.0.0.1", port: Int = 0) throws(WebSocketError) {
        let info = try TCPSocket.resolve(host: host, port: port, passive: true)
        defer { freeaddrinfo(info) }
        let descriptor = socket(info.pointee.ai_family, info.pointee.ai_socktype, info.pointee.ai_protocol)
        guard descriptor >= 0 else { throw .io("socket failed") }
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        var yes: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        guard bind(descriptor, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0, listen(descriptor, 128) == 0 else {
            _ = SocketDescriptor.systemClose(descriptor)
            throw .io("cannot listen on \(host):\(port): \(String(cString: strerror(errno)))")
        }
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) } }
        let family = Int32(storage.ss_family)
        let boundPort: UInt16 = withUnsafePointer(to: &storage) { pointer in
            if family == AF_INET6 {
                return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin6_port) }
            }
            return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin_port) }
        }
        handle = SocketDescriptor(descriptor)
        self.port = Int(boundPort)
    }

    /// Waits for the next connection; `nil` once the listener is closed or broken. A failure
    /// that passes (a client that gave up while queued, or no descriptors or memory left for
    /// a moment) is retried, so a burst of connections cannot stop a server for good.
    public func accept() -> TCPSocket? {
        while true {
            let (client, failure) = handle.withDescriptor { descriptor -> (Int32, Int32) in
                #if canImport(Glibc)
                let client = Glibc.accept(descriptor, nil, nil)
                #else
                let client = Darwin.accept(descriptor, nil, nil)
                #endif
                return (client, errno)
            } ?? (-1, EBADF)
            if client >= 0 { return TCPSocket(descriptor: client) }
            if handle.isClosedNow { return nil }
            switch failure {
            case EINTR, ECONNABORTED, EPROTO:
                continue
            case EMFILE, ENFILE, ENOBUFS, ENOMEM:
                // The connection stays queued; wait for descriptors to free up rather than spin.
                usleep(50_000)
            default:
                return nil
            }
        }
    }

    /// Stops listening; a blocked `accept` returns `nil`.
    public func close() {
        handle.close()
    }

    deinit { handle.close() }
}

extension TCPSocket {
    public func setReadDeadline(_ deadline: ContinuousClock.Instant?) throws(WebSocketError) {
        try setReceiveTimeout(until: deadline)
    }

    /// Bounds the next blocking reads by `deadline`; `nil` removes the bound.
    func setReceiveTimeout(until deadline: ContinuousClock.Instant?) throws(WebSocketError) {
        var value = timeval()
        if let deadline {
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero else { throw .timeout("handshake") }
            let (seconds, attoseconds) = remaining.components
            value.tv_sec = .init(clamping: seconds)
            value.tv_usec = .init(max(1, attoseconds / 1_000_000_000_000))
        }
        _ = handle.withDescriptor { descriptor in
            _ = setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
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
    private let lock = NSLock()
    private var result: Result<UnsafeMutablePointer<addrinfo>, WebSocketError>?
    private var abandoned = false

    func finish(_ outcome: Result<UnsafeMutablePointer<addrinfo>, WebSocketError>) {
        let keep: Bool = lock.withLock {
            guard !abandoned else { return false }
            result = outcome
            return true
        }
        if !keep, case let .success(list) = outcome { freeaddrinfo(list) }
        done.signal()
    }

    /// The result if it came, else `nil`, after which a late result is freed by `finish`.
    func take() -> Result<UnsafeMutablePointer<addrinfo>, WebSocketError>? {
        lock.withLock {
            if result == nil { abandoned = true }
            defer { result = nil }
            return result
        }
    }
}
