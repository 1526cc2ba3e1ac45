import Foundation
import SwitchboardChat
import SwitchboardRuntime
import SwitchboardWebSocket
import Testing

/// A chat server's per-connection limits are its own to set: the largest request it takes
/// follows `connectionOptions`, not a fixed 512 KiB.
@Suite(.timeLimit(.minutes(2)))
struct ChatServerConnectionOptionsTests {
    static let upload = EndpointDescriptor(rpcName: "test.Files/Upload", verb: "PUT", pathTemplate: "/v1/upload", auth: .none)

    static func server(_ options: WebSocketConnection.Options = .init()) throws -> ChatServer {
        try ChatServer(routes: [RPCRoute(endpoint: upload) { request, _ in
            RPCResponse(status: 200, body: Data(String(request.body?.count ?? 0).utf8))
        }], connectionOptions: options)
    }

    /// Sends `bytes` with the client's request limit raised out of the way (the server's is tested).
    static func send(_ bytes: Int, to server: ChatServer, maximumRequestSize: Int = 16 << 20) async throws -> RPCResponse {
        var options = ChatConnectionOptions(keepalive: nil)
        options.maximumRequestSize = maximumRequestSize
        let connection = try await ChatClient.connectUnauthenticated(to: server.url, options: options)
        defer { Task { await connection.close() } }
        let request = RPCRequest(endpoint: upload, path: "/v1/upload", body: Data(repeating: 7, count: bytes),
                                 deadline: .now.advanced(by: .seconds(30)))
        return try await connection.send(request)
    }

    /// The server closes with 1009 (message too big), which the caller sees as a lost connection.
    static func expectRefusedAsTooBig(_ bytes: Int, by server: ChatServer) async throws {
        do {
            let response = try await send(bytes, to: server)
            Issue.record("answered \(response.status)")
        } catch let TransportError.disconnected(reason) {
            #expect(reason.kind == .connectionLost)
            #expect(reason.detail.contains("1009"), "\(reason)")
        }
    }

    @Test func aRaisedMessageSizeTakesLargerRequests() async throws {
        let server = try Self.server(.init(configuration: .init(maximumMessageSize: 2 << 20)))
        defer { server.stop() }
        let response = try await Self.send(1_500_000, to: server)
        #expect(response.status == 200)
        #expect(String(decoding: response.body, as: UTF8.self) == "1500000")
    }

    @Test func theDefaultStillRefusesThem() async throws {
        let server = try Self.server()
        defer { server.stop() }
        try await Self.expectRefusedAsTooBig(1_500_000, by: server)
    }

    /// The client holds its requests to `maximumRequestSize` (512 KiB by default, what
    /// Signal's server takes): a larger one fails alone, as `invalidRequest`, and the calls
    /// beside it go on (from the chat review: sent, the server's 1009 failed every call on the
    /// connection as retryable, and a retry did the same on the next).
    @Test func aRequestPastTheClientsLimitFailsAloneBeforeItIsSent() async throws {
        let server = try Self.server()
        defer { server.stop() }
        let connection = try await ChatClient.connectUnauthenticated(to: server.url, options: .init(keepalive: nil))
        let large = RPCRequest(endpoint: Self.upload, path: "/v1/upload", body: Data(repeating: 7, count: 600 << 10), deadline: .now.advanced(by: .seconds(30)))
        do {
            let response = try await connection.send(large)
            Issue.record("answered \(response.status)")
        } catch {
            guard case let .invalidRequest(reason) = error else {
                Issue.record("expected invalidRequest, got \(error)")
                return
            }
            #expect(reason.contains("maximumRequestSize"), "\(reason)")
        }
        let small = RPCRequest(endpoint: Self.upload, path: "/v1/upload", body: Data(repeating: 7, count: 1000), deadline: .now.advanced(by: .seconds(30)))
        #expect(try await connection.send(small).status == 200, "the connection is still open")
        await connection.close()
    }

    @Test func aLoweredMessageSizeRefusesSmallerRequests() async throws {
        let server = try Self.server(.init(configuration: .init(maximumMessageSize: 4096)))
        defer { server.stop() }
        #expect(try await Self.send(1000, to: server).status == 200)
        try await Self.expectRefusedAsTooBig(8000, by: server)
    }
}
