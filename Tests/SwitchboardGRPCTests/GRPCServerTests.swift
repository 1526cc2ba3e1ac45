import Foundation
import PeerSupport
import SignalChat
import SwitchboardChat
@testable import SwitchboardGRPC
import SwitchboardRuntime
import SwitchboardWebSocket
import Testing

/// Handlers for two unauthenticated sample services, with every kind of answer.
struct SampleHandlers: UsernamesHandler, SealedSenderMessagesHandler {
    func lookUpUsernameHash(_ request: LookUpUsernameHashRequest, context: ServerContext) async throws(Usernames.LookUpUsernameHashError) -> LookUpUsernameHashResponse {
        switch request.hash.first {
        case 0xff: throw .notFound
        case 0xfe: throw .rateLimited(retryAfter: .seconds(7))
        case 0xfd: try? await Task.sleep(for: .seconds(30)); return LookUpUsernameHashResponse(uuid: "late")
        default: return LookUpUsernameHashResponse(uuid: request.hash.map { String(format: "%02x", $0) }.joined())
        }
    }

    func sendSealedMessage(_ request: SendMessageRequest, context: ServerContext) async throws(SealedSenderMessages.SendSealedMessageError) -> SendMessageResponse {
        guard context.headers[AccessKey.headerName] != nil else { throw .unauthorized }
        switch request.destination {
        case "mismatch": throw .mismatchedDevices(MismatchedDevices(missingDevices: [1, 2], extraDevices: [3]))
        case "stale": throw .staleDevices(StaleDevices(staleDevices: [4]))
        case "nobody": throw .notFound
        default: return SendMessageResponse(needsSync: request.destination == "sync")
        }
    }

    var allRoutes: [RPCRoute] { Usernames.routes(self) + SealedSenderMessages.routes(self) }
}

/// Our gRPC server: the generated handlers answer our client with the same typed results as
/// in process, both transports carry the same app while endpoints flip between them, and
/// Python's grpcio calls it.
@Suite(.timeLimit(.minutes(5)))
struct GRPCServerTests {
    // Not an empty hash: over the WebSocket its path has no segment to route (404), while gRPC
    // delivers it; the guide says so.
    static let hashes: [Data] = [Data([1, 2, 3]), Data([0xff]), Data([0xfe])]
    static let destinations = ["bob", "sync", "mismatch", "stale", "nobody"]
    static let key = AccessKey(Data(repeating: 7, count: 16))

    /// Every sample call, as one comparable outcome each. The calls compare results, not
    /// latency: a generous deadline keeps a test process whose threads are all busy (the full
    /// suite on two cores) from turning a slow first call into a timeout.
    static func outcomes(usernames: UsernamesClient, sealed: SealedSenderMessagesClient) async -> [String] {
        let options = CallOptions(timeout: .seconds(120))
        var results: [String] = []
        for hash in hashes {
            results.append("\(await usernames.lookUpUsernameHash(LookUpUsernameHashRequest(hash: hash), options: options))")
        }
        for destination in destinations {
            results.append("\(await sealed.sendSealedMessage(SendMessageRequest(destination: destination), accessKey: key, options: options))")
        }
        return results
    }

