import BenchmarkSupport
import Foundation
import SignalChat
import SwitchboardChat
import SwitchboardRuntime
import SwitchboardWebSocket

// Typed chat RPC on loopback against a raw TCP echo of the same bytes, same run:
//   one client with 1 and with 64 requests in flight, and 100 connections at once.
// Each typed call encodes a SendMessageRequest, wraps it in the envelope, crosses our
// WebSocket to ChatServer, is routed to a generated handler, and comes back decoded.
// Prints Markdown. `--layers` prints only the per-layer table; `--profile N` makes N pinned
// serial calls and prints their median, for a profiler (perf record) to look at; `--profile-raw N`
// does the same with the raw TCP echo. In the 1-in-flight scenario the typed call is also made
// by a client on a loop of its own (`eventLoops: .dedicated(loopCount: 1)`), caller on the global
// pool as the default client's; `--dedicated-pinned` pins that caller to the connection's loop.

let rounds = 5
/// Each round: every caller calls for 0.1 s unmeasured, then 0.5 s measured.
let window = Span.window(warmUp: 0.1, measured: 0.5)
let inFlight = 64
let connectionCount = 100

let request = SendMessageRequest(
    destination: "a3d2c1f0-aaaa-bbbb-cccc-0123456789ab", timestamp: Date(timeIntervalSince1970: 1_700_000_000),
    messages: [OutgoingMessage(type: .ciphertext, destinationDeviceId: 1, destinationRegistrationId: 4242,
                               content: Data((0..<160).map { UInt8($0 % 251) }))],
    online: false, urgent: true)

struct BenchmarkMessages: MessagesHandler {
    func sendMessage(_ request: SendMessageRequest, context: ServerContext) async throws(Messages.SendMessageError) -> SendMessageResponse {
        SendMessageResponse(needsSync: request.urgent)
    }
}

// MARK: Raw TCP floor: the same bytes a typed call puts on the wire, echoed.

/// The size of one request frame, so the raw echo moves as many bytes.
let frameSize = WebSocketMessage(type: .request, request: WebSocketRequestMessage(
    verb: "PUT", path: "/v1/messages/" + request.destination, body: request.serializedData(),
    headers: ["Accept:application/x-protobuf", "Content-Type:application/x-protobuf"], id: 1)).serializedSize() + 6

func startRawEchoServer() throws -> TCPListener {
    let listener = try TCPListener()
    Thread.detachNewThread {
        while let socket = listener.accept() {
            Thread.detachNewThread {
                while let bytes = try? socket.read(maximum: 65536), !bytes.isEmpty { try? socket.write(bytes) }
                socket.close()
            }
        }
    }
    return listener
}

func readExactly(_ socket: TCPSocket, _ count: Int) throws {
    var received = 0
    while received < count {
        let bytes = try socket.read(maximum: count - received)
        if bytes.isEmpty { throw WebSocketError.io("closed") }
        received += bytes.count
    }
}

/// Serial echoes on each of `connections` sockets, each on its own thread, for `span`.
func rawRun(port: Int, connections: Int, span: Span) throws -> Run {
    let bytes = [UInt8](repeating: 7, count: frameSize)
    let sockets = try (0..<connections).map { _ in try TCPSocket.connect(host: "127.0.0.1", port: port, timeout: .seconds(5)) }
    defer { sockets.forEach { $0.close() } }
    let results = Locked<[Double]>([])
    let group = DispatchGroup()
    let window = span.window()
    let start = now()
    for socket in sockets {
        group.enter()
        Thread.detachNewThread { [window] in
            var samples: [Double] = []
            func call() -> Bool {
                let begin = now()
                guard (try? socket.write(bytes)) != nil, (try? readExactly(socket, bytes.count)) != nil else { return false }
                if begin >= window?.measureFrom ?? 0 { samples.append(Double(now() - begin)) }
                return true
            }
            switch span {
            case let .calls(count):
                for _ in 0..<count { guard call() else { break } }
            case .window:
                window?.waitForStart()
                while now() < window?.stop ?? 0, call() {}
            }
            results.withLock { $0 += samples }
            group.leave()
        }
    }
    group.wait()
    return Run(latencies: results.current, seconds: window?.seconds ?? Double(now() - start) / 1e9)
}

