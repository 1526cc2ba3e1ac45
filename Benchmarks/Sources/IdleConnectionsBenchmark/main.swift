import Foundation
import SwitchboardWebSocket
#if canImport(Glibc)
import Glibc
#endif

// Ten thousand idle WebSocket connections to one server: how many threads the server
// process needs, and how fast it still answers a new client. The clients live in a child
// process (this executable with `--hold N PORT`), so each process stays under the
// descriptor limit. Prints Markdown.
//   IdleConnectionsBenchmark [count]        default 10000

func raiseDescriptorLimit() {
    var limit = rlimit()
    #if canImport(Glibc)
    getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
    limit.rlim_cur = limit.rlim_max
    setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
    #endif
}

/// A line of /proc/self/status, such as `Threads` or `VmRSS`.
func status(_ field: String) -> Int? {
    guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
    return text.split(separator: "\n").first { $0.hasPrefix(field + ":") }
        .flatMap { Int($0.dropFirst(field.count + 1).trimmingCharacters(in: .whitespaces).split(separator: " ").first ?? "") }
}

func openDescriptors() -> Int { (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1 }

raiseDescriptorLimit()
let arguments = CommandLine.arguments

if let flag = arguments.firstIndex(of: "--hold"), flag + 2 < arguments.count, let count = Int(arguments[flag + 1]), let port = Int(arguments[flag + 2]) {
    // The client side: open `count` connections, report, and hold them until told to stop.
    var held: [WebSocketConnection] = []
    let url = URL(string: "ws://127.0.0.1:\(port)/")!
    for index in 0..<count {
        do {
            held.append(try await WebSocketClient.connect(to: url, options: .init(connectTimeout: .seconds(30))))
        } catch {
            print("failed after \(index): \(error)")
            exit(1)
        }
    }
    FileHandle.standardOutput.write(Data("ready \(held.count) threads \(status("Threads") ?? -1)\n".utf8))
    _ = FileHandle.standardInput.readDataToEndOfFile()
    for connection in held { connection.abort() }
    exit(0)
}

let count = arguments.count > 1 ? Int(arguments[1]) ?? 10_000 : 10_000
let server = try WebSocketServer(limits: .init(maximumConnections: count + 100, handshakeTimeout: .seconds(60), idleTimeout: nil, maximumConnectionsPerAddress: count + 100)) { connection in
    for await message in connection.messages { try? await connection.send(message) }
}
let threadsBefore = status("Threads") ?? -1
let residentBefore = status("VmRSS") ?? -1

let child = Process()
child.executableURL = URL(fileURLWithPath: arguments[0])
child.arguments = ["--hold", String(count), String(server.port)]
let output = Pipe()
let input = Pipe()
child.standardOutput = output
child.standardInput = input
let started = Date()
try child.run()
let line = String(decoding: output.fileHandleForReading.availableData, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
guard line.hasPrefix("ready") else {
    print("the clients did not connect: \(line)")
    exit(1)
}
let connectSeconds = Date().timeIntervalSince(started)
for _ in 0..<500 where server.connectionCount < count { try await Task.sleep(for: .milliseconds(10)) }

// A new client while the others idle: connect, one echo, close; median of 21.
var samples: [Double] = []
for _ in 0..<21 {
    let begin = ContinuousClock.now
    let client = try await WebSocketClient.connect(to: URL(string: "ws://127.0.0.1:\(server.port)/")!)
    try await client.send(text: "hello")
    var messages = client.messages.makeAsyncIterator()
    _ = await messages.next()
    let elapsed = ContinuousClock.now - begin
    samples.append(Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15)
    await client.close()
}
samples.sort()
let threadsDuring = status("Threads") ?? -1
let residentDuring = status("VmRSS") ?? -1

print("| Measure (\(count) idle connections, server in this process, clients in another) | Value |")
print("|---|---:|")
print("| connections held by the server | \(server.connectionCount - 0) |")
print("| server process threads before / while holding them | \(threadsBefore) / \(threadsDuring) |")
print("| event-loop threads (one per active processor) | \(EventLoopGroup.shared.loops.count) |")
print("| client process threads while holding them | \(line.split(separator: " ").last ?? "?") |")
print("| server descriptors open | \(openDescriptors()) |")
print("| server resident memory before / while holding them | \(residentBefore / 1024) MiB / \(residentDuring / 1024) MiB |")
print("| time to open all of them from the client process | \(String(format: "%.1f", connectSeconds)) s |")
print("| a new client while they idle: connect, one echo, close (median of 21) | \(String(format: "%.2f", samples[samples.count / 2])) ms |")
print("| the same, slowest of 21 | \(String(format: "%.2f", samples.last ?? 0)) ms |")
try input.fileHandleForWriting.close()
child.waitUntilExit()
await server.shutdown(timeout: .seconds(10))
