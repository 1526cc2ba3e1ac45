import Foundation
import SignalChat
@testable import SwitchboardGRPC
import SwitchboardRuntime
import Testing

/// A connection without streams for the idle timeout is closed gracefully, so idle clients
/// cannot hold a server's connection slots; a connection with a stream open stays.
@Suite(.timeLimit(.minutes(2)))
struct GRPCIdleConnectionTests {
    @Test func anIdleConnectionIsClosedAndABusyOneStays() async throws {
        var options = GRPCServerOptions()
        options.http2.idleTimeout = .milliseconds(300)
        let server = try GRPCServer(router: RPCRouter(routes: SampleHandlers().allRoutes), options: options)
        #expect(GRPCServerOptions().http2.idleTimeout == .seconds(300), "the server's default")
        let idle = GRPCClientTransport<Unauthenticated>(host: "127.0.0.1", port: server.port)
        #expect(try await UsernamesClient(transport: idle).lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([1]))).get().uuid == "01")
        // A subscription keeps its stream open: that connection is not idle.
        let busy = GRPCClientTransport<Authenticated>(host: "127.0.0.1", port: server.port)
        let subscription = try await busy.subscribe(toEventsOf: "signal.chat.Messages") { _ in .withhold(reason: "test") }
        #expect(server.connectionCount == 2)
        for _ in 0..<300 where server.connectionCount > 1 { try await Task.sleep(for: .milliseconds(20)) }
        #expect(server.connectionCount == 1, "the idle connection was closed")
        try await Task.sleep(for: .seconds(1))
        #expect(server.connectionCount == 1, "the one with a stream open stays")
        // The idle client reconnects on its next call.
        #expect(try await UsernamesClient(transport: idle).lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([2]))).get().uuid == "02")
        subscription.cancel()
        idle.close()
        busy.close()
        await server.shutdown(timeout: .seconds(1))
    }
}
