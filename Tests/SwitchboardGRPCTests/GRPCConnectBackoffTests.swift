import Foundation
import PeerSupport
import SignalChat
@testable import SwitchboardGRPC
import SwitchboardIO
import SwitchboardRuntime
import Testing

/// After a failed connect, calls fail at once with its error until the backoff has passed,
/// instead of dialling a server that refuses connections once per call.
@Suite(.timeLimit(.minutes(2)))
struct GRPCConnectBackoffTests {
    @Test func callsDuringTheBackoffFailAtOnceAndTheNextConnectSucceeds() async throws {
        // A free port with nothing listening on it, outside the range other tests' sockets
        // draw from, so none of them takes it before the server below binds it.
        let port = FixedPorts.free()
        var options = GRPCClientOptions()
        options.connectBackoff = RetryBackoff(maximum: .seconds(2))
        let transport = GRPCClientTransport<Unauthenticated>(host: "127.0.0.1", port: port, options: options)
        defer { transport.close() }
        let client = UsernamesClient(transport: transport)
        let before = ContinuousClock.now
        let first = await client.lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([1])))
        guard case .disconnected? = first.transportError else {
            Issue.record("nothing listens: \(first)")
            return
        }
        // The server comes up, but the backoff (1 s ± 20% after one failure) still holds.
        let server = try GRPCServer(router: RPCRouter(routes: SampleHandlers().allRoutes), port: port)
        defer { Task { await server.shutdown(timeout: .seconds(1)) } }
        let during = await client.lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([1])))
        // Only while the shortest backoff (0.8 s) cannot have passed, measured from before the
        // first call to after this one (an over-estimate): a loaded machine can take longer
        // than that to start the server, and then a connect is right.
        if ContinuousClock.now - before < .milliseconds(750) {
            #expect(during.transportError == first.transportError, "the last connect's error, at once: \(during)")
            #expect(server.connectionCount == 0, "no connect was attempted")
        }
        // Past the backoff, the next call connects.
        try await Task.sleep(for: .milliseconds(1300))
        let after = await client.lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([1])))
        #expect(after.value?.uuid == "01", "\(after)")
    }
}
