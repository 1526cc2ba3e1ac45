import Foundation
@testable import SwitchboardChat
import SwitchboardRuntime
import SwitchboardWebSocket
import Testing

/// A response must carry an HTTP status: one without, or with a number no HTTP status can
/// be (0, or above 2^32 where 32-bit truncation would make it look like 200), fails its
/// request as an unexpected response instead of reaching the caller as a status.
@Suite(.timeLimit(.minutes(3)))
struct ResponseStatusTests {
    static func varint(_ value: UInt64) -> [UInt8] {
        var value = value, bytes: [UInt8] = []
        while value >= 0x80 { bytes.append(UInt8(value & 0x7F) | 0x80); value >>= 7 }
        return bytes + [UInt8(value)]
    }

    /// A response envelope to `id`, with `status` when given.
    static func response(to id: UInt64, status: UInt64?) -> Data {
        var inner = [0x08] + varint(id)
        if let status { inner += [0x10] + varint(status) }
        inner += [0x1A, 2] + Array("OK".utf8)
        return Data([0x08, 0x02, 0x1A] + varint(UInt64(inner.count)) + inner)
    }

    /// Answers every request with `status`.
    static func server(status: UInt64?) throws -> WebSocketServer {
        try WebSocketServer { connection in
            for await message in connection.messages {
                guard case let .binary(data) = message, let envelope = try? IncomingEnvelope(serializedData: data),
                      let id = envelope.request?.id else { continue }
                try? await connection.send(binary: response(to: id, status: status))
            }
        }
    }

    static let endpoint = EndpointDescriptor(rpcName: "test.S/Get", verb: "GET", pathTemplate: "/v1/s", auth: .none)

    @Test(arguments: [nil, 0, 99, 600, UInt64(UInt32.max) + 1 + 200] as [UInt64?])
    func aResponseWithoutAnHTTPStatusFailsItsRequest(status: UInt64?) async throws {
        let server = try Self.server(status: status)
        defer { server.stop() }
        let connection = try await ChatClient.connectUnauthenticated(
            to: URL(string: "ws://127.0.0.1:\(server.port)/v1/websocket/")!, options: .init(keepalive: nil))
        let result = await RPCCall.send(RPCRequest(endpoint: Self.endpoint, path: "/v1/s"), over: connection, options: .init(timeout: .seconds(30)))
        guard case let .failure(.unexpectedResponse(detail)) = result else {
            Issue.record("status \(String(describing: status)) gave \(result)")
            return
        }
        #expect(detail.contains(status.map { "status \($0)" } ?? "without a status"))
        await connection.close()
    }

    @Test func aRealStatusStillPasses() async throws {
        let server = try Self.server(status: 204)
        defer { server.stop() }
        let connection = try await ChatClient.connectUnauthenticated(
            to: URL(string: "ws://127.0.0.1:\(server.port)/v1/websocket/")!, options: .init(keepalive: nil))
        let result = await RPCCall.send(RPCRequest(endpoint: Self.endpoint, path: "/v1/s"), over: connection, options: .init(timeout: .seconds(30)))
        #expect((try? result.get().status) == 204)
        await connection.close()
    }
}
