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

    static func send(_ bytes: Int, to server: ChatServer) async throws -> RPCResponse {
        let connection = try await ChatClient.connectUnauthenticated(to: server.url, options: .init(keepalive: nil))
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

    @Test func aLoweredMessageSizeRefusesSmallerRequests() async throws {
        let server = try Self.server(.init(configuration: .init(maximumMessageSize: 4096)))
        defer { server.stop() }
        #expect(try await Self.send(1000, to: server).status == 200)
        try await Self.expectRefusedAsTooBig(8000, by: server)
    }
}
