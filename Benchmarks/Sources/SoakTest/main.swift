import Foundation
import SignalChat
import SwitchboardChat
import SwitchboardRuntime
#if canImport(Glibc)
import Glibc
#endif

// A soak test, not a benchmark: N chat connections (default 1,000) for M minutes (default 10),
// requests from every client and pushes from the server to every client, both directions at
// once. Every minute each process reports its descriptors, threads and resident memory.
// The clients live in a child process (this executable with `--clients N PORT SECONDS`).
//
//   SoakTest [connections] [minutes] [--descriptor-growth N] [--thread-growth N]
//            [--memory-growth-percent P]
//
// The run fails (exit status 1, each reason on a `FAIL:` line) when:
// - the clients report no tally, or one that does not parse (they crashed, or stopped early);
// - the client process exits other than with status 0;
// - a request went unanswered or failed, or the clients saw a different number of answers
//   than the server served, or nothing was sent or pushed at all;
// - a push was not acknowledged (pushed != acknowledged), or the clients handled a different
//   number of pushes than the server saw acknowledged;
// - from the first minute's sample (after warm-up, all connections open) to the last one
//   (taken once the pushes are all answered, with the connections still open), a process's
//   descriptors grew by more than `--descriptor-growth` (default 16), its threads by more
//   than `--thread-growth` (default 4), or its resident memory by more than
//   `--memory-growth-percent` of the first sample (default 20 %, and never less than 8 MiB,
//   so allocator noise on a small process does not count).
// A run too short to have a first-minute sample skips the last check, and says so.
// A usage error exits with status 2.
//
// The end is a handshake, so nothing is in flight when the counts are compared: the clients
// say `client idle` once their requests are all answered; the server stops pushing, waits for
// every push's answer (or its 30 s timeout), takes its last sample and writes `tally` to the
// clients' standard input; they answer `client done` with their last sample and counts, close
// their connections and exit.

struct Totals: Sendable { var sent = 0, answered = 0, failed = 0 }

final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [String: Int] = [:]
    func add(_ key: String, _ amount: Int = 1) { lock.withLock { values[key, default: 0] += amount } }
    subscript(key: String) -> Int { lock.withLock { values[key, default: 0] } }
    /// The counts whose keys start with `prefix`, by key.
    func counts(withPrefix prefix: String) -> [(key: String, value: Int)] {
        lock.withLock { values.filter { $0.key.hasPrefix(prefix) }.sorted { $0.key < $1.key } }
    }
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

/// One process's resources at one moment; -1 where /proc cannot say.
struct Sample: Sendable, CustomStringConvertible {
    var descriptors: Int
    var threads: Int
    var residentMiB: Int

    static func now() -> Sample {
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
        let resident = status("VmRSS")
        return Sample(descriptors: descriptors, threads: status("Threads"), residentMiB: resident < 0 ? -1 : resident / 1024)
    }

    /// Reads the three columns `description` writes: "1014", "7", "50 MiB".
    static func parse(_ columns: ArraySlice<String>) -> Sample? {
        guard columns.count == 3 else { return nil }
        let values = Array(columns)
        guard let descriptors = Int(values[0].trimmingCharacters(in: .whitespaces)),
              let threads = Int(values[1].trimmingCharacters(in: .whitespaces)),
              values[2].hasSuffix(" MiB"), let resident = Int(values[2].dropLast(" MiB".count).trimmingCharacters(in: .whitespaces))
        else { return nil }
        return Sample(descriptors: descriptors, threads: threads, residentMiB: resident)
    }

    var isKnown: Bool { descriptors >= 0 && threads >= 0 && residentMiB >= 0 }

    var description: String { "\(descriptors) | \(threads) | \(residentMiB) MiB" }
}

/// What the clients counted, from their `client done` line.
struct Tally: Sendable, CustomStringConvertible {
    var sent: Int
    var answered: Int
    var failed: Int
    var pushes: Int

