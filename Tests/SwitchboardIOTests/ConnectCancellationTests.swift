import Foundation
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
    /// A loopback listener whose accept queue is full: further connects hang in SYN_SENT, as
    /// to a host that does not answer. The caller closes the descriptors.
    func unansweringListener() throws -> (port: Int, listener: Int32, fillers: [TCPSocket]) {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        try #require(withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) } } == 0)
        try #require(listen(listener, 0) == 0)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) } }
        let port = Int(UInt16(bigEndian: address.sin_port))
        var fillers: [TCPSocket] = []
        // Fill the queue: once a connect does not complete within 300 ms, the next ones hang too.
        for _ in 0..<16 {
            guard let socket = try? TCPSocket.connect(host: "127.0.0.1", port: port, timeout: .milliseconds(300)) else { return (port, listener, fillers) }
            fillers.append(socket)
        }
        Issue.record("the accept queue never filled")
        return (port, listener, fillers)
    }

    @Test func cancellingAConnectEndsItAtOnce() async throws {
        let (port, listener, fillers) = try unansweringListener()
        defer {
            for socket in fillers { socket.close() }
            _ = close(listener)
        }
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
        #expect(ContinuousClock.now - cancelled < .seconds(5), "the connect ran on after its task was cancelled")
        guard case let .failure(.io(reason)) = outcome else {
            Issue.record("a cancelled connect fails, got \(outcome)")
            if case let .success(descriptor) = outcome { _ = close(descriptor) }
            return
        }
        #expect(reason.contains("cancelled"))
    }
    #endif
}
