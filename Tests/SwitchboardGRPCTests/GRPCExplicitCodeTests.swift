import Foundation
import PeerSupport
import SignalChat
import SwitchboardChat
@testable import SwitchboardGRPC
import SwitchboardRuntime
import SwitchboardWebSocket
import Testing

/// `sendMessage` answering with the errors it declares, by destination.
struct DeviceCheckingMessages: MessagesHandler {
    func sendMessage(_ request: SendMessageRequest, context: ServerContext) async throws(Messages.SendMessageError) -> SendMessageResponse {
        switch request.destination {
        case "mismatch": throw .mismatchedDevices(GRPCExplicitCodeTests.mismatch)
        case "stale": throw .staleDevices(StaleDevices(staleDevices: [4]))
        default: return SendMessageResponse(needsSync: request.destination == "sync")
        }
    }
}

/// An error whose schema names a gRPC code other than its status's default, end to end:
/// the sample schema's `sendMessage` declares `error 409 mismatchedDevices(MismatchedDevices)
/// grpc FAILED_PRECONDITION`, where 409's default is ALREADY_EXISTS, which
/// `sendSealedMessage`'s 409 keeps. Against grpcio both ways, in the clear and over TLS.
@Suite(.timeLimit(.minutes(5)))
struct GRPCExplicitCodeTests {
    static let mismatch = MismatchedDevices(missingDevices: [1, 2], extraDevices: [3])
    static let key = AccessKey(Data(repeating: 7, count: 16))

    @Test func theExplicitCodeTakesThePlaceOfTheDefault() {
        let failedPrecondition = GRPCStatusCode.failedPrecondition.rawValue
        let alreadyExists = GRPCStatusCode.alreadyExists.rawValue
        #expect(Messages.sendMessage.errorStatusByGRPCCode[failedPrecondition] == 409)
        #expect(Messages.sendMessage.errorStatusByGRPCCode[alreadyExists] == nil, "409's default is not this endpoint's")
        #expect(SealedSenderMessages.sendSealedMessage.errorStatusByGRPCCode[alreadyExists] == 409)
        #expect(SealedSenderMessages.sendSealedMessage.errorStatusByGRPCCode[failedPrecondition] == nil)
        // The code our server answers each endpoint's 409 with.
        #expect(GRPCStatusCode(errorStatus: 409, endpoint: Messages.sendMessage) == .failedPrecondition)
        #expect(GRPCStatusCode(errorStatus: 409, endpoint: SealedSenderMessages.sendSealedMessage) == .alreadyExists)
    }

    /// Our client against grpcio, which sends a bare status (no `switchboard-*` trailers): the
    /// explicit code is the declared error, and 409's default code is not, on this endpoint.
    @Test(arguments: GRPCPeer.Security.allCases)
    func grpcioAnsweringTheExplicitCodeGivesTheDeclaredError(security: GRPCPeer.Security) async throws {
        let peer = try await GRPCPeer.shared(security)
        let account: GRPCClientTransport<Authenticated> = try await GRPCInteropTests.transport(peer, security)
        let anonymous: GRPCClientTransport<Unauthenticated> = try await GRPCInteropTests.transport(peer, security)
        let messages = MessagesClient(transport: account)
        let sealed = SealedSenderMessagesClient(transport: anonymous)
        let request = SendMessageRequest(destination: "explicit-code")

        // FAILED_PRECONDITION: `mismatchedDevices`, with its status (grpcio sends no body).
        let capture = ResponseCapture()
        let explicit = await messages.sendMessage(request, options: CallOptions(headers: ["x-test": "status:9:explicit code"], responseCapture: capture))
        #expect(explicit == .nonSuccess(.mismatchedDevices(MismatchedDevices())), "\(explicit)")
        #expect(capture.status == 409)
        let seen = await peer.event { $0.method == "/signal.chat.Messages/SendMessage" && $0.metadata["x-test"] == "status:9:explicit code" }
        #expect(seen != nil, "grpcio answered the call")

        // ALREADY_EXISTS, 409's default, stands for no error of this endpoint: gRPC's status.
        let byDefault = await messages.sendMessage(request, options: GRPCInteropTests.test("status:6:default code"))
        if case let .failure(.grpcStatus(code, message, _)) = byDefault {
            #expect(code == GRPCStatusCode.alreadyExists.rawValue)
            #expect(message == "default code")
        } else {
            Issue.record("expected ALREADY_EXISTS as .grpcStatus, got \(byDefault)")
        }

        // The 409 of an endpoint without a `grpc` code keeps the default, not the other's code.
        let sealedDefault = await sealed.sendSealedMessage(request, accessKey: Self.key, options: GRPCInteropTests.test("status:6:default code"))
        #expect(sealedDefault == .nonSuccess(.mismatchedDevices(MismatchedDevices())), "\(sealedDefault)")
        let sealedExplicit = await sealed.sendSealedMessage(request, accessKey: Self.key, options: GRPCInteropTests.test("status:9:explicit code"))
        if case let .failure(.grpcStatus(code, message, _)) = sealedExplicit {
            #expect(code == GRPCStatusCode.failedPrecondition.rawValue)
            #expect(message == "explicit code")
        } else {
            Issue.record("expected FAILED_PRECONDITION as .grpcStatus, got \(sealedExplicit)")
        }
        account.close()
        anonymous.close()
        await peer.stop()
    }

    /// grpcio against our server, whose handler throws the declared error: grpcio sees the
    /// schema's code, with the exact status and body in the trailers; the other endpoint's 409
    /// still goes as the default.
    @Test(arguments: GRPCPeer.Security.allCases)
    func grpcioGetsTheExplicitCodeFromOurServer(security: GRPCPeer.Security) async throws {
        let options = try await security.serverOptions()
        let routes = Messages.routes(DeviceCheckingMessages()) + SampleHandlers().allRoutes
        let server = try GRPCServer(router: RPCRouter(routes: routes), options: options)
        let directory = try ScratchDirectory.make("grpc-explicit-code")
        let proto = directory.appendingPathComponent("signal_chat.proto")
        try GRPCPeer.exportedProto().write(to: proto, atomically: true, encoding: .utf8)
        var arguments = [proto.path, "\(server.port)"]
        if security == .tls { arguments += ["--tls", await TestCertificates.file("ca.pem")] }
        arguments.append("--explicit-code")
        let peer = try PythonPeer(script: "grpc_client_peer.py", arguments: arguments)
        let result = await peer.finishAsync(timeout: 60)
        try #require(result.status == 0, "\(result.output)")
        let answers = try JSONDecoder().decode([GRPCServerTests.Answer].self, from: Data(result.output.utf8))
        let byName = Dictionary(answers.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let body = Self.mismatch.serializedBytes().map { String(format: "%02x", $0) }.joined()
        #expect(byName["explicit"]?.code == "FAILED_PRECONDITION", "the schema's code, not 409's ALREADY_EXISTS: \(result.output)")
        #expect(byName["explicit"]?.trailers?["switchboard-status"] == "409")
        #expect(byName["explicit"]?.trailers?["switchboard-error-body-bin"] == body, "\(result.output)")
        #expect(byName["explicit-ok"]?.code == "OK", "\(result.output)")
        #expect(byName["explicit-ok"]?.response?["needsSync"] == "True")
        #expect(byName["default"]?.code == "ALREADY_EXISTS", "409's default code: \(result.output)")
        #expect(byName["default"]?.trailers?["switchboard-status"] == "409")
        await server.shutdown()
        #expect(server.connectionCount == 0)
    }
}
