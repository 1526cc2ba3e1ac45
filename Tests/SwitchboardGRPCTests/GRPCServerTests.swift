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

/// Lookups that take grpcio to the server's edges (GRPCServerTests), told apart by the hash's
/// first byte; any other goes to ``SampleHandlers``, and its sealed sends are SampleHandlers'.
/// 0xfa throws the status in the next two bytes (big-endian), one the endpoint does not
/// declare, with the rest as its body; 0xfb sleeps a minute, noting whether cancellation
/// ended the sleep; 0xfc echoes the hash in base64 (an answer larger than the request).
struct ProbeHandlers: UsernamesHandler {
    /// What the probing lookups saw, for the test to read.
    struct Calls: Sendable {
        var echoed = 0
        var slowStarted = 0
        var slowCancelled = 0
        var slowFinished = 0
    }

    let calls = Locked(Calls())

    func lookUpUsernameHash(_ request: LookUpUsernameHashRequest, context: ServerContext) async throws(Usernames.LookUpUsernameHashError) -> LookUpUsernameHashResponse {
        let head = [UInt8](request.hash.prefix(3))
        switch head.first {
        case 0xfa where head.count == 3:
            throw .unrecognized(status: Int(head[1]) << 8 | Int(head[2]), body: Data(request.hash.dropFirst(3)))
        case 0xfb:
            calls.withLock { $0.slowStarted += 1 }
            do {
                try await Task.sleep(for: .seconds(60))
                calls.withLock { $0.slowFinished += 1 }
            } catch {
                calls.withLock { $0.slowCancelled += 1 }
            }
            return LookUpUsernameHashResponse(uuid: "slow")
        case 0xfc:
            calls.withLock { $0.echoed += 1 }
            return LookUpUsernameHashResponse(uuid: request.hash.base64EncodedString())
        default:
            return try await SampleHandlers().lookUpUsernameHash(request, context: context)
        }
    }

    var allRoutes: [RPCRoute] { Usernames.routes(self) + SealedSenderMessages.routes(SampleHandlers()) }
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

    /// What grpc_client_peer.py prints for each call it makes.
    struct Answer: Decodable {
        var name: String
        var code: String
        var details: String?
        var response: [String: String]?
        var trailers: [String: String]?
    }

