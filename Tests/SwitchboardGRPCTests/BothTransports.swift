import Foundation
import SignalChat
import SwitchboardChat
import SwitchboardGRPC
import SwitchboardRuntime

/// One set of routes served twice, by a `ChatServer` (WebSocket) and a `GRPCServer`, with an
/// authenticated client transport to each: for tests that hold both transports to the same
/// typed results.
struct BothTransports {
    static let credentials = ChatClient.Credentials(username: "aci-1", deviceID: 1, password: "pw")

    let chatServer: ChatServer
    let webSocket: ChatConnection<Authenticated>
    let grpcServer: GRPCServer
    let grpc: GRPCClientTransport<Authenticated>

    init(routes: [RPCRoute]) async throws {
        chatServer = try ChatServer(routes: routes)
        webSocket = try await ChatClient.connectAuthenticated(to: chatServer.url, credentials: Self.credentials)
        var options = GRPCClientOptions()
        options.metadata.add("Authorization", Self.credentials.authorization)
        grpcServer = try GRPCServer(router: RPCRouter(routes: routes))
        grpc = GRPCClientTransport<Authenticated>(host: "127.0.0.1", port: grpcServer.port, options: options)
    }

    /// Closes both clients and stops both servers.
    func close() async {
        await webSocket.close()
        grpc.close()
        await grpcServer.shutdown()
        chatServer.stop()
    }
}