// MARK: Typed chat calls

/// With `pinned`, each caller's task prefers its connection's event loop, so an answer
/// resumes the caller on the thread that read it.
func chatRun(url: URL, connections: Int, tasksPerConnection: Int, span: Span, pinned: Bool,
             loops: EventLoopGroupProvider = .shared) async throws -> Run {
    let credentials = ChatClient.Credentials(username: "bench", deviceID: 1, password: "pw")
    var clients: [MessagesClient] = []
    var open: [ChatConnection<Authenticated>] = []
    for _ in 0..<connections {
        let connection = try await ChatClient.connectAuthenticated(to: url, credentials: credentials, options: .init(keepalive: nil, eventLoops: loops))
        open.append(connection)
        clients.append(MessagesClient(transport: connection))
    }
    // Warm up each connection.
    for client in clients { _ = await client.sendMessage(request) }
    let callers = zip(clients, open).flatMap { client, connection in
        Array(repeating: (caller: client, executor: pinned ? connection.eventLoop as (any TaskExecutor)? : nil), count: tasksPerConnection)
    }
    let run = await closedLoop(callers, span: span) { client in
        if case .success = await client.sendMessage(request) { return true }
        return false
    }
    for connection in open { await connection.close() }
    return run
}


let raw = try startRawEchoServer()
let epollEcho = try EpollEchoServer()
let server = try ChatServer(routes: BenchmarkMessages().routes)

// `--profile N`: only N serial calls from a pinned caller, for a profiler to look at.
// `--profile-raw N`: the same for the raw TCP echo, to compare CPU per round trip.
if let flag = CommandLine.arguments.firstIndex(where: { $0 == "--profile" || $0 == "--profile-raw" }),
   flag + 1 < CommandLine.arguments.count, let calls = Int(CommandLine.arguments[flag + 1]) {
    let dedicated = CommandLine.arguments.contains("--dedicated")
    // `--connections C`: C connections, each with one caller making N calls.
    let profileConnections = CommandLine.arguments.firstIndex(of: "--connections")
        .flatMap { $0 + 1 < CommandLine.arguments.count ? Int(CommandLine.arguments[$0 + 1]) : nil } ?? 1
    let pinned = !CommandLine.arguments.contains("--pool")
    let run = CommandLine.arguments[flag] == "--profile-raw"
        ? try rawRun(port: CommandLine.arguments.contains("--epoll") ? epollEcho.port : raw.port, connections: 1, span: .calls(calls))
        : try await chatRun(url: server.url, connections: profileConnections, tasksPerConnection: 1, span: .calls(calls), pinned: pinned,
                            loops: dedicated ? .dedicated(loopCount: 1) : .shared)
    print("median \(microseconds(percentile(run.latencies, 0.5)))")
    server.stop()
    exit(0)
}

/// The arithmetic mean of `values`.
func mean(_ values: [Double]) -> Double { values.isEmpty ? 0 : values.reduce(0, +) / Double(values.count) }

/// A scenario's raw echo, its typed call (caller on the pool or pinned) on the shared loops, and,
/// for one scenario, the typed call from a client on a loop of its own.
typealias Scenario = (name: String, raw: (_ port: Int) throws -> Run, chat: (_ pinned: Bool) async throws -> Run,
                      dedicated: (() async throws -> Run)?)
/// `--dedicated-pinned`: the dedicated-loop contender's caller is pinned to that loop, not on the pool.
let dedicatedPinned = CommandLine.arguments.contains("--dedicated-pinned")
let dedicatedContender = dedicatedPinned
    ? "the same, client on a loop of its own (`eventLoops: .dedicated(loopCount: 1)`), caller pinned to it"
    : "the same, client on a loop of its own (`eventLoops: .dedicated(loopCount: 1)`), caller on the global pool"
