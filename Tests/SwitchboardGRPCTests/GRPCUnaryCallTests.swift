import Foundation
import PeerSupport
import SignalChat
@testable import SwitchboardGRPC
import SwitchboardHTTP2
import SwitchboardRuntime
import Testing

/// One call's ending: the outcome reaches its caller whether the call ends before the caller
/// waits for it (kept for the caller) or after (handed straight over).
@Suite(.timeLimit(.minutes(1)))
struct GRPCUnaryCallTests {
    static func call(on transport: GRPCClientTransport<Unauthenticated>, port: Int, hash: UInt8) async throws -> GRPCUnaryCall {
        let options = GRPCClientOptions()
        let connection = try await transport.openConnection(deadline: nil)
        let message = LookUpUsernameHashRequest(hash: Data([hash]))
        let request = RPCRequest(endpoint: Usernames.lookUpUsernameHash, path: "", message: message)
        return GRPCUnaryCall(connection: connection, request: request, framedMessage: GRPCMessageFramer.frame(message.serializedBytes()),
                             options: options, head: GRPCRequestHead(host: "127.0.0.1", port: port, options: options),
                             sharedMetadata: GRPCSharedHeaderLists.requestMetadata(of: request.headers), json: false)
    }

    @Test func aCallCancelledBeforeItsCallerWaitsEndsCancelledAndTheNextIsAnswered() async throws {
        let server = try GRPCServer(router: RPCRouter(routes: SampleHandlers().allRoutes))
        let transport = GRPCClientTransport<Unauthenticated>(host: "127.0.0.1", port: server.port)
        let cancelled = try await Self.call(on: transport, port: server.port, hash: 0x01)
        // Cancelled first: the cancellation handler ends the call before `run` waits.
        let early = await Task { () -> GRPCUnaryCall.Outcome in
            withUnsafeCurrentTask { $0?.cancel() }
            return await cancelled.run()
        }.value
        var endedCancelled = false
        if case .failed(.cancelled) = early { endedCancelled = true }
        #expect(endedCancelled, "a call cancelled before it ran ended as \(early)")
        // Answered after its caller waits: the outcome is handed over, not kept.
        let answered = await (try await Self.call(on: transport, port: server.port, hash: 0xab)).run()
        var message: Data?
        if case let .finished(response) = answered { message = response.message }
        #expect(message.flatMap { try? LookUpUsernameHashResponse(serializedBytes: Array($0)) }?.uuid == "ab", "the next call ended as \(answered)")
        transport.close()
        await server.shutdown()
    }

    /// The driver's timers and write completions hold it strongly (a weak reference would
    /// make its every retain dearer): once its connection has ended, nothing may keep it.
    @Test func aClosedConnectionsDriverIsReleased() async throws {
        let server = try GRPCServer(router: RPCRouter(routes: SampleHandlers().allRoutes))
        let transport = GRPCClientTransport<Unauthenticated>(host: "127.0.0.1", port: server.port)
        weak var driver: HTTP2ChannelDriver?
        do {
            let connection = try await transport.openConnection(deadline: nil)
            driver = connection.driver
            let answered = await (try await Self.call(on: transport, port: server.port, hash: 0x01)).run()
            if case .finished = answered {} else { Issue.record("the call ended as \(answered)") }
        }
        #expect(driver != nil, "alive while its connection is open")
        transport.close()
        await server.shutdown()
        // Released on the loop once the socket is: a bounded wait.
        _ = await eventually(within: .seconds(60)) { driver == nil }
        #expect(driver == nil, "a closed connection's driver is kept")
    }
}
