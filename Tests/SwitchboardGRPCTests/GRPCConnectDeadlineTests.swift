import Foundation
import PeerSupport
import SignalChat
import SwitchboardGRPC
import SwitchboardRuntime
import Testing

/// A call waits for a connection no longer than its own deadline, whatever the connect
/// timeout: a server that never answers holds the connect attempt, not the call.
@Suite(.timeLimit(.minutes(2)))
struct GRPCConnectDeadlineTests {
    @Test func aCallLeavesAConnectAttemptAtItsDeadline() async throws {
        // A full accept queue: the kernel drops the SYN, so the TCP connect itself hangs.
        let listener = try FullListenQueue()
        defer { listener.close() }
        var options = GRPCClientOptions()
        options.connectTimeout = .seconds(30)
        let transport = GRPCClientTransport<Unauthenticated>(host: "127.0.0.1", port: listener.port, options: options)
        defer { transport.close() }
        let started = ContinuousClock.now
        let result = await UsernamesClient(transport: transport).lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([1])), options: CallOptions(timeout: .milliseconds(300)))
        let took = ContinuousClock.now - started
        #expect(result.transportError == .timeout, "\(result)")
        #expect(took < .seconds(15), "the call waited \(took), as long as the connect attempt")
    }
}