    /// Reads "sent X answered Y failed Z pushes W", all four, nothing else.
    static func parse(_ text: String) -> Tally? {
        let words = text.split(separator: " ").map(String.init)
        guard words.count == 8 else { return nil }
        var values: [String: Int] = [:]
        for position in stride(from: 0, to: 8, by: 2) {
            guard let value = Int(words[position + 1]), value >= 0 else { return nil }
            values[words[position]] = value
        }
        guard let sent = values["sent"], let answered = values["answered"], let failed = values["failed"], let pushes = values["pushes"] else { return nil }
        return Tally(sent: sent, answered: answered, failed: failed, pushes: pushes)
    }

    var description: String { "sent \(sent) answered \(answered) failed \(failed) pushes \(pushes)" }
}

/// The server side's command line.
struct Options {
    var connections = 1000
    var minutes = 10
    /// How many more descriptors the last sample may show than the first minute's.
    var descriptorGrowth = 16
    /// How many more threads the last sample may show than the first minute's.
    var threadGrowth = 4
    /// How much more resident memory the last sample may show than the first minute's, in
    /// percent of it; never less than `memoryGrowthFloorMiB`.
    var memoryGrowthPercent = 20
    static let memoryGrowthFloorMiB = 8

    static let usage = "usage: SoakTest [connections] [minutes] [--descriptor-growth N] [--thread-growth N] [--memory-growth-percent P]"

    struct UsageError: Error { var message: String }

    static func parse(_ arguments: [String]) throws(UsageError) -> Options {
        var options = Options()
        var positional: [Int] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if argument.hasPrefix("--") {
                guard index + 1 < arguments.count, let value = Int(arguments[index + 1]), value >= 0 else {
                    throw UsageError(message: "\(argument) needs a number, 0 or more")
                }
                switch argument {
                case "--descriptor-growth": options.descriptorGrowth = value
                case "--thread-growth": options.threadGrowth = value
                case "--memory-growth-percent": options.memoryGrowthPercent = value
                default: throw UsageError(message: "unknown option \(argument)")
                }
                index += 2
            } else {
                guard let value = Int(argument), value > 0 else { throw UsageError(message: "expected a positive number, got '\(argument)'") }
                positional.append(value)
                index += 1
            }
        }
        guard positional.count <= 2 else { throw UsageError(message: "at most two numbers: connections and minutes") }
        if positional.count > 0 { options.connections = positional[0] }
        if positional.count > 1 { options.minutes = positional[1] }
        return options
    }

    /// Why `last` grew too much from `first`, for a process called `name`; empty when it did not.
    func growthProblems(_ name: String, first: Sample, last: Sample) -> [String] {
        var problems: [String] = []
        if last.descriptors - first.descriptors > descriptorGrowth {
            problems.append("\(name) descriptors grew from \(first.descriptors) to \(last.descriptors) (more than \(descriptorGrowth))")
        }
        if last.threads - first.threads > threadGrowth {
            problems.append("\(name) threads grew from \(first.threads) to \(last.threads) (more than \(threadGrowth))")
        }
        let allowed = max(Self.memoryGrowthFloorMiB, first.residentMiB * memoryGrowthPercent / 100)
        if last.residentMiB - first.residentMiB > allowed {
            problems.append("\(name) resident memory grew from \(first.residentMiB) MiB to \(last.residentMiB) MiB (more than \(allowed) MiB)")
        }
        return problems
    }
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
    say("client ready | \(Sample.now())")
    let end = ContinuousClock.now + .seconds(seconds)
    let reporter = Task {
        while true {
            do { try await Task.sleep(for: .seconds(60)) } catch { break }
            say("client | \(Sample.now()) | sent \(counter["sent"]) answered \(counter["answered"]) failed \(counter["failed"]) pushes \(counter["pushes handled"])")
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
    await reporter.value
    // Every request is answered; the server now stops pushing and waits for every push's
    // answer before it asks for the tally (or it ended: standard input closes).
    say("client idle | sent \(counter["sent"]) answered \(counter["answered"]) failed \(counter["failed"])")
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        Thread.detachNewThread {
            _ = readLine()
            continuation.resume()
        }
    }
    say("client done | \(Sample.now()) | sent \(counter["sent"]) answered \(counter["answered"]) failed \(counter["failed"]) pushes \(counter["pushes handled"])")
    for connection in connections { await connection.close() }
    exit(0)
}