    @Test func ourClientGetsWhatTheInProcessTransportGives() async throws {
        let handlers = SampleHandlers()
        let server = try GRPCServer(router: RPCRouter(routes: handlers.allRoutes))
        let grpc = GRPCClientTransport<Unauthenticated>(host: "127.0.0.1", port: server.port)
        let local = InProcessTransport<Unauthenticated>(routes: handlers.allRoutes)
        let overGRPC = await Self.outcomes(usernames: UsernamesClient(transport: grpc), sealed: SealedSenderMessagesClient(transport: grpc))
        let inProcess = await Self.outcomes(usernames: UsernamesClient(transport: local), sealed: SealedSenderMessagesClient(transport: local))
        #expect(overGRPC == inProcess)
        // The declared errors kept their bodies and Retry-After.
        #expect(overGRPC.contains { $0.contains("mismatchedDevices") && $0.contains("missingDevices: [1, 2]") })
        #expect(overGRPC.contains { $0.contains("rateLimited(retryAfter: Optional(7.0 seconds))") })
        // A deadline the server enforces too.
        let late = await UsernamesClient(transport: grpc).lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([0xfd])),
                                                                              options: CallOptions(timeout: .milliseconds(300)))
        #expect(late == .failure(.timeout))
        grpc.close()
        await server.shutdown()
    }

    @Test func endpointsFlipBetweenTransportsWhileCallsRun() async throws {
        let handlers = SampleHandlers()
        let chatServer = try ChatServer(routes: handlers.allRoutes)
        defer { chatServer.stop() }
        let grpcServer = try GRPCServer(router: RPCRouter(routes: handlers.allRoutes))
        let webSocket = try await ChatClient.connectUnauthenticated(to: chatServer.url)
        let grpc = GRPCClientTransport<Unauthenticated>(host: "127.0.0.1", port: grpcServer.port)
        let routing = RoutingTransport<Unauthenticated>(default: webSocket)
        let usernames = UsernamesClient(transport: routing)
        let sealed = SealedSenderMessagesClient(transport: routing)
        let expected = await Self.outcomes(usernames: UsernamesClient(transport: InProcessTransport(routes: handlers.allRoutes)),
                                           sealed: SealedSenderMessagesClient(transport: InProcessTransport(routes: handlers.allRoutes)))
        let names = [Usernames.lookUpUsernameHash.rpcName, SealedSenderMessages.sendSealedMessage.rpcName]
        // Rounds of calls finished, and whether the flipping is done: each routing lasts until
        // five rounds finish under it (with four callers, at least one begun under it), for
        // 5 s at most, which would be recorded as a failure.
        let rounds = Locked(0)
        let flipped = Locked(false)
        let mismatches = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    var wrong = 0
                    var made = 0
                    while made < 15 || !flipped.current {
                        if await Self.outcomes(usernames: usernames, sealed: sealed) != expected { wrong += 1 }
                        made += 1
                        rounds.withLock { $0 += 1 }
                    }
                    return wrong
                }
            }
            group.addTask {
                // Each endpoint over gRPC, then both, then each back, while the calls run.
                for step in 0..<12 {
                    let name = names[step % 2]
                    routing.route(name, to: (step / 2) % 2 == 0 ? grpc : nil)
                    let before = rounds.current
                    for _ in 0..<500 where rounds.current < before + 5 { try? await Task.sleep(for: .milliseconds(10)) }
                    if rounds.current < before + 5 { Issue.record("calls stalled under routing step \(step)") }
                }
                flipped.withLock { $0 = true }
                return 0
            }
            return await group.reduce(0, +)
        }
        #expect(mismatches == 0)
        #expect(grpc.connectionsOpened == 1, "the gRPC side carried calls on one connection")
        await webSocket.close()
        grpc.close()
        await grpcServer.shutdown()
    }

    @Test(arguments: GRPCPeer.Security.allCases)
    func grpcioCallsOurServer(security: GRPCPeer.Security) async throws {
        var options = GRPCServerOptions()
        if security == .tls {
            options.tls = try TLSServerContext(certificateChainPath: await TestCertificates.file("good.pem"),
                                               privateKeyPath: await TestCertificates.file("good.key"))
        }
        let server = try GRPCServer(router: RPCRouter(routes: SampleHandlers().allRoutes), options: options)
        let directory = try ScratchDirectory.make("grpc-client")
        let proto = directory.appendingPathComponent("signal_chat.proto")
        try GRPCPeer.exportedProto().write(to: proto, atomically: true, encoding: .utf8)
        var arguments = [proto.path, "\(server.port)"]
        if security == .tls { arguments += ["--tls", await TestCertificates.file("ca.pem")] }
        let peer = try PythonPeer(script: "grpc_client_peer.py", arguments: arguments)
        let result = await peer.finishAsync(timeout: 60)
        try #require(result.status == 0, "\(result.output)")
        struct Answer: Decodable {
            var name: String
            var code: String
            var details: String?
            var response: [String: String]?
            var trailers: [String: String]?
        }
        let answers = try JSONDecoder().decode([Answer].self, from: Data(result.output.utf8))
        let byName = Dictionary(answers.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        #expect(byName["found"]?.code == "OK")
        #expect(byName["found"]?.response?["uuid"] == "0102")
        #expect(byName["missing"]?.code == "NOT_FOUND")
        #expect(byName["missing"]?.trailers?["switchboard-status"] == "404")
        #expect(byName["limited"]?.code == "RESOURCE_EXHAUSTED")
        #expect(byName["limited"]?.trailers?["retry-after"] == "7")
        #expect(byName["sync"]?.code == "OK")
        #expect(byName["sync"]?.response?["needsSync"] == "True")
        #expect(byName["no-key"]?.code == "UNAUTHENTICATED")
        #expect(byName["mismatch"]?.code == "ALREADY_EXISTS", "409's default code")
        #expect(byName["unknown-method"]?.code == "UNIMPLEMENTED")
        #expect(byName["deadline"]?.code == "DEADLINE_EXCEEDED")
        #expect(byName["concurrent"]?.code == "OK", "100 concurrent calls on one channel")
        await server.shutdown()
        #expect(server.connectionCount == 0)
    }
}