let scenarios: [Scenario] = [
    ("1 in flight, 1 connection", { try rawRun(port: $0, connections: 1, span: window) },
     { try await chatRun(url: server.url, connections: 1, tasksPerConnection: 1, span: window, pinned: $0) },
     { try await chatRun(url: server.url, connections: 1, tasksPerConnection: 1, span: window, pinned: dedicatedPinned,
                         loops: .dedicated(loopCount: 1)) }),
    ("\(inFlight) in flight, 1 connection", { try rawRun(port: $0, connections: inFlight, span: window) },
     { try await chatRun(url: server.url, connections: 1, tasksPerConnection: inFlight, span: window, pinned: $0) }, nil),
    ("\(connectionCount) connections, 1 in flight each", { try rawRun(port: $0, connections: connectionCount, span: window) },
     { try await chatRun(url: server.url, connections: connectionCount, tasksPerConnection: 1, span: window, pinned: $0) }, nil),
]

// `--layers`: only the per-layer table below.
let onlyLayers = CommandLine.arguments.contains("--layers")
if !onlyLayers {
    // The mean as well as the median: with many callers in a closed loop, the mean is the
    // number in flight over the throughput (Little's law), whatever the scheduling, whereas
    // the median rewards serving some callers first (the kernel's wake-ups of 200 echo
    // threads are not fair; an event loop serves its sockets in turn).
    print("| Load | Contender | Requests/s | Median latency | Mean latency | p99 latency | Median vs raw TCP (the faster echo) | Mean vs raw TCP (the faster echo) |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for scenario in scenarios {
        // Alternate the contenders over five rounds so machine load hits them alike, and report
        // each one's median round: the scheduler sometimes puts both raw echo threads on one
        // core (half the round trip), and a best-of rule would compare against that outlier.
        var rawRuns: [Run] = [], epollRuns: [Run] = [], chatRuns: [Run] = [], pinnedRuns: [Run] = [], dedicatedRuns: [Run] = []
        for _ in 0..<rounds {
            rawRuns.append(try scenario.raw(raw.port))
            epollRuns.append(try scenario.raw(epollEcho.port))
            chatRuns.append(try await scenario.chat(false))
            pinnedRuns.append(try await scenario.chat(true))
            if let dedicated = scenario.dedicated { dedicatedRuns.append(try await dedicated()) }
        }
        let (raw, epoll, chat, pinned) = (medianRound(rawRuns), medianRound(epollRuns), medianRound(chatRuns), medianRound(pinnedRuns))
        // The floor is the faster of the two echoes in this run.
        let floor = min(percentile(raw.latencies, 0.5), percentile(epoll.latencies, 0.5))
        let meanFloor = min(mean(raw.latencies), mean(epoll.latencies))
        var rows: [(contender: String, run: Run)] = [
            ("raw TCP echo, \(frameSize)-byte frames, thread per connection", raw),
            ("raw TCP echo, the same frames, one epoll thread", epoll),
            ("typed `sendMessage` over ChatConnection → ChatServer, caller on the global pool", chat),
            ("the same, caller pinned to the connection's event loop", pinned),
        ]
        if !dedicatedRuns.isEmpty { rows.append((dedicatedContender, medianRound(dedicatedRuns))) }
        for (contender, run) in rows {
            print("| \(scenario.name) | \(contender) | \(String(format: "%.0f", run.rate)) | \(microseconds(percentile(run.latencies, 0.5))) | \(microseconds(mean(run.latencies))) | \(microseconds(percentile(run.latencies, 0.99))) | \(String(format: "%.2f×", percentile(run.latencies, 0.5) / floor)) | \(String(format: "%.2f×", mean(run.latencies) / meanFloor)) |")
        }
    }
}
// MARK: CPU per round trip, both sides (client and server share this process).

/// User and system CPU time this process has used, in seconds.
func processCPU() -> (user: Double, system: Double) {
    var usage = rusage()
    #if canImport(Glibc)
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    #else
    getrusage(RUSAGE_SELF, &usage)
    #endif
    func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
    return (seconds(usage.ru_utime), seconds(usage.ru_stime))
}

