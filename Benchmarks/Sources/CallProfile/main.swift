import Dispatch
import Foundation
import SignalChat
import SwitchboardChat
import SwitchboardGRPC
import SwitchboardRuntime

// `CallProfile grpc|websocket N [K]`: N `sendMessage` calls (K at a time, default 1) over our gRPC path
// (GRPCClientTransport to GRPCServer, h2c) or our WebSocket path (ChatConnection to ChatServer),
// on loopback, both sides in this process. The main thread waits on a semaphore instead of
// running an async main, which valgrind 3.19 cannot run; so instruction counts per call come
// from `valgrind --tool=callgrind` at two values of N:
//   for n in 2000 4000; do valgrind --tool=callgrind CallProfile grpc $n; done

struct ProfiledMessages: MessagesHandler {
    func sendMessage(_ request: SendMessageRequest, context: ServerContext) async throws(Messages.SendMessageError) -> SendMessageResponse {
        SendMessageResponse(needsSync: request.urgent)
    }
}

let arguments = CommandLine.arguments
guard arguments.count == 3 || arguments.count == 4, ["grpc", "websocket"].contains(arguments[1]), let calls = Int(arguments[2]), calls > 0,
      let inFlight = arguments.count == 4 ? Int(arguments[3]) : 1, inFlight > 0, calls % inFlight == 0 else {
    FileHandle.standardError.write(Data("usage: CallProfile grpc|websocket N [K] (K dividing N)\n".utf8))
    exit(2)
}
let request = SendMessageRequest(
    destination: "a3d2c1f0-aaaa-bbbb-cccc-0123456789ab", timestamp: Date(timeIntervalSince1970: 1_700_000_000),
    messages: [OutgoingMessage(type: .ciphertext, destinationDeviceId: 1, destinationRegistrationId: 4242,
                               content: Data((0..<160).map { UInt8($0 % 251) }))],
    online: false, urgent: true)
let credentials = ChatClient.Credentials(username: "bench", deviceID: 1, password: "pw")
let done = DispatchSemaphore(value: 0)
let failures = Locked(0)

/// The calls, `inFlight` callers each making its share one after another.
@Sendable func run(_ client: MessagesClient) async {
    await withTaskGroup(of: Void.self) { group in
        for _ in 0..<inFlight {
            group.addTask {
                for _ in 0..<(calls / inFlight) {
                    if case .success = await client.sendMessage(request) {} else { failures.withLock { $0 += 1 } }
                }
            }
        }
    }
}

Task.detached {
    let routes = ProfiledMessages().routes
    do {
        if arguments[1] == "grpc" {
            let server = try GRPCServer(router: RPCRouter(routes: routes))
            var options = GRPCClientOptions()
            options.metadata = ["Authorization": credentials.authorization]
            let transport = GRPCClientTransport<Authenticated>(host: "127.0.0.1", port: server.port, options: options)
            let client = MessagesClient(transport: transport)
            await run(client)
            transport.close()
            await server.shutdown()
        } else {
            let server = try ChatServer(routes: routes)
            let connection = try await ChatClient.connectAuthenticated(to: server.url, credentials: credentials, options: .init(keepalive: nil))
            let client = MessagesClient(transport: connection)
            await run(client)
            await connection.close()
            server.stop()
        }
    } catch {
        FileHandle.standardError.write(Data("CallProfile: \(error)\n".utf8))
        failures.withLock { $0 += calls }
    }
    done.signal()
}
done.wait()
print("\(calls) calls over \(arguments[1]), \(failures.withLock { $0 }) failed")
exit(failures.withLock { $0 } == 0 ? 0 : 1)
