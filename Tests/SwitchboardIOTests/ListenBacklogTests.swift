import Foundation
import PeerSupport
@testable import SwitchboardIO
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The listen backlog is an option (it was `SOMAXCONN`, 128 on Apple platforms, below a
/// server's default 1,024 connections; from the event-loop review): what the kernel holds for
/// `accept` follows it.
@Suite(.timeLimit(.minutes(1)))
struct ListenBacklogTests {
    /// How many of `count` loopback connects to `port` complete within 300 ms, nobody accepting.
    static func completedConnects(to port: Int, count: Int) -> Int {
        var sockets: [Int32] = []
        defer { for socket in sockets { _ = close(socket) } }
        for _ in 0..<count {
            let socket = TestSockets.stream()
            _ = fcntl(socket, F_SETFL, fcntl(socket, F_GETFL, 0) | O_NONBLOCK)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
            sockets.append(socket)
        }
        var polled = sockets.map { pollfd(fd: $0, events: Int16(POLLOUT), revents: 0) }
        let deadline = ContinuousClock.now + .milliseconds(300)
        while ContinuousClock.now < deadline {
            _ = poll(&polled, nfds_t(polled.count), 20)
            if polled.allSatisfy({ $0.revents != 0 }) { break }
        }
        return polled.filter { entry in
            guard entry.revents & Int16(POLLOUT) != 0 else { return false }
            var error: Int32 = 0
            var size = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(entry.fd, SOL_SOCKET, SO_ERROR, &error, &size)
            return error == 0
        }.count
    }

    @Test func theKernelQueuesWhatTheBacklogAllows() throws {
        let narrow = try TCPListener(backlog: 1)
        defer { narrow.close() }
        let wide = try TCPListener()
        defer { wide.close() }
        #expect(Self.completedConnects(to: narrow.port, count: 20) <= 4, "a backlog of 1 held more")
        #expect(Self.completedConnects(to: wide.port, count: 20) == 20)
    }
}
