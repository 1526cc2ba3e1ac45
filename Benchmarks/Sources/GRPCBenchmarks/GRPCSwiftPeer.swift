import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2
import GRPCProtobuf
import SignalChatPeerMessages

// grpc-swift 2 (grpc-swift-nio-transport, HTTP/2 on SwiftNIO's Posix event loops, h2c) serving
// and calling the same `SendMessage` method with swift-protobuf's messages for the same
// `.proto`: the peer our gRPC path is measured against.

let sendMessageMethod = MethodDescriptor(fullyQualifiedService: "signal.chat.Messages", method: "SendMessage")

struct PeerMessagesService: RegistrableRPCService {
    func registerMethods<Transport: ServerTransport>(with router: inout GRPCCore.RPCRouter<Transport>) {
        router.registerHandler(forMethod: sendMessageMethod,
                               deserializer: ProtobufDeserializer<Signal_Chat_SendMessageRequest>(),
                               serializer: ProtobufSerializer<Signal_Chat_SendMessageResponse>()) { request, _ in
            var response = Signal_Chat_SendMessageResponse()
            for try await message in request.messages { response.needsSync = message.urgent }
            return StreamingServerResponse(single: ServerResponse(message: response))
        }
    }
}

/// A grpc-swift server on loopback, running until the process ends.
final class PeerServer: Sendable {
    let server: GRPCCore.GRPCServer<HTTP2ServerTransport.Posix>
    let port: Int

    init() async throws {
        // Flush coalescing off, as grpc-swift-nio-transport advises for latency-sensitive use:
        // on by default (since 2.8), it holds every flush up to 100 µs, on both sides.
        let transport = HTTP2ServerTransport.Posix(
            address: .ipv4(host: "127.0.0.1", port: 0), transportSecurity: .plaintext,
            config: .defaults { $0.connection.flushCoalescing = nil })
        let server = GRPCCore.GRPCServer(transport: transport, services: [PeerMessagesService()])
        self.server = server
        Task { try? await server.serve() }
        guard let address = try await transport.listeningAddress.ipv4 else { throw CancellationError() }
        port = address.port
    }
}

/// One grpc-swift client (one connection) with its connections running.
final class PeerClient: Sendable {
    let client: GRPCClient<HTTP2ClientTransport.Posix>
    private let runner: Task<Void, Never>

    init(port: Int) throws {
        let client = GRPCClient(transport: try .http2NIOPosix(
            target: .ipv4(address: "127.0.0.1", port: port), transportSecurity: .plaintext,
            config: .defaults { $0.connection.flushCoalescing = nil }))
        self.client = client
        runner = Task { try? await client.runConnections() }
    }

    /// One unary `SendMessage`; true when it succeeded.
    func send(_ request: Signal_Chat_SendMessageRequest) async -> Bool {
        do {
            let response = try await client.unary(request: ClientRequest(message: request), descriptor: sendMessageMethod,
                                                  serializer: ProtobufSerializer<Signal_Chat_SendMessageRequest>(),
                                                  deserializer: ProtobufDeserializer<Signal_Chat_SendMessageResponse>(),
                                                  options: .defaults) { try $0.message }
            return response.needsSync
        } catch {
            return false
        }
    }

    /// Shuts the client down and waits until its connections have closed.
    func close() async {
        client.beginGracefulShutdown()
        await runner.value
    }
}

/// The same request as the Switchboard contenders send, in swift-protobuf's type.
let peerRequest: Signal_Chat_SendMessageRequest = {
    var request = Signal_Chat_SendMessageRequest()
    request.destination = "a3d2c1f0-aaaa-bbbb-cccc-0123456789ab"
    request.timestamp = 1_700_000_000_000
    var message = Signal_Chat_OutgoingMessage()
    message.type = .ciphertext
    message.destinationDeviceID = 1
    message.destinationRegistrationID = 4242
    message.content = Data((0..<160).map { UInt8($0 % 251) })
    request.messages = [message]
    request.urgent = true
    return request
}()
