import Foundation
import SignalChat
@testable import SwitchboardGRPC
import SwitchboardIO
import SwitchboardRuntime
import Testing

/// A call answered before its deadline leaves no timer on the server's loop, even when its
/// request arrived in one read and the handler answered without suspending (the usual case).
@Suite(.timeLimit(.minutes(2)))
struct GRPCServerTimerTests {
    @Test func answeredCallsLeaveNoDeadlineTimerBehind() async throws {
        let loops = try EventLoopGroup(loopCount: 1, name: "grpc-timer-test")
        var serverOptions = GRPCServerOptions()
        serverOptions.eventLoops = loops
        let server = try GRPCServer(router: RPCRouter(routes: SampleHandlers().allRoutes), options: serverOptions)
        let transport = GRPCClientTransport<Unauthenticated>(host: "127.0.0.1", port: server.port)
        let usernames = UsernamesClient(transport: transport)
        for n in 0..<50 {
            // An hour's deadline: a timer left behind would wait that long.
            _ = try await usernames.lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([UInt8(n)])), options: CallOptions(timeout: .seconds(3600))).get()
        }
        // The connection's own timers (keepalive, settings) may wait; no call's does.
        let waiting = await loops.loops[0].liveTimerCount
        #expect(waiting < 5, "\(waiting) timers wait on the server's loop after 50 answered calls")
        transport.close()
        await server.shutdown(timeout: .seconds(1))
        await loops.shutdown()
    }
}
