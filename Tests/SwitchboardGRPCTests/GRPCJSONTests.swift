import Foundation
import SignalChat
import SwitchboardGRPC
import SwitchboardHTTP2
import SwitchboardIO
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

    /// A JSON request with a field the server's schema lacks (a client on a newer schema) is
    /// served, as the same body over the WebSocket path is; a server that asks for strict
    /// reading refuses it with INVALID_ARGUMENT.
    @Test func unknownJSONFieldsAreIgnoredUnlessTheServerSaysOtherwise() async throws {
        let routes = Usernames.routes(SampleHandlers())
        let lenient = try GRPCServer(router: RPCRouter(routes: routes))
        var strictOptions = GRPCServerOptions()
        strictOptions.jsonDecoding = JSONDecodingOptions(ignoreUnknownFields: false)
        let strict = try GRPCServer(router: RPCRouter(routes: routes), options: strictOptions)
        let body = Array(#"{"hash":"AQI=","addedInANewerSchema":5}"#.utf8)
        let served = try await offThreadCall(port: lenient.port, path: Usernames.lookUpUsernameHash.grpcPath, json: body)
        #expect(served.status == "0", "\(served)")
        #expect(String(decoding: served.message, as: UTF8.self) == #"{"uuid":"0102"}"#)
        let refused = try await offThreadCall(port: strict.port, path: Usernames.lookUpUsernameHash.grpcPath, json: body)
        #expect(refused.status == "3", "\(refused)")
        await lenient.shutdown()
        await strict.shutdown()
    }

    /// One `application/grpc+json` call over a blocking socket and the sans-IO client core:
    /// the status from the trailers and the response message's bytes.
    private func offThreadCall(port: Int, path: String, json: [UInt8]) async throws -> (status: String?, message: [UInt8]) {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                do {
                    let socket = try TCPSocket.connect(host: "127.0.0.1", port: port, timeout: .seconds(10))
                    defer { socket.close() }
                    try socket.setReadDeadline(.now + .seconds(60))
                    var client = HTTP2Connection(role: .client)
                    let id = try client.openStream(headers: [
                        HPACKHeader(":method", "POST"), HPACKHeader(":scheme", "http"), HPACKHeader(":path", path),
                        HPACKHeader(":authority", "127.0.0.1"), HPACKHeader("content-type", "application/grpc+json"), HPACKHeader("te", "trailers"),
                    ])
                    let length = UInt32(json.count)
                    try client.sendData([0, UInt8(length >> 24), UInt8(length >> 16 & 0xff), UInt8(length >> 8 & 0xff), UInt8(length & 0xff)] + json,
                                        streamID: id, endStream: true)
                    var status: String?
                    var message: [UInt8] = []
                    var closed = false
                    while !closed {
                        try socket.write(client.takeOutput())
                        let read = try socket.read(maximum: 65_536)
                        guard !read.isEmpty else { break }
                        for event in client.receive(read) {
                            switch event {
                            case let .headers(stream, headers, _) where stream == id:
                                if let value = headers.first(where: { $0.name == "grpc-status" })?.value { status = value }
                            case let .data(stream, bytes, _) where stream == id:
                                message += bytes
                            case let .streamClosed(stream, _) where stream == id:
                                closed = true
                            default:
                                break
                            }
                        }
                    }
                    continuation.resume(returning: (status, Array(message.dropFirst(5))))
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
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
