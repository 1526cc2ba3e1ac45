import Dispatch
import Foundation
import SignalChat
import SwitchboardChat
import SwitchboardGRPC
import SwitchboardRuntime

// `CallProfile grpc|websocket N [K [C]]`: N `sendMessage` calls (K at a time on each of C connections,
// default 1 and 1) over our gRPC path
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
guard (3...5).contains(arguments.count), ["grpc", "websocket"].contains(arguments[1]), let calls = Int(arguments[2]), calls > 0,
      let inFlight = arguments.count >= 4 ? Int(arguments[3]) : 1, inFlight > 0,
      let connectionCount = arguments.count == 5 ? Int(arguments[4]) : 1, connectionCount > 0, calls % (inFlight * connectionCount) == 0 else {
    FileHandle.standardError.write(Data("usage: CallProfile grpc|websocket N [K [C]] (K times C dividing N)\n".utf8))
    exit(2)
}
let request = SendMessageRequest(
    destination: "a3d2c1f0-aaaa-bbbb-cccc-0123456789ab", timestamp: Date(timeIntervalSince1970: 1_700_000_000),
    messages: [OutgoingMessage(type: .ciphertext, destinationDeviceId: 1, destinationRegistrationId: 4242,
                               content: Data((0..<160).map { UInt8($0 % 251) }))],
    online: false, urgent: true)
let credentials = ChatClient.Credentials(username: "bench", deviceID: 1, password: "pw")
// A timeout whose `grpc-timeout` text (three significant digits: 1 s steps just under
// 1000 s) stays the same under valgrind, where calls queue 50 times as long as they do
// natively; the endpoint's own 30 s would round to a different 0.1 s step for many calls
// there, unlike a native run.
let callOptions = CallOptions(timeout: .seconds(1000))
let done = DispatchSemaphore(value: 0)
let failures = Locked(0)

/// The calls, `inFlight` callers on each client each making its share one after another.
@Sendable func run(_ clients: [MessagesClient]) async {
    await withTaskGroup(of: Void.self) { group in
        for client in clients {
            for _ in 0..<inFlight {
                group.addTask {
                    for _ in 0..<(calls / inFlight / clients.count) {
                        if case .success = await client.sendMessage(request, options: callOptions) {} else { failures.withLock { $0 += 1 } }
                    }
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
            let transports = (0..<connectionCount).map { _ in GRPCClientTransport<Authenticated>(host: "127.0.0.1", port: server.port, options: options) }
            await run(transports.map { MessagesClient(transport: $0) })
            for transport in transports { transport.close() }
            await server.shutdown()
        } else {
            let server = try ChatServer(routes: routes)
            var connections: [ChatConnection<Authenticated>] = []
            for _ in 0..<connectionCount {
                connections.append(try await ChatClient.connectAuthenticated(to: server.url, credentials: credentials, options: .init(keepalive: nil)))
            }
            await run(connections.map { MessagesClient(transport: $0) })
            for connection in connections { await connection.close() }
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
