import Foundation
#if canImport(Glibc)
import CEpoll
import Glibc

/// The raw floor on an event loop: one thread, epoll (level-triggered), non-blocking
/// sockets, each read written straight back. What a typed call on event loops is compared
/// with, alongside the thread-per-connection echo (ChatBenchmarks and WebSocketBenchmarks).
public final class EpollEchoServer: @unchecked Sendable {
    public let port: Int
    private let listener: Int32

    public init() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.listener = listener
        var yes: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        listen(listener, 1024)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) } }
        port = Int(UInt16(bigEndian: address.sin_port))
        let listening = listener
        Thread.detachNewThread { Self.run(listening) }
    }

    private static func run(_ listener: Int32) {
        let epoll = epoll_create1(0)
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.fd = listener
        epoll_ctl(epoll, EPOLL_CTL_ADD, listener, &event)
        var events = [epoll_event](repeating: epoll_event(), count: 256)
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = epoll_wait(epoll, &events, 256, -1)
            if count < 0 { continue }
            for index in 0..<Int(count) {
                let descriptor = events[index].data.fd
                if descriptor == listener {
                    let client = accept(listener, nil, nil)
                    guard client >= 0 else { continue }
                    var yes: Int32 = 1
                    setsockopt(client, Int32(IPPROTO_TCP), TCP_NODELAY, &yes, socklen_t(MemoryLayout<Int32>.size))
                    _ = fcntl(client, F_SETFL, fcntl(client, F_GETFL, 0) | O_NONBLOCK)
                    var clientEvent = epoll_event()
                    clientEvent.events = EPOLLIN.rawValue
                    clientEvent.data.fd = client
                    epoll_ctl(epoll, EPOLL_CTL_ADD, client, &clientEvent)
                    continue
                }
                let read = recv(descriptor, &buffer, buffer.count, 0)
                if read <= 0 {
                    if read < 0 && (errno == EAGAIN || errno == EINTR) { continue }
                    epoll_ctl(epoll, EPOLL_CTL_DEL, descriptor, nil)
                    close(descriptor)
                    continue
                }
                // Small echoes fit the socket buffer: a blocking-free write of all of it. Should the
                // buffer fill (a pipelining client with many echoes outstanding), wait for room
                // rather than drop bytes the client waits for; but a client that stops reading for
                // 5 s (50,000 waits) loses its connection rather than stall every other one.
                var sent = 0
                var waits = 0
                while sent < read {
                    let written = buffer.withUnsafeBytes { send(descriptor, $0.baseAddress! + sent, read - sent, Int32(MSG_NOSIGNAL)) }
                    if written > 0 {
                        sent += written
                    } else if written < 0 && (errno == EAGAIN || errno == EINTR) && waits < 50_000 {
                        waits += 1
                        usleep(100)
                    } else {
                        epoll_ctl(epoll, EPOLL_CTL_DEL, descriptor, nil)
                        close(descriptor)
                        break
                    }
                }
            }
        }
    }
}
#endif