/// CPU per call of `calls` serial calls made by `body`.
func cpuPerCall(calls: Int, _ body: () async throws -> Run) async throws -> (user: Double, system: Double) {
    let before = processCPU()
    _ = try await body()
    let after = processCPU()
    return ((after.user - before.user) / Double(calls), (after.system - before.system) / Double(calls))
}

if !onlyLayers {
    // Unlike latency, CPU time shows how the host splits the cost: where the kernel's share
    // of a round trip is large, the same user-space work is a smaller part of it.
    let cpuCalls = 5000
    let contenders: [(String, () async throws -> Run)] = [
        ("raw TCP echo (floor)", { try rawRun(port: raw.port, connections: 1, span: .calls(cpuCalls)) }),
        ("typed `sendMessage`, caller on the global pool", {
            try await chatRun(url: server.url, connections: 1, tasksPerConnection: 1, span: .calls(cpuCalls), pinned: false) }),
        ("typed `sendMessage`, caller pinned", {
            try await chatRun(url: server.url, connections: 1, tasksPerConnection: 1, span: .calls(cpuCalls), pinned: true) }),
    ]
    var samples = Array(repeating: [(user: Double, system: Double)](), count: contenders.count)
    for _ in 0..<3 {
        for (index, contender) in contenders.enumerated() { samples[index].append(try await cpuPerCall(calls: cpuCalls, contender.1)) }
    }
    print("")
    print("| 1 in flight, CPU per round trip (both sides, median of 3 rounds) | User | System | Total | Total vs raw TCP |")
    print("|---|---:|---:|---:|---:|")
    let medians = samples.map { rounds in rounds.sorted { $0.user + $0.system < $1.user + $1.system }[rounds.count / 2] }
    let floor = medians[0].user + medians[0].system
    for (index, contender) in contenders.enumerated() {
        let cpu = medians[index]
        print("| \(contender.0) | \(microseconds(cpu.user * 1e9)) | \(microseconds(cpu.system * 1e9)) | \(microseconds((cpu.user + cpu.system) * 1e9)) | \(String(format: "%.2f×", (cpu.user + cpu.system) / floor)) |")
    }
}
server.stop()
raw.close()

// MARK: Where a call's time goes, layer by layer, without sockets.

/// Answers every request with the same response at once, so only the caller's side runs.
struct CannedTransport: DeadlineEnforcingTransport {
    typealias Auth = Authenticated
    let response: RPCResponse
    func send(_ request: RPCRequest) async throws(TransportError) -> RPCResponse { response }
}

/// Nanoseconds per run of `body`, in a detached task (off the main actor), after a warm-up.
func nanoseconds(_ body: @escaping @Sendable () async -> Void) async -> Double {
    await Task.detached { () -> Double in
        for _ in 0..<2000 { await body() }
        let start = now()
        for _ in 0..<20000 { await body() }
        return Double(now() - start) / 20000
    }.value
}

let cannedClient = MessagesClient(transport: CannedTransport(response: RPCResponse(
    status: 200, headers: ["Content-Type": "application/x-protobuf"], body: SendMessageResponse(needsSync: true).serializedData(), message: "OK")))
let router = RPCRouter(routes: BenchmarkMessages().routes)
let routedRequest = ServerRequest(verb: "PUT", path: "/v1/messages/" + request.destination,
                                  headers: ["Accept": "application/x-protobuf", "Content-Type": "application/x-protobuf"],
                                  body: { var body = request; body.destination = ""; return body.serializedData() }())
let layers: [(String, @Sendable () async -> Void)] = [
    ("generated client call over a transport that answers at once (encode, `RPCCall`, decode)", { _ = await cannedClient.sendMessage(request) }),
    ("`RPCRouter.handle`: match, bind, decode, handler, encode", { _ = await router.handle(routedRequest, auth: .account) }),
    ("start an immediate task and await it (the server starts one per request)", { _ = await Task.immediate { 1 }.value }),
]
print("")
print("| Layer (no sockets, one thread) | Time per call |")
print("|---|---:|")
for (name, body) in layers {
    var best = Double.infinity
    for _ in 0..<3 { best = min(best, await nanoseconds(body)) }
    print("| \(name) | \(microseconds(best)) |")
}