    /// Serves `routes` (over TLS with the test CA's certificate, or h2c), runs
    /// grpc_client_peer.py against it with `mode`'s arguments while `during` runs beside the
    /// peer, and returns the peer's answers by name. The server is shut down whatever the peer
    /// did, and must be left without connections.
    static func grpcio(_ mode: [String] = [], security: GRPCPeer.Security, routes: [RPCRoute],
                       during: (PythonPeer) async -> Void = { _ in }) async throws -> [String: Answer] {
        let options = try await security.serverOptions()
        let server = try GRPCServer(router: RPCRouter(routes: routes), options: options)
        let result: (status: Int32, output: String)
        do {
            let directory = try ScratchDirectory.make("grpc-client")
            let proto = directory.appendingPathComponent("signal_chat.proto")
            try GRPCPeer.exportedProto().write(to: proto, atomically: true, encoding: .utf8)
            var arguments = [proto.path, "\(server.port)"]
            if security == .tls { arguments += ["--tls", await TestCertificates.file("ca.pem")] }
            let peer = try PythonPeer(script: "grpc_client_peer.py", arguments: arguments + mode)
            await during(peer)
            result = await peer.finishAsync(timeout: 120)
        } catch {
            await server.shutdown()
            throw error
        }
        await server.shutdown()
        #expect(server.connectionCount == 0)
        try #require(result.status == 0, "\(result.output)")
        let answers = try JSONDecoder().decode([Answer].self, from: Data(result.output.utf8))
        return Dictionary(answers.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
    }

    @Test(arguments: GRPCPeer.Security.allCases)
    func grpcioCallsOurServer(security: GRPCPeer.Security) async throws {
        let byName = try await Self.grpcio(security: security, routes: SampleHandlers().allRoutes)
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
    }

    /// The receive limit binds the encoded request message, as in grpc-go and grpc-java, and
    /// defaults to theirs (4 MiB): a request of exactly that is served, and its echo, larger
    /// still, reaches grpcio (our server sends answers of any size); one byte more is refused
    /// with RESOURCE_EXHAUSTED before the handler sees it, and the connection serves on.
    @Test(arguments: GRPCPeer.Security.allCases)
    func grpcioSendsARequestOfExactlyTheLimitAndNoMore(security: GRPCPeer.Security) async throws {
        let limit = GRPCServerOptions().maximumReceiveMessageSize
        #expect(limit == 4 << 20, "gRPC's usual default")
        let probe = ProbeHandlers()
        let byName = try await Self.grpcio(["--large", "\(limit)"], security: security, routes: probe.allRoutes)
        let atLimit = byName["at-limit"]
        #expect(atLimit?.code == "OK", "\(String(describing: atLimit))")
        #expect(atLimit?.response?["requestBytes"] == "\(limit)")
        #expect(atLimit?.response?["echoed"] == "True", "the handler had every byte, in order")
        let responseBytes = Int(atLimit?.response?["responseBytes"] ?? "") ?? 0
        #expect(responseBytes > limit, "an answer past the limit, which binds requests only")
        #expect(byName["over-limit"]?.code == "RESOURCE_EXHAUSTED")
        #expect(byName["over-limit"]?.details == "a message of \(limit + 1) bytes exceeds the maximum of \(limit)")
        #expect(byName["after-limit"]?.code == "OK")
        #expect(byName["after-limit"]?.response?["uuid"] == "0102")
        #expect(probe.calls.current.echoed == 1, "the refused request never reached the handler")
    }

    /// grpcio's `future.cancel()` resets the stream, and the reset cancels our handler's task:
    /// the handler, asleep for a minute under a two-minute deadline, sees the cancellation
    /// within seconds and never finishes, and the connection serves the next call.
    @Test(arguments: GRPCPeer.Security.allCases)
    func grpcioCancellingACallCancelsOurHandler(security: GRPCPeer.Security) async throws {
        let probe = ProbeHandlers()
        let byName = try await Self.grpcio(["--cancel"], security: security, routes: probe.allRoutes) { peer in
            // The peer cancels only when told, once the handler runs: the reset must reach a
            // running handler, not a call still on its way (a fixed wait loses that race on a
            // loaded machine). Told whatever happened, so the peer always goes on.
            let started = await eventually(within: .seconds(60)) { probe.calls.current.slowStarted == 1 }
            peer.writeInBackground(Data("cancel\n".utf8))
            #expect(started, "the slow call reached its handler")
            let cancelled = await eventually(within: .seconds(10)) { probe.calls.current.slowCancelled == 1 }
            #expect(cancelled, "the handler saw the cancellation within 10 s, long before its sleep or deadline ended")
        }
        #expect(byName["cancelled"]?.code == "CANCELLED")
        #expect(byName["cancelled"]?.response?["cancel"] == "True", "the call was still running when cancelled")
        #expect(byName["after-cancel"]?.code == "OK")
        #expect(byName["after-cancel"]?.response?["uuid"] == "0102")
        #expect(probe.calls.current.slowStarted == 1)
        #expect(probe.calls.current.slowFinished == 0)
    }

    /// Each kind of failure our server can give grpcio arrives with its exact code and
    /// grpc-message (and `switchboard-status` where a status was answered): a status the
    /// handler throws that its endpoint does not declare (`.unrecognized`, the only way a
    /// typed handler fails otherwise) by the schema's default mapping, UNKNOWN where that has no code, as
    /// for the declared 410 that names none; a 400's body as its message, percent-encoded on
    /// the wire and cut to 1 KiB; the router's refusals (a malformed message, the wrong kind of
    /// connection); and the transport's (not exactly one message, a compression not offered).
    @Test(arguments: GRPCPeer.Security.allCases)
    func grpcioReadsEveryFailureWithItsCodeAndMessage(security: GRPCPeer.Security) async throws {
        let byName = try await Self.grpcio(["--statuses"], security: security, routes: ProbeHandlers().allRoutes)
        let expected: [(name: String, code: String, message: String, status: String?)] = [
            ("undeclared-500", "INTERNAL", "status 500", "500"),
            ("undeclared-501", "UNIMPLEMENTED", "status 501", "501"),
            ("undeclared-503", "UNAVAILABLE", "status 503", "503"),
            ("undeclared-504", "DEADLINE_EXCEEDED", "status 504", "504"),
            ("undeclared-403", "PERMISSION_DENIED", "status 403", "403"),
            ("undeclared-418", "UNKNOWN", "status 418", "418"),
            // The schema's defaults, as for a declared error (not the HTTP mapping's 404
            // UNIMPLEMENTED, which says no such method); a 5xx without one is INTERNAL.
            ("undeclared-404", "NOT_FOUND", "status 404", "404"),
            ("undeclared-409", "ALREADY_EXISTS", "status 409", "409"),
            ("undeclared-502", "INTERNAL", "status 502", "502"),
            ("undeclared-400", "INVALID_ARGUMENT", " naïve 100% ünïcode ", "400"),
            ("undeclared-400-long", "INVALID_ARGUMENT", String(repeating: "e", count: 1021) + "…", "400"),
            ("declared-410", "UNKNOWN", "status 410", "410"),
            ("declared-404", "NOT_FOUND", "status 404", "404"),
            ("malformed", "INVALID_ARGUMENT", "the request is not a valid signal.chat.LookUpUsernameHashRequest", "400"),
            ("wrong-connection", "PERMISSION_DENIED", "Forbidden", "403"),
            ("two-messages", "INTERNAL", "a unary call needs exactly one request message, not more", nil),
            ("no-message", "INTERNAL", "a unary call needs exactly one request message, not 0", nil),
            ("compressed", "UNIMPLEMENTED", "grpc-encoding 'gzip' is not supported; this server accepts identity", nil),
        ]
        for (name, code, message, status) in expected {
            let answer = byName[name]
            #expect(answer?.code == code, "\(name): \(String(describing: answer))")
            #expect(answer?.details == message, "\(name)")
            #expect(answer?.trailers?["switchboard-status"] == status, "\(name)")
        }
        // The error bodies go too, for Switchboard clients.
        #expect(byName["undeclared-500"]?.trailers?["switchboard-error-body-bin"] == Data("boom".utf8).map { String(format: "%02x", $0) }.joined())
        let stale = StaleDevices(staleDevices: [4]).serializedBytes().map { String(format: "%02x", $0) }.joined()
        #expect(byName["declared-410"]?.trailers?["switchboard-error-body-bin"] == stale)
    }
}
