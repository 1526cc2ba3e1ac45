import Foundation
import SwitchboardChat
import SwitchboardRuntime
import Testing

/// The mock server reads request headers as Signal's does: a `name:value` line that does not
/// split at its colons into exactly two parts is dropped, so a value holding a colon (a time,
/// a URL) never reaches a handler, in tests as in production (from the chat review: the mock
/// kept it, so tests passed where the real server lost the header).
@Suite(.timeLimit(.minutes(1)))
struct SignalHeaderRulesTests {
    static let echo = EndpointDescriptor(rpcName: "test.Echo/Headers", verb: "GET", pathTemplate: "/v1/headers", auth: .none)

    @Test func aHeaderValueWithAColonIsDroppedAsSignalsServerDropsIt() async throws {
        let server = try ChatServer(routes: [RPCRoute(endpoint: Self.echo) { request, _ in
            RPCResponse(status: 200, body: Data(request.headers.fields.map { "\($0.name)=\($0.value)" }.sorted().joined(separator: ",").utf8))
        }])
        defer { server.stop() }
        let connection = try await ChatClient.connectUnauthenticated(to: server.url, options: .init(keepalive: nil))
        defer { Task { await connection.close() } }
        let request = RPCRequest(endpoint: Self.echo, path: "/v1/headers", headers: ["X-When": "12:00", "X-Kept": "fine", "X-Link": "https://example.org"],
                                 deadline: .now.advanced(by: .seconds(10)))
        let response = try await connection.send(request)
        #expect(String(decoding: response.body, as: UTF8.self) == "X-Kept=fine")
    }
}
