import Foundation
import SignalChat
import SwitchboardGRPC
import SwitchboardRuntime
import Testing

/// A handler sees when its caller stops waiting (`ServerContext.deadline`), so that calls it
/// makes on the caller's behalf can be given what remains: over gRPC the caller's
/// `grpc-timeout`, never past the server's maximum; in process the call's own deadline.
@Suite(.timeLimit(.minutes(2)))
struct GRPCHandlerDeadlineTests {
    /// Answers with the time its context says remains, in milliseconds, as the uuid.
    struct RemainingTime: UsernamesHandler {
        func lookUpUsernameHash(_ request: LookUpUsernameHashRequest, context: ServerContext) async throws(Usernames.LookUpUsernameHashError) -> LookUpUsernameHashResponse {
            guard let remaining = context.timeRemaining else { return LookUpUsernameHashResponse(uuid: "none") }
            return LookUpUsernameHashResponse(uuid: String(remaining.components.seconds * 1000 + remaining.components.attoseconds / 1_000_000_000_000_000))
        }
    }

    @Test func theHandlerSeesTheCallersDeadlineBoundedByTheServers() async throws {
        var options = GRPCServerOptions()
        options.maximumCallTimeout = .seconds(40)
        let server = try GRPCServer(router: RPCRouter(routes: Usernames.routes(RemainingTime())), options: options)
        let transport = GRPCClientTransport<Unauthenticated>(host: "127.0.0.1", port: server.port)
        let client = UsernamesClient(transport: transport)
        func remaining(_ timeout: Duration?) async throws -> Int {
            let answer = try await client.lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([1])), options: CallOptions(timeout: timeout)).get()
            return try #require(Int(answer.uuid), "a deadline, got \(answer.uuid)")
        }
        // The caller's 10 s, less the time the call took to arrive.
        let given = try await remaining(.seconds(10))
        #expect(given > 5_000 && given <= 10_000, "\(given) ms")
        // Longer than the server allows: its 40 s.
        let capped = try await remaining(.seconds(100))
        #expect(capped > 35_000 && capped <= 40_000, "\(capped) ms")
        transport.close()
        await server.shutdown(timeout: .seconds(1))
    }

    @Test func anInProcessHandlerSeesTheCallsDeadline() async throws {
        let client = UsernamesClient(transport: InProcessTransport<Unauthenticated>(routes: Usernames.routes(RemainingTime())))
        let answer = try await client.lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([1])), options: CallOptions(timeout: .seconds(10))).get()
        let given = try #require(Int(answer.uuid), "a deadline, got \(answer.uuid)")
        #expect(given > 5_000 && given <= 10_000, "\(given) ms")
    }

    @Test func aContextMadeWithoutADeadlineHasNone() {
        let context = ServerContext(auth: .none)
        #expect(context.deadline == nil && context.timeRemaining == nil)
        let passed = ServerContext(auth: .none, deadline: .now - .seconds(1))
        #expect(passed.timeRemaining == .zero, "a deadline passed leaves nothing, not a negative time")
    }
}
