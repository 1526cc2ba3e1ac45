import Foundation
import SignalChat
import SwitchboardChat
import SwitchboardRuntime
import Testing

/// Client and server interceptor chains over a real chat connection and `ChatServer`.
@Suite(.timeLimit(.minutes(3)))
struct InterceptorsOverChatTests {
    /// Adds a bearer token to every call, as an app's auth interceptor would.
    struct BearerToken: ClientInterceptor {
        let token: String
        func intercept(
            _ request: RPCRequest, next: @Sendable (RPCRequest) async throws(TransportError) -> RPCResponse
        ) async throws(TransportError) -> RPCResponse {
            var request = request
            request.headers.set("Authorization", "Bearer \(token)")
            return try await next(request)
        }
    }

    /// Refuses a request without the right token before any handler runs, and records what it saw.
    struct RequireToken: ServerInterceptor {
        let seen: Locked<[String]>
        func intercept(
            _ request: ServerRequest, context: ServerContext, next: @Sendable (ServerRequest, ServerContext) async -> RPCResponse
        ) async -> RPCResponse {
            seen.withLock { $0.append(context.endpoint?.rpcName ?? "?") }
            guard request.headers["Authorization"] == "Bearer letmein" else { return RPCResponse(status: 404, message: "Not Found") }
            return await next(request, context)
        }
    }

    @Test func chainsRunOnBothSidesOfAChatConnection() async throws {
        let seen = Locked<[String]>([])
        let serverLog = Locked<[LoggingInterceptor.Record]>([])
        let server = try ChatServer(
            routes: LoopbackUsernames().routes,
            interceptors: [LoggingInterceptor { record in serverLog.withLock { $0.append(record) } }, RequireToken(seen: seen)])
        defer { server.stop() }
        let connection = try await ChatClient.connectUnauthenticated(to: server.url, options: .init(keepalive: nil))
        let clientLog = Locked<[LoggingInterceptor.Record]>([])
        let logging = LoggingInterceptor { record in clientLog.withLock { $0.append(record) } }

        let withToken = UsernamesClient(transport: connection, interceptors: [logging, BearerToken(token: "letmein")])
        let found = await withToken.lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([1, 2, 3])))
        #expect(found.value?.uuid == "alice")
        // Without the token the server's interceptor answers for the handler.
        let without = UsernamesClient(transport: connection, interceptors: [logging])
        #expect(await without.lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([1, 2, 3]))).endpointError == .notFound)

        #expect(seen.withLock { $0 } == Array(repeating: "signal.chat.Usernames/LookUpUsernameHash", count: 2))
        let served = serverLog.withLock { $0 }
        #expect(served.map(\.event) == [.requestServed, .requestServed])
        #expect(served.map(\.level) == [.info, .warning])
        // The server logs the template, and the client's token only as redacted.
        #expect(served.allSatisfy { $0.details.hasPrefix("GET /v1/accounts/username_hash/{hash} headers:") })
        #expect(served.first?.details.contains("Authorization: [REDACTED]") == true)
        #expect(!served.contains { $0.description.contains("letmein") })
        let called = clientLog.withLock { $0 }
        #expect(called.map(\.event) == [.callStarted, .callFinished, .callStarted, .callFinished])
        // Outermost, the logger sees the call before the token is added.
        #expect(!called.contains { $0.description.contains("letmein") })
        await connection.close()
    }
}
