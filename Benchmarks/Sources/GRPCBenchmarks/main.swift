import BenchmarkSupport
import Foundation
import SignalChat
import SwitchboardChat
import SwitchboardGRPC
import SwitchboardHTTP2
import SwitchboardRuntime

// The same `sendMessage` in one run over our two transports, the WebSocket chat connection to
// ChatServer and gRPC (h2c) to our GRPCServer, both serving one generated handler, and over
// grpc-swift 2 (its client and server on SwiftNIO, h2c) with swift-protobuf's messages.
// One connection with 1 and with 64 calls in flight, and 100 connections at once. Twelve
// rounds, each order of the three contenders twice, each contender starting once the last one's
// connections are gone; each one's median round is reported, and the gRPC/WebSocket ratio
// paired round by round (the two run within seconds of each other in every round, so drift in
// the shared machine's load between rounds cancels). Prints Markdown.

/// The orders of the three contenders (0: our WebSocket path, 1: our gRPC path, 2: grpc-swift).
let orders = [[0, 1, 2], [1, 2, 0], [2, 0, 1], [0, 2, 1], [2, 1, 0], [1, 0, 2]]
/// Each order twice.
let rounds = 2 * orders.count
/// Each round: every caller calls for 0.1 s unmeasured, then 1 s measured (a closed loop). Half
/// a second (until 2026-12-01) left single rounds at 100 connections spread from 0.66x to 2.08x
/// on this shared 2-core machine, and the median of twelve with them.
let window = Span.window(warmUp: 0.1, measured: 1.0)
let inFlight = 64
let connectionCount = 100

let request = SendMessageRequest(
    destination: "a3d2c1f0-aaaa-bbbb-cccc-0123456789ab", timestamp: Date(timeIntervalSince1970: 1_700_000_000),
    messages: [OutgoingMessage(type: .ciphertext, destinationDeviceId: 1, destinationRegistrationId: 4242,
                               content: Data((0..<160).map { UInt8($0 % 251) }))],
    online: false, urgent: true)

struct BenchmarkMessages: MessagesHandler {
    func sendMessage(_ request: SendMessageRequest, context: SwitchboardRuntime.ServerContext) async throws(Messages.SendMessageError) -> SendMessageResponse {
        SendMessageResponse(needsSync: request.urgent)
    }
}

/// `tasksPerClient` callers on each client for `span`, after one warm-up call per client;
/// `call` says whether a call succeeded.
func measure<Client: Sendable>(_ clients: [Client], tasksPerClient: Int, span: Span,
                               call: @escaping @Sendable (Client) async -> Bool) async -> Run {
    for client in clients { _ = await call(client) }
    let callers = clients.flatMap { Array(repeating: (caller: $0, executor: (any TaskExecutor)?.none), count: tasksPerClient) }
    return await closedLoop(callers, span: span, call: call)
}

/// The typed `sendMessage` through each generated client.
func measure(_ clients: [MessagesClient], tasksPerClient: Int, span: Span) async -> Run {
    await measure(clients, tasksPerClient: tasksPerClient, span: span) { client in
        if case .success = await client.sendMessage(request) { return true }
        return false
    }
}

let routes = BenchmarkMessages().routes
let chatServer = try ChatServer(routes: routes)
let grpcServer = try SwitchboardGRPC.GRPCServer(router: SwitchboardRuntime.RPCRouter(routes: routes))
// Started only when compared against (not in `--profile` and `--sans-io` runs), so a profiler
// such as valgrind sees our code alone.
let comparesWithPeer = !CommandLine.arguments.contains("--profile") && !CommandLine.arguments.contains("--sans-io")
let peerServer: PeerServer? = comparesWithPeer ? try await PeerServer() : nil
let credentials = ChatClient.Credentials(username: "bench", deviceID: 1, password: "pw")

