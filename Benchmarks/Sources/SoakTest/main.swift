import Foundation
import SignalChat
import SwitchboardChat
import SwitchboardRuntime
#if canImport(Glibc)
import Glibc
#endif

// A soak test, not a benchmark: N chat connections (default 1,000) for M minutes (default 10),
// requests from every client and pushes from the server to every client, both directions at
// once. Every minute each process reports its descriptors, threads and resident memory; at
// the end, every request must have its response and every push its acknowledgement.
// The clients live in a child process (this executable with `--clients N PORT SECONDS`).
//   SoakTest [connections] [minutes]

struct Totals: Sendable { var sent = 0, answered = 0, failed = 0 }

final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [String: Int] = [:]
    func add(_ key: String, _ amount: Int = 1) { lock.withLock { values[key, default: 0] += amount } }
    subscript(key: String) -> Int { lock.withLock { values[key, default: 0] } }
}

func raiseDescriptorLimit() {
    var limit = rlimit()
    #if canImport(Glibc)
    getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
    limit.rlim_cur = limit.rlim_max
    setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
    #endif
}

func status(_ field: String) -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return -1 }
    return text.split(separator: "\n").first { $0.hasPrefix(field + ":") }
        .flatMap { Int($0.dropFirst(field.count + 1).trimmingCharacters(in: .whitespaces).split(separator: " ").first ?? "") } ?? -1
}

func resources() -> String {
    let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
    return "\(descriptors) | \(status("Threads")) | \(status("VmRSS") / 1024) MiB"
}

let request = SendMessageRequest(destination: "soak", messages: [OutgoingMessage(type: .ciphertext, content: Data(repeating: 7, count: 160))])

struct SoakMessages: MessagesHandler {
    let counter: Counter
    func sendMessage(_ request: SendMessageRequest, context: ServerContext) async throws(Messages.SendMessageError) -> SendMessageResponse {
        counter.add("served")
        return SendMessageResponse(needsSync: false)
    }
}

final class Inbox: MessagesEventListener, @unchecked Sendable {
    let counter: Counter
    init(counter: Counter) { self.counter = counter }
    func incomingMessage(_ payload: Envelope, context: EventContext) async throws { counter.add("pushes handled") }
    func queueEmpty(context: EventContext) async throws {}
}

/// A line to the parent at once: `print` to a pipe waits for its buffer to fill.
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

raiseDescriptorLimit()
let arguments = CommandLine.arguments

if let flag = arguments.firstIndex(of: "--clients"), flag + 3 < arguments.count,
   let count = Int(arguments[flag + 1]), let port = Int(arguments[flag + 2]), let seconds = Int(arguments[flag + 3]) {
    // The clients: connect them all, then each calls about once a second until the end.
    let counter = Counter()
    let url = URL(string: "ws://127.0.0.1:\(port)/v1/websocket/")!
    var connections: [ChatConnection<Authenticated>] = []
    for index in 0..<count {
        let inbox = Inbox(counter: counter)
        connections.append(try await ChatClient.connectAuthenticated(
            to: url, credentials: .init(username: "soak-\(index)", deviceID: 1, password: "pw"),
            options: .init(keepalive: KeepalivePolicy(interval: .seconds(30), timeout: .seconds(20)))
        ) { push in await Messages.dispatch(push, to: inbox) })
    }
    say("client ready | \(resources())")
    let end = ContinuousClock.now + .seconds(seconds)
    let reporter = Task {
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(60))
            say("client | \(resources()) | sent \(counter["sent"]) answered \(counter["answered"]) failed \(counter["failed"]) pushes \(counter["pushes handled"])")
        }
    }
    await withTaskGroup(of: Void.self) { group in
        for connection in connections {
            group.addTask {
                let client = MessagesClient(transport: connection)
                try? await Task.sleep(for: .milliseconds(Int64.random(in: 0..<1000)))
                while ContinuousClock.now < end {
                    counter.add("sent")
                    if case .success = await client.sendMessage(request) { counter.add("answered") } else { counter.add("failed") }
                    try? await Task.sleep(for: .milliseconds(Int64.random(in: 800..<1200)))
                }
            }
        }
    }
    reporter.cancel()
    // Pushes still in flight land before the tally.
    try? await Task.sleep(for: .seconds(3))
    say("client done | sent \(counter["sent"]) answered \(counter["answered"]) failed \(counter["failed"]) pushes \(counter["pushes handled"])")
    for connection in connections { await connection.close() }
    exit(0)
}

