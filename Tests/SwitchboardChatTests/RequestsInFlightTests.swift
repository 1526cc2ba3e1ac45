import Foundation
import SwitchboardChat
import SwitchboardRuntime
import PeerSupport
import Testing

/// A client's requests in handlers at once are bounded: past the limit a request is answered
/// 503 at once, and the slots free as handlers answer.
@Suite(.timeLimit(.minutes(2)))
struct RequestsInFlightTests {
    static let endpoint = EndpointDescriptor(rpcName: "test.Slow/Wait", verb: "GET", pathTemplate: "/v1/slow", auth: .none)

    @Test func requestsPastTheLimitAreAnswered503() async throws {
        let release = Locked(false)
        let entered = Locked(0)
        let server = try ChatServer(routes: [RPCRoute(endpoint: Self.endpoint) { _, _ in
            entered.withLock { $0 += 1 }
            for _ in 0..<3000 where !release.current { try? await Task.sleep(for: .milliseconds(10)) }
            return RPCResponse(status: 200)
        }], maximumRequestsInFlight: 2)
        defer { server.stop() }
        let connection = try await ChatClient.connectUnauthenticated(to: server.url, options: .init(keepalive: nil))
        let request = RPCRequest(endpoint: Self.endpoint, path: "/v1/slow", deadline: .now.advanced(by: .seconds(60)))
        let held = (0..<2).map { _ in Task { try? await connection.send(request) } }
        // Both slots taken (the server has them in hand) before the third arrives.
        for _ in 0..<1000 where entered.current < 2 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(entered.current == 2)
        let refused = try await connection.send(request)
        #expect(refused.status == 503)
        #expect(refused.headers["Retry-After"] == "1")
        release.withLock { $0 = true }
        for call in held { #expect(await call.value?.status == 200) }
        // Slots freed: the next request is served.
        #expect(try await connection.send(request).status == 200)
        await connection.close()
    }

    /// The bytes all clients have in handlers are bounded too: two clients, each far below its
    /// own count, share one budget; past it, either is answered 503 until a handler answers.
    @Test func requestBytesAcrossClientsAreBounded() async throws {
        let upload = EndpointDescriptor(rpcName: "test.Slow/Upload", verb: "PUT", pathTemplate: "/v1/upload", auth: .none)
        let release = Locked(false)
        let entered = Locked(0)
        let server = try ChatServer(routes: [RPCRoute(endpoint: upload) { _, _ in
            entered.withLock { $0 += 1 }
            for _ in 0..<3000 where !release.current { try? await Task.sleep(for: .milliseconds(10)) }
            return RPCResponse(status: 200)
        }], maximumRequestBytesInFlight: 10_000)
        defer { server.stop() }
        let first = try await ChatClient.connectUnauthenticated(to: server.url, options: .init(keepalive: nil))
        let second = try await ChatClient.connectUnauthenticated(to: server.url, options: .init(keepalive: nil))
        // About 3 KiB on the wire each: three fit in 10,000 bytes, a fourth does not.
        let request = RPCRequest(endpoint: upload, path: "/v1/upload", body: Data(repeating: 7, count: 3000), deadline: .now.advanced(by: .seconds(60)))
        let held = [first, second, first].map { connection in Task { try? await connection.send(request) } }
        for _ in 0..<1000 where entered.current < 3 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(entered.current == 3)
        #expect(server.requestBytesInFlight > 9000 && server.requestBytesInFlight <= 10_000, "\(server.requestBytesInFlight)")
        let refused = try await second.send(request)
        #expect(refused.status == 503)
        #expect(refused.headers["Retry-After"] == "1")
        release.withLock { $0 = true }
        for call in held { #expect(await call.value?.status == 200) }
        #expect(await eventually(within: .seconds(10)) { server.requestBytesInFlight == 0 })
        #expect(try await second.send(request).status == 200, "the budget was given back")
        #expect(entered.current == 4)
        await first.close()
        await second.close()
    }
}