func webSocketRun(connections: Int, tasks: Int, span: Span) async throws -> Run {
    var open: [ChatConnection<Authenticated>] = []
    for _ in 0..<connections {
        open.append(try await ChatClient.connectAuthenticated(to: chatServer.url, credentials: credentials, options: .init(keepalive: nil)))
    }
    let run = await measure(open.map { MessagesClient(transport: $0) }, tasksPerClient: tasks, span: span)
    for connection in open { await connection.close() }
    return run
}

func grpcRun(connections: Int, tasks: Int, span: Span) async -> Run {
    var options = GRPCClientOptions()
    options.metadata = ["Authorization": credentials.authorization]
    let transports = (0..<connections).map { _ in GRPCClientTransport<Authenticated>(host: "127.0.0.1", port: grpcServer.port, options: options) }
    let run = await measure(transports.map { MessagesClient(transport: $0) }, tasksPerClient: tasks, span: span)
    for transport in transports { transport.close() }
    return run
}

/// Waits (2 s at most) until our servers hold no connection of the last run, then a moment
/// more, so that one contender's teardown (100 connections closing) is not measured as part of
/// the next one's calls. (grpc-swift's clients are awaited until closed in `peerRun`.)
func settle() async {
    for _ in 0..<200 where !chatServer.connectedClients.isEmpty || grpcServer.connectionCount > 0 {
        try? await Task.sleep(for: .milliseconds(10))
    }
    try? await Task.sleep(for: .milliseconds(50))
}

/// The same calls through grpc-swift 2.
func peerRun(connections: Int, tasks: Int, span: Span) async throws -> Run {
    let clients = try (0..<connections).map { _ in try PeerClient(port: peerServer!.port) }
    let run = await measure(clients, tasksPerClient: tasks, span: span) { await $0.send(peerRequest) }
    for client in clients { await client.close() }
    return run
}


// `--sans-io N`: N unary exchanges between two in-memory HTTP/2 connections, no sockets:
// the protocol's own CPU cost per call.
if let flag = CommandLine.arguments.firstIndex(of: "--sans-io"), flag + 1 < CommandLine.arguments.count,
   let calls = Int(CommandLine.arguments[flag + 1]) {
    var client = HTTP2Connection(role: .client), server = HTTP2Connection(role: .server)
    _ = server.receive(client.takeOutput())
    _ = client.receive(server.takeOutput())
    _ = server.receive(client.takeOutput())
    // What GRPCClientTransport sends for this call.
    let headers = [HPACKHeader(":method", "POST"), HPACKHeader(":scheme", "http"), HPACKHeader(":path", "/signal.Messages/SendMessage"),
                   HPACKHeader(":authority", "127.0.0.1:50051"), HPACKHeader("content-type", "application/grpc"), HPACKHeader("te", "trailers"),
                   HPACKHeader("user-agent", "switchboard-grpc"), HPACKHeader("grpc-timeout", "29999m", indexing: .never),
                   HPACKHeader("authorization", "Basic YmVuY2g6cHc=", indexing: .never)]
    let body = [UInt8](repeating: 7, count: 220)
    let start = now()
    for _ in 0..<calls {
        let id = try client.openStream(headers: headers)
        try client.sendData(body, streamID: id, endStream: true)
        for event in server.receive(client.takeOutput()) {
            if case let .data(sid, _, true) = event {
                try server.sendHeaders([HPACKHeader(":status", "200"), HPACKHeader("content-type", "application/grpc")], streamID: sid, endStream: false)
                try server.sendData([0, 0, 0, 0, 2, 8, 1], streamID: sid, endStream: false)
                try server.sendHeaders([HPACKHeader("grpc-status", "0")], streamID: sid, endStream: true)
            }
        }
        _ = client.receive(server.takeOutput())
    }
    print(String(format: "%.2f µs per exchange", Double(now() - start) / Double(calls) / 1000))
    exit(0)
}