/// The server side: serves, pushes, reports, and tallies; 0 when nothing was lost and
/// nothing grew, 1 when something did, 2 for a usage error.
func serve() async throws -> Int32 {
    let options: Options
    do throws(Options.UsageError) {
        options = try Options.parse(Array(arguments.dropFirst()))
    } catch {
        FileHandle.standardError.write(Data("SoakTest: \(error.message)\n\(Options.usage)\n".utf8))
        return 2
    }
    // A child that died must not take this process with it when the tally request is written.
    signal(SIGPIPE, SIG_IGN)
    let count = options.connections
    let minutes = options.minutes
    let counter = Counter()
    var failures: [String] = []
    let server = try ChatServer(routes: SoakMessages(counter: counter).routes,
                                limits: .init(maximumConnections: count + 100, handshakeTimeout: .seconds(60), idleTimeout: nil, maximumConnectionsPerAddress: count + 100))
    say("| When | Process | Descriptors | Threads | Resident | Traffic so far |")
    say("|---|---|---:|---:|---:|---|")
    say("| start | server | \(Sample.now()) | |")
    let child = Process()
    child.executableURL = URL(fileURLWithPath: arguments[0])
    child.arguments = ["--clients", String(count), String(server.port), String(minutes * 60)]
    let output = Pipe()
    let input = Pipe()
    child.standardOutput = output
    child.standardInput = input
    try child.run()
    // The clients must be done well within the run plus five minutes (connecting, the last
    // pushes' answers, the tally); past that they are stopped, which fails the run.
    let childID = child.processIdentifier
    let watchdog = Task {
        do { try await Task.sleep(for: .seconds(minutes * 60 + 300)) } catch { return }
        say("The clients did not finish in time: stopping them.")
        kill(childID, SIGTERM)
    }
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
        watchdog.cancel()
        say("FAIL: the clients did not start.")
        child.terminate()
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
                counter.add("pushes outstanding")
                Task {
                    do throws(ChatServer.PushError) {
                        let response = try await client.sendPush(push, timeout: .seconds(30))
                        counter.add(response.status == 200 ? "acknowledged" : "push answered \(response.status)")
                    } catch {
                        counter.add("push failed: \(error)")
                    }
                    counter.add("pushes outstanding", -1)
                }
            }
            try? await Task.sleep(for: .seconds(5))
        }
    }
    let serverSamples = Locked<[Sample]>([])
    let reporter = Task {
        var minute = 0
        while true {
            do { try await Task.sleep(for: .seconds(60)) } catch { break }
            minute += 1
            let sample = Sample.now()
            serverSamples.withLock { $0.append(sample) }
            say("| minute \(minute) | server | \(sample) | served \(counter["served"]), pushed \(counter["pushed"]), acknowledged \(counter["acknowledged"]) |")
        }
    }
    var clientSamples: [Sample] = []
    var idle = false
    while let line = await clientLines.next() {
        if line.hasPrefix("client idle") {
            idle = true
            break
        }
        guard line.hasPrefix("client |") else { continue }
        say("| | client | \(line.dropFirst("client | ".count)) |")
        if let sample = Sample.parse(line.components(separatedBy: " | ").dropFirst().prefix(3)) { clientSamples.append(sample) }
    }
    pusher.cancel()
    await pusher.value
    // Every push started has its answer, or its timeout, before anything is counted.
    let drainDeadline = ContinuousClock.now + .seconds(45)
    while counter["pushes outstanding"] > 0 && ContinuousClock.now < drainDeadline { try? await Task.sleep(for: .milliseconds(100)) }
    if counter["pushes outstanding"] > 0 { failures.append("\(counter["pushes outstanding"]) pushes still unanswered 45 s after the last was sent") }
    reporter.cancel()
    await reporter.value
    let serverLast = Sample.now()

    var tally: Tally?
    var clientLast: Sample?
    var doneLine = ""
    if idle {
        // Nothing is in flight now: ask the clients for their counts.
        try? input.fileHandleForWriting.write(contentsOf: Data("tally\n".utf8))
        while let line = await clientLines.next() {
            guard line.hasPrefix("client done") else { continue }
            doneLine = line
            let columns = line.components(separatedBy: " | ")
            if columns.count == 5 {
                clientLast = Sample.parse(columns.dropFirst().prefix(3))
                tally = Tally.parse(columns[4])
            }
            break
        }
    } else {
        failures.append("the clients' output ended before their requests did (they crashed, or were stopped)")
    }
    watchdog.cancel()
    try? input.fileHandleForWriting.close()
    // The clients close their connections and exit; a minute at most.
    let exitDeadline = ContinuousClock.now + .seconds(60)
    while child.isRunning && ContinuousClock.now < exitDeadline { try? await Task.sleep(for: .milliseconds(100)) }
    if child.isRunning {
        failures.append("the client process did not exit within a minute of its tally")
        child.terminate()
    }
    child.waitUntilExit()
    if child.terminationReason == .uncaughtSignal {
        failures.append("the client process was killed by signal \(child.terminationStatus)")
    } else if child.terminationStatus != 0 {
        failures.append("the client process exited with status \(child.terminationStatus)")
    }
    await server.shutdown(timeout: .seconds(5))

    let served = counter["served"], pushed = counter["pushed"], acknowledged = counter["acknowledged"]
    say("")
    say("Server: served \(served), pushed \(pushed), acknowledged \(acknowledged). Clients: \(tally.map(\.description) ?? "no tally").")
    if let tally {
        if tally.sent == 0 { failures.append("the clients sent no request") }
        if tally.answered != tally.sent || tally.failed != 0 {
            failures.append("requests lost: the clients sent \(tally.sent), \(tally.answered) answered, \(tally.failed) failed")
        }
        if tally.answered != served { failures.append("the clients saw \(tally.answered) answers, the server served \(served)") }
        if tally.pushes != acknowledged {
            failures.append("the clients handled \(tally.pushes) pushes, the server saw \(acknowledged) acknowledged")
        }
    } else if idle {
        failures.append("no tally from the clients, or one that does not parse: '\(doneLine)'")
    }
    if pushed == 0 { failures.append("the server pushed nothing") }
    if pushed != acknowledged {
        let reasons = counter.counts(withPrefix: "push ").map { "\($0.key) × \($0.value)" }.joined(separator: ", ")
        failures.append("pushes lost: pushed \(pushed), acknowledged \(acknowledged)\(reasons.isEmpty ? "" : " (\(reasons))")")
    }

    // Flat from the first minute (warmed up, every connection open) to the last sample.
    let tolerance = "tolerance +\(options.descriptorGrowth) descriptors, +\(options.threadGrowth) threads, "
        + "+\(options.memoryGrowthPercent) % memory (at least \(Options.memoryGrowthFloorMiB) MiB)"
    let serverFirst = serverSamples.withLock { $0.first }
    let compared: [(name: String, first: Sample?, last: Sample?)] = [("server", serverFirst, serverLast), ("client", clientSamples.first, clientLast)]
    for (name, firstSample, lastSample) in compared {
        guard let first = firstSample, let last = lastSample, first.isKnown, last.isKnown else {
            say("Not checked for growth: no \(name) sample from the first minute and the end (a run shorter than a minute, or no /proc).")
            continue
        }
        say("\(name.capitalized): descriptors \(first.descriptors) → \(last.descriptors), threads \(first.threads) → \(last.threads), "
            + "resident \(first.residentMiB) → \(last.residentMiB) MiB from the first minute to the end (\(tolerance)).")
        failures += options.growthProblems(name, first: first, last: last)
    }

    if failures.isEmpty {
        say("PASS: every request answered, every push acknowledged and handled, the clients exited 0, and descriptors, threads and memory stayed flat.")
        return 0
    }
    for failure in failures { say("FAIL: \(failure)") }
    return 1
}

exit(try await serve())
