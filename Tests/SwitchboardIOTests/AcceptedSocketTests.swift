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

    @Test func aFarTimerOnAShutDownLoopDoesNotTrap() throws {
        let loop = try EventLoop(name: "far-timer-test")
        loop.shutdownBlocking()
        let fired = EventLoopCoreTests.Box(false)
        let timer = loop.schedule(after: .seconds(Int64.max / 4)) { fired.update { $0 = true } }
        timer.cancel()
        #expect(timer.isCancelled)
        #expect(!fired.value)
    }
}