// `--profile N [T [C]] [--websocket]`: only N gRPC (or WebSocket) calls from each of T tasks
// (1 by default) on each of C connections (1 by default), for a profiler (perf record) to look at.
if let flag = CommandLine.arguments.firstIndex(of: "--profile"), flag + 1 < CommandLine.arguments.count,
   let calls = Int(CommandLine.arguments[flag + 1]) {
    let tasks = flag + 2 < CommandLine.arguments.count ? Int(CommandLine.arguments[flag + 2]) ?? 1 : 1
    let connections = flag + 3 < CommandLine.arguments.count ? Int(CommandLine.arguments[flag + 3]) ?? 1 : 1
    let run = CommandLine.arguments.contains("--websocket")
        ? try await webSocketRun(connections: connections, tasks: tasks, span: .calls(calls))
        : await grpcRun(connections: connections, tasks: tasks, span: .calls(calls))
    print("median \(microseconds(percentile(run.latencies, 0.5)))")
    await grpcServer.shutdown()
    exit(0)
}

let scenarios: [(name: String, connections: Int, tasks: Int)] = [
    ("1 in flight, 1 connection", 1, 1),
    ("\(inFlight) in flight, 1 connection", 1, inFlight),
    ("\(connectionCount) connections, 1 in flight each", connectionCount, 1),
]
print("| Load | Transport | Requests/s | Median latency | p99 latency | Median latency vs grpc-swift 2 | vs our WebSocket path |")
print("|---|---|---:|---:|---:|---:|---:|")
/// Per load: our gRPC path's median latency over our WebSocket path's, round by round.
var pairedRatios: [(load: String, ratios: [Double])] = []
for scenario in scenarios {
    var webSocketRuns: [Run] = [], grpcRuns: [Run] = [], peerRuns: [Run] = []
    for round in 0..<rounds {
        // Each round one of the six orders of the three: every contender runs in every place,
        // and right after each other one, equally often.
        for contender in orders[round % orders.count] {
            switch contender {
            case 0: webSocketRuns.append(try await webSocketRun(connections: scenario.connections, tasks: scenario.tasks, span: window))
            case 1: grpcRuns.append(await grpcRun(connections: scenario.connections, tasks: scenario.tasks, span: window))
            default: peerRuns.append(try await peerRun(connections: scenario.connections, tasks: scenario.tasks, span: window))
            }
            await settle()
        }
    }
    pairedRatios.append((scenario.name, zip(grpcRuns, webSocketRuns).map { percentile($0.latencies, 0.5) / percentile($1.latencies, 0.5) }))
    let (webSocket, grpc, peer) = (medianRound(webSocketRuns), medianRound(grpcRuns), medianRound(peerRuns))
    let peerMedian = percentile(peer.latencies, 0.5), webSocketMedian = percentile(webSocket.latencies, 0.5)
    for (name, run) in [("grpc-swift 2 (GRPCClient → GRPCServer, NIO, h2c, flush coalescing off)", peer),
                        ("Switchboard gRPC (GRPCClientTransport → GRPCServer, h2c)", grpc),
                        ("Switchboard WebSocket (ChatConnection → ChatServer)", webSocket)] {
        let failures = run.failures > 0 ? " (\(run.failures) failed)" : ""
        let median = percentile(run.latencies, 0.5)
        print("| \(scenario.name) | \(name)\(failures) | \(Int(run.rate)) | \(microseconds(median)) | \(microseconds(percentile(run.latencies, 0.99))) | "
              + String(format: "%.2f×", median / peerMedian) + " | " + String(format: "%.2f×", median / webSocketMedian) + " |")
    }
}
print("")
print("| Load | Our gRPC path vs our WebSocket path, median latency, paired by round: median | lowest | highest |")
print("|---|---:|---:|---:|")
for (load, ratios) in pairedRatios {
    let sorted = ratios.sorted()
    print("| \(load) | " + String(format: "%.2f× | %.2f× | %.2f×", percentile(sorted, 0.5), sorted[0], sorted[sorted.count - 1]) + " |")
}
chatServer.stop()
await grpcServer.shutdown()
