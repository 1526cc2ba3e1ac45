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
    final class Accepted: @unchecked Sendable {
        let lock = NSLock()
        var descriptor: Int32?
    }

    @Test func acceptedConnectionsAreCloseOnExec() async throws {
        let loop = try EventLoop(name: "accept-test")
        defer { loop.shutdownBlocking() }
        let listener = try TCPListener()
        let accepted = Accepted()
        let acceptor = Acceptor(listener: listener, loop: loop) { descriptor in accepted.lock.withLock { accepted.descriptor = descriptor } }
        acceptor.start()
        defer { acceptor.stop(); listener.close() }
        let client = try TCPSocket.connect(host: "127.0.0.1", port: listener.port, timeout: .seconds(5))
        defer { client.close() }
        var server: Int32?
        for _ in 0..<500 where server == nil {
            server = accepted.lock.withLock { accepted.descriptor }
            if server == nil { try await Task.sleep(for: .milliseconds(10)) }
        }
        let descriptor = try #require(server)
        defer { _ = close(descriptor) }
        #expect(fcntl(descriptor, F_GETFD) & FD_CLOEXEC != 0)
    }

    @Test func aFarTimerOnAShutDownLoopDoesNotTrap() throws {
        let loop = try EventLoop(name: "far-timer-test")
        loop.shutdownBlocking()
        let timer = loop.schedule(after: .seconds(Int64.max / 4)) {}
        timer.cancel()
    }
}
