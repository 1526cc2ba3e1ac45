import Foundation
import PeerSupport
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The sockets tests make are never inherited by the children the test process spawns (its
/// exit tests): an inherited peer stays open after its test closes it, and the test's
/// channel then writes into it instead of failing (a CI failure of
/// `aCollectedWriteThatFailsIsReportedAsAQueuedOneIs`).
@Suite(.timeLimit(.minutes(1)))
struct TestSocketHygieneTests {
    @Test func everyTestSocketIsCloseOnExec() throws {
        let (first, second) = try #require(TestSockets.pair())
        defer {
            _ = close(first)
            _ = close(second)
        }
        #expect(TestSockets.isCloseOnExec(first))
        #expect(TestSockets.isCloseOnExec(second))
        let (watched, peer) = try #require(nonBlockingSocketPair())
        defer {
            _ = close(watched)
            _ = close(peer)
        }
        #expect(TestSockets.isCloseOnExec(watched) && TestSockets.isCloseOnExec(peer))
        let (listener, port) = try loopbackListener()
        defer { _ = close(listener) }
        #expect(TestSockets.isCloseOnExec(listener))
        let client = TestSockets.stream()
        defer { _ = close(client) }
        #expect(TestSockets.isCloseOnExec(client))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(client, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        #expect(connected)
        let accepted = TestSockets.accept(on: listener)
        defer { if accepted >= 0 { _ = close(accepted) } }
        #expect(accepted >= 0 && TestSockets.isCloseOnExec(accepted))
    }
}
