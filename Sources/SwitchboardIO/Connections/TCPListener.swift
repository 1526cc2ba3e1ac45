import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A listening TCP socket.
public final class TCPListener: @unchecked Sendable {
    let handle: SocketDescriptor
    /// The port the listener is bound to (useful after binding port 0).
    public let port: Int

    /// Connections the kernel may hold queued for `accept` by default: 1,024, a server's
    /// default `maximumConnections`. The system caps it (`net.core.somaxconn` on Linux, 4,096
    /// on recent kernels; `kern.ipc.somaxconn` on Apple platforms, 128 unless raised).
    public static let defaultBacklog = 1024

    /// Binds `host` (an IPv4 or IPv6 literal, or `localhost`) and `port` (0 picks a free one),
    /// with room for `backlog` connections queued for `accept` (beyond it a burst of
    /// connects waits on SYN retransmissions).
    public init(host: String = "127.0.0.1", port: Int = 0, backlog: Int = TCPListener.defaultBacklog) throws(NetworkError) {
        let info = try SocketConnector.resolveNow(host: host, port: port, passive: true)
        defer { freeaddrinfo(info) }
        let descriptor = SocketDescriptor.openSocket(family: info.pointee.ai_family, type: info.pointee.ai_socktype, protocol: info.pointee.ai_protocol)
        guard descriptor >= 0 else { throw .io("socket failed") }
        var yes: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        guard bind(descriptor, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0, listen(descriptor, Int32(clamping: max(1, backlog))) == 0 else {
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
                let client = SocketDescriptor.acceptConnection(on: descriptor)
                return (client, errno)
            } ?? (-1, EBADF)
            if client >= 0 { return TCPSocket(descriptor: client) }
            if handle.isClosedNow { return nil }
            switch Self.afterAcceptFailure(failure) {
            case .retry: continue
            case .retryLater: usleep(50_000)
            case .stop: return nil
            }
        }
    }

    /// What a failed `accept` means for the listener.
    enum AcceptFailure: Equatable {
        /// That connection is gone; the next may be taken at once.
        case retry
        /// Out of descriptors or memory for a moment: the connection stays queued, so wait for
        /// some to free up rather than spin.
        case retryLater
        /// The listener itself is closed or broken.
        case stop
    }

    static func afterAcceptFailure(_ code: Int32) -> AcceptFailure {
        switch code {
        case EINTR, ECONNABORTED, EPROTO:
            return .retry
        // A queued connection's own network error, which Linux reports through accept (its
        // manual says to treat these as EAGAIN), and a firewall's refusal: that connection
        // failed, not the listener (found by review: a server's accept loop ended for good).
        case ENETDOWN, ENOPROTOOPT, EHOSTDOWN, EHOSTUNREACH, EOPNOTSUPP, ENETUNREACH, EPERM:
            return .retry
        case EMFILE, ENFILE, ENOBUFS, ENOMEM:
            return .retryLater
        default:
            #if os(Linux)
            if code == ENONET { return .retry }
            #endif
            return .stop
        }
    }

    /// Stops listening; a blocked `accept` returns `nil`.
    public func close() {
        handle.close()
    }

    deinit { handle.close() }
}
