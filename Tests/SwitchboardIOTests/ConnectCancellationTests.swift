import Foundation
import PeerSupport
@testable import SwitchboardIO
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Cancelling a task that is connecting ends the connect at once, not at its deadline (from
/// the I/O review).
@Suite(.timeLimit(.minutes(1)))
struct ConnectCancellationTests {
    #if os(Linux)
    @Test func cancellingAConnectEndsItAtOnce() async throws {
        // A connect to it hangs, as to a host that does not answer.
        let unanswering = try FullListenQueue()
        defer { unanswering.close() }
        let port = unanswering.port
        let loop = EventLoopGroup.shared.next()
        let attempt = Task { () -> Result<Int32, NetworkError> in
            do throws(NetworkError) {
                return .success(try await SocketConnector.connect(host: "127.0.0.1", port: port, deadline: .now + .seconds(30), loop: loop))
            } catch {
                return .failure(error)
            }
        }
        try await Task.sleep(for: .milliseconds(200))
        let cancelled = ContinuousClock.now
        attempt.cancel()
        let outcome = await attempt.value
        #expect(ContinuousClock.now - cancelled < .seconds(20), "the connect ran on after its task was cancelled")  // its deadline is 30 s
        guard case let .failure(.io(reason)) = outcome else {
            Issue.record("a cancelled connect fails, got \(outcome)")
            if case let .success(descriptor) = outcome { _ = close(descriptor) }
            return
        }
        #expect(reason.contains("cancelled"))
    }
    #endif
}
