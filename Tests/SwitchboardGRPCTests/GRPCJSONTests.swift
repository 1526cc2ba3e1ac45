import Foundation
import SignalChat
import SwitchboardGRPC
import SwitchboardRuntime
import Testing

/// Keeps the last response a call got, for its Content-Type and body.
final class LastResponseInterceptor: ClientInterceptor, @unchecked Sendable {
    let last = Locked<RPCResponse?>(nil)
    func intercept(_ request: RPCRequest, next: @Sendable (RPCRequest) async throws(TransportError) -> RPCResponse) async throws(TransportError) -> RPCResponse {
        let response = try await next(request)
        last.withLock { $0 = response }
        return response
    }
}

/// `application/grpc+json` for `encoding json` services, when the client asks for it: our
/// client with our server, and with a grpcio server whose methods read and write JSON.
@Suite(.timeLimit(.minutes(4))) struct GRPCJSONTests {
    /// The endpoint's own 10 s wins over the transport's default; a full parallel test run
    /// can take longer than that to schedule a call.
    static let patient = CallOptions(timeout: .seconds(300))

    static func jsonOptions() -> GRPCClientOptions {
        var options = GRPCClientOptions()
        options.usesJSONForJSONEndpoints = true
        options.defaultRequestTimeout = .seconds(60)
        return options
    }

    @Test func ourClientAndServerCarryJSONServicesAsJSON() async throws {
        let server = try GRPCServer(router: RPCRouter(routes: Usernames.routes(SampleHandlers()) + SealedSenderMessages.routes(SampleHandlers())))
        let transport = GRPCClientTransport<Unauthenticated>(host: "127.0.0.1", port: server.port, options: Self.jsonOptions())
        let capture = LastResponseInterceptor()
        let usernames = UsernamesClient(transport: transport, interceptors: [capture])
        #expect(try await usernames.lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([1, 2])), options: GRPCJSONTests.patient).get().uuid == "0102")
        // The server answered in JSON, which it could only do for a request it read as JSON.
        let answer = try #require(capture.last.current)
        #expect(answer.headers["Content-Type"] == "application/json")
        #expect(String(decoding: answer.body, as: UTF8.self) == #"{"uuid":"0102"}"#)
        #expect(await usernames.lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([0xff])), options: GRPCJSONTests.patient).endpointError == .notFound)
        #expect(await usernames.lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([0xfe])), options: GRPCJSONTests.patient).endpointError == .rateLimited(retryAfter: .seconds(7)))
        // A protobuf service on the same transport stays protobuf.
        let sealed = SealedSenderMessagesClient(transport: transport, interceptors: [capture])
        _ = await sealed.sendSealedMessage(SendMessageRequest(destination: "x"), accessKey: AccessKey(Data([1])), options: Self.patient)
        #expect(capture.last.current?.headers["Content-Type"] != "application/json")
        transport.close()
        await server.shutdown()
    }

    @Test func aGRPCCoreServerWithJSONMethodsAnswersOurJSONRequests() async throws {
        let peer = try await GRPCPeer.json.value
        let transport = GRPCClientTransport<Unauthenticated>(host: "127.0.0.1", port: peer.port, options: Self.jsonOptions())
        // The peer parses the request as JSON (a protobuf request would not parse) and answers
        // the hash, hex-encoded, in JSON.
        let result = await UsernamesClient(transport: transport).lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([0xab, 0xcd])), options: GRPCJSONTests.patient)
        #expect(result.value?.uuid == "abcd", "\(result)")
        transport.close()
    }
}
