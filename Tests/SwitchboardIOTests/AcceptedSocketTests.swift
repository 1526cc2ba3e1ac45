import Foundation
@testable import SwitchboardIO
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Small guarantees of the I/O core (from the I/O review): accepted connections are
/// close-on-exec from the start, and a timer centuries away on a loop that has shut down does
/// not trap converting its delay.
@Suite(.timeLimit(.minutes(1)))
struct AcceptedSocketTests {
    @Test func acceptedConnectionsAreCloseOnExec() async throws {
        let loop = try EventLoop(name: "accept-test")
        defer { loop.shutdownBlocking() }
        let (client, server, listener, acceptor) = try await acceptedConnection(on: loop)
        defer { acceptor.stop(); listener.close(); client.close() }
        let descriptor = server
        defer { _ = close(descriptor) }
        #expect(fcntl(descriptor, F_GETFD) & FD_CLOEXEC != 0)
    }

    /// The blocking helpers' sockets (a connect, a listener and what it accepts) are
    /// close-on-exec too, so a process the app starts does not keep them open.
    @Test func blockingSocketsAreCloseOnExec() throws {
        let listener = try TCPListener(host: "127.0.0.1", port: 0)
        defer { listener.close() }
        #expect(fcntl(listener.handle.number, F_GETFD) & FD_CLOEXEC != 0, "the listener")
        let client = try TCPSocket.connect(host: "127.0.0.1", port: listener.port, deadline: .now + .seconds(10))
        defer { client.close() }
        #expect(fcntl(client.descriptor, F_GETFD) & FD_CLOEXEC != 0, "the connecting socket")
        let accepted = try #require(listener.accept())
        defer { accepted.close() }
        #expect(fcntl(accepted.descriptor, F_GETFD) & FD_CLOEXEC != 0, "the accepted socket")
    }

    @Test func aFarTimerOnAShutDownLoopDoesNotTrap() throws {
        let loop = try EventLoop(name: "far-timer-test")
        loop.shutdownBlocking()
        let fired = EventLoopCoreTests.Box(false)
        let timer = loop.schedule(after: .seconds(Int64.max / 4)) { fired.update { $0 = true } }
        timer.cancel()
        #expect(timer.isCancelled)
        #expect(!fired.value)
    }

    /// A queued connection's own network error, which Linux's `accept` reports for it, and a
    /// firewall's EPERM fail that connection, not the listener: the blocking accept loop goes
    /// on (it ended for good; from the event-loop review). Running out of descriptors waits;
    /// a closed or broken listener stops. (The errors cannot be made on loopback at will, so
    /// the decision is tested where it is made.)
    @Test func aConnectionsOwnFailureDoesNotEndTheAcceptLoop() {
        for code in [ENETDOWN, ENOPROTOOPT, EHOSTDOWN, EHOSTUNREACH, EOPNOTSUPP, ENETUNREACH, EPERM, EINTR, ECONNABORTED, EPROTO] {
            #expect(TCPListener.afterAcceptFailure(code) == .retry, "\(String(cString: strerror(code)))")
        }
        #if os(Linux)
        #expect(TCPListener.afterAcceptFailure(ENONET) == .retry)
        #endif
        for code in [EMFILE, ENFILE, ENOBUFS, ENOMEM] { #expect(TCPListener.afterAcceptFailure(code) == .retryLater) }
        for code in [EBADF, EINVAL, ENOTSOCK] { #expect(TCPListener.afterAcceptFailure(code) == .stop) }
    }
}