/// The server side: serves, pushes, reports, and tallies; 0 when nothing was lost.
func serve() async throws -> Int32 {
    let count = arguments.count > 1 ? Int(arguments[1]) ?? 1000 : 1000
    let minutes = arguments.count > 2 ? Int(arguments[2]) ?? 10 : 10
    let counter = Counter()
    let server = try ChatServer(routes: SoakMessages(counter: counter).routes,
                                limits: .init(maximumConnections: count + 100, handshakeTimeout: .seconds(60), idleTimeout: nil, maximumConnectionsPerAddress: count + 100))
    say("| When | Process | Descriptors | Threads | Resident | Traffic so far |")
    say("|---|---|---:|---:|---:|---|")
    say("| start | server | \(resources()) | |")
    let child = Process()
    child.executableURL = URL(fileURLWithPath: arguments[0])
    child.arguments = ["--clients", String(count), String(server.port), String(minutes * 60)]
    let output = Pipe()
    child.standardOutput = output
    try child.run()
    let lines = AsyncStream<String> { continuation in
        Thread.detachNewThread {
            var pending = Data()
            while true {
                let chunk = output.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                pending += chunk
                while let newline = pending.firstIndex(of: 10) {
                    continuation.yield(String(decoding: pending[..<newline], as: UTF8.self))
                    pending = pending[(newline + 1)...]
                }
            }
            continuation.finish()
        }
    }
    var clientLines = lines.makeAsyncIterator()
    guard let ready = await clientLines.next(), ready.hasPrefix("client ready") else {
        say("the clients did not start")
        return 1
    }
    say("| connected | client | \(ready.dropFirst("client ready | ".count)) | \(server.connectedClients.count) clients on the server |")
    // The server pushes to every client every five seconds, each push awaiting its answer.
    let pusher = Task {
        var id = 0
        while !Task.isCancelled {
            for client in server.connectedClients {
                id += 1
                let push = ServerRequest(verb: "PUT", path: "/api/v1/message", body: Envelope(serverGuid: "g\(id)").serializedData())
                counter.add("pushed")
                Task {
                    if let response = await client.push(push, timeout: .seconds(30)), response.status == 200 { counter.add("acknowledged") }
                }
            }
            try? await Task.sleep(for: .seconds(5))
        }
    }
    let reporter = Task {
        var minute = 0
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(60))
            minute += 1
            say("| minute \(minute) | server | \(resources()) | served \(counter["served"]), pushed \(counter["pushed"]), acknowledged \(counter["acknowledged"]) |")
        }
    }
    var last = ""
    while let line = await clientLines.next() {
        if line.hasPrefix("client done") {
            last = line
            break
        }
        if line.hasPrefix("client |") { say("| | client | \(line.dropFirst("client | ".count)) |") }
    }
    pusher.cancel()
    reporter.cancel()
    try await Task.sleep(for: .seconds(2))
    say("")
    say("Server: served \(counter["served"]), pushed \(counter["pushed"]), acknowledged \(counter["acknowledged"]). Clients: \(last.dropFirst("client done | ".count)).")
    let numbers = last.split(separator: " ").compactMap { Int($0) }
    let lost = numbers.count >= 4 && (numbers[0] != numbers[1] || numbers[2] != 0 || numbers[1] != counter["served"] || numbers[3] < counter["acknowledged"])
    say(lost ? "LOST: a request or a push went unanswered." : "Nothing lost: every request answered, every acknowledged push handled.")
    child.waitUntilExit()
    server.stop()
    return lost ? 1 : 0
}

exit(try await serve())
