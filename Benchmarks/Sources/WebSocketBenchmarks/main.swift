import BenchmarkSupport
import Foundation
import NIOCore
import NIOPosix
import SwitchboardWebSocket

// WebSocket benchmarks on loopback, every contender in the same run:
//   raw TCP ping-pong against two echoes (the floors: a thread-per-connection echo and a
//   one-thread epoll echo, the event-loop floor), our client against our server, and our
//   client against a swift-nio WebSocket echo server. Ratios are to the faster floor of the
//   run. Prints Markdown.

let messageSize = 400
let serialCount = 3000
let pipelinedCount = 20_000
let inFlight = 64
let payload = Data((0..<messageSize).map { UInt8($0 % 251) })

// MARK: Raw TCP

/// Echo server: one thread per connection, read and write back.
func startRawEchoServer() throws -> (TCPListener, Int) {
    let listener = try TCPListener()
    Thread.detachNewThread {
        while let socket = listener.accept() {
            Thread.detachNewThread {
                while let bytes = try? socket.read(maximum: 65536), !bytes.isEmpty {
                    try? socket.write(bytes)
                }
                socket.close()
            }
        }
    }
    return (listener, listener.port)
}

func readExactly(_ socket: TCPSocket, _ count: Int) throws {
    var received = 0
    while received < count {
        let bytes = try socket.read(maximum: count - received)
        if bytes.isEmpty { throw WebSocketError.io("closed") }
        received += bytes.count
    }
}

func rawSerial(port: Int) throws -> [Double] {
    let socket = try TCPSocket.connect(host: "127.0.0.1", port: port, timeout: .seconds(5))
    defer { socket.close() }
    let bytes = Array(payload)
    var samples: [Double] = []
    for index in 0..<(serialCount + 200) {
        let start = now()
        try socket.write(bytes)
        try readExactly(socket, messageSize)
        if index >= 200 { samples.append(Double(now() - start)) }
    }
    return samples
}

func rawPipelined(port: Int) throws -> Double {
    let socket = try TCPSocket.connect(host: "127.0.0.1", port: port, timeout: .seconds(5))
    defer { socket.close() }
    let bytes = Array(payload)
    let start = now()
    // A writer thread keeps `inFlight` messages outstanding; this thread reads.
    let window = DispatchSemaphore(value: inFlight)
    Thread.detachNewThread {
        for _ in 0..<pipelinedCount {
            window.wait()
            try? socket.write(bytes)
        }
    }
    var received = 0
    while received < pipelinedCount * messageSize {
        let chunk = try socket.read(maximum: 65536)
        if chunk.isEmpty { break }
        let before = received / messageSize
        received += chunk.count
        for _ in before..<(received / messageSize) { window.signal() }
    }
    return Double(pipelinedCount) / (Double(now() - start) / 1e9)
}

// MARK: WebSocket

/// Runs `body` on the connection's event loop when `pinned`, so each answer resumes it on the
/// thread that read it; otherwise on the global pool.
func onLoop<T: Sendable>(of connection: WebSocketConnection, _ pinned: Bool, _ body: () async throws -> T) async throws -> T {
    try await withTaskExecutorPreference(pinned ? connection.eventLoop : nil, operation: body)
}

func wsSerial(port: Int, pinned: Bool = false) async throws -> [Double] {
    let connection = try await WebSocketClient.connect(to: URL(string: "ws://127.0.0.1:\(port)/")!)
    return try await onLoop(of: connection, pinned) { try await wsSerial(connection) }
}

func wsSerial(_ connection: WebSocketConnection) async throws -> [Double] {
    var messages = connection.messages.makeAsyncIterator()
    var samples: [Double] = []
    for index in 0..<(serialCount + 200) {
        let start = now()
        try await connection.send(binary: payload)
        _ = await messages.next()
        if index >= 200 { samples.append(Double(now() - start)) }
    }
    await connection.close()
    return samples
}

func wsPipelined(port: Int, pinned: Bool = false) async throws -> Double {
    let connection = try await WebSocketClient.connect(to: URL(string: "ws://127.0.0.1:\(port)/")!)
    return try await onLoop(of: connection, pinned) { try await wsPipelined(connection) }
}

func wsPipelined(_ connection: WebSocketConnection) async throws -> Double {
    var messages = connection.messages.makeAsyncIterator()
    let start = now()
    var sent = 0
    for _ in 0..<inFlight {
        try await connection.send(binary: payload)
        sent += 1
    }
    var received = 0
    while received < pipelinedCount {
        guard await messages.next() != nil else { break }
        received += 1
        if sent < pipelinedCount {
            try await connection.send(binary: payload)
            sent += 1
        }
    }
    let rate = Double(received) / (Double(now() - start) / 1e9)
    await connection.close()
    return rate
}


let (rawListener, rawPort) = try startRawEchoServer()
// The event-loop floor: one epoll thread echoing every connection (the one ChatBenchmarks measures).
let epollEcho = try EpollEchoServer()
// Our server echoes on the socket's reader thread (direct delivery, writes that do not wait),
// as the swift-nio peer echoes on its event loop: neither hops to a task per message.
let ourServer = try WebSocketServer(options: .init(deliversMessagesDirectly: true)) { connection in
    connection.deliverMessages { message in
        switch message {
        case let .binary(data): try? connection.sendWithoutWaiting(binary: data)
        case .text: break
        }
    }
    for await _ in connection.messages {}
    await connection.close()
}
let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
let (nioChannel, nioPort) = try NIOEchoServer.start(group: group)

// Alternate the contenders over seven rounds so machine load hits them alike, and report each
// one's median round (latency) and median rate: on this shared machine a best-of rule would
// compare against whichever contender caught a quiet moment.
let rounds = 7
var rawRuns: [[Double]] = [], epollRuns: [[Double]] = [], oursRuns: [[Double]] = [], pinnedRuns: [[Double]] = [], nioRuns: [[Double]] = [], nioPinnedRuns: [[Double]] = []
var rawRates: [Double] = [], epollRates: [Double] = [], oursRates: [Double] = [], pinnedRates: [Double] = [], nioRates: [Double] = [], nioPinnedRates: [Double] = []
for _ in 0..<rounds {
    rawRuns.append(try rawSerial(port: rawPort))
    epollRuns.append(try rawSerial(port: epollEcho.port))
    oursRuns.append(try await wsSerial(port: ourServer.port))
    pinnedRuns.append(try await wsSerial(port: ourServer.port, pinned: true))
    nioRuns.append(try await wsSerial(port: nioPort))
    nioPinnedRuns.append(try await wsSerial(port: nioPort, pinned: true))
    rawRates.append(try rawPipelined(port: rawPort))
    epollRates.append(try rawPipelined(port: epollEcho.port))
    oursRates.append(try await wsPipelined(port: ourServer.port))
    pinnedRates.append(try await wsPipelined(port: ourServer.port, pinned: true))
    nioRates.append(try await wsPipelined(port: nioPort))
    nioPinnedRates.append(try await wsPipelined(port: nioPort, pinned: true))
}
func medianRound(_ runs: [[Double]]) -> [Double] { runs.sorted { percentile($0, 0.5) < percentile($1, 0.5) }[runs.count / 2] }
func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
let (rawRTT, epollRTT, oursRTT, pinnedRTT, nioRTT, nioPinnedRTT) = (medianRound(rawRuns), medianRound(epollRuns), medianRound(oursRuns), medianRound(pinnedRuns), medianRound(nioRuns), medianRound(nioPinnedRuns))
let (rawRate, epollRate, oursRate, pinnedRate, nioRate, nioPinnedRate) = (median(rawRates), median(epollRates), median(oursRates), median(pinnedRates), median(nioRates), median(nioPinnedRates))
// The floor is the faster of the two echoes in this run, for latency and for throughput apart.
let floorRTT = min(percentile(rawRTT, 0.5), percentile(epollRTT, 0.5))
let floorRate = max(rawRate, epollRate)

print("| Path (400-byte binary messages, loopback) | Median RTT | p99 RTT | Median vs raw TCP (the faster echo) | Throughput, \(inFlight) in flight | Throughput vs raw TCP (the faster echo) |")
print("|---|---:|---:|---:|---:|---:|")
let rows: [(name: String, samples: [Double], rate: Double)] = [
    ("Raw TCP echo, thread per connection (floor)", rawRTT, rawRate),
    ("Raw TCP echo, one epoll thread (floor)", epollRTT, epollRate),
    ("Switchboard client → Switchboard server, client task on the global pool", oursRTT, oursRate),
    ("Switchboard client → Switchboard server, client task pinned to the connection's event loop", pinnedRTT, pinnedRate),
    ("Switchboard client → swift-nio WebSocket server, client task on the global pool", nioRTT, nioRate),
    ("Switchboard client → swift-nio WebSocket server, client task pinned", nioPinnedRTT, nioPinnedRate),
]
for (name, samples, rate) in rows {
    print("| \(name) | \(microseconds(percentile(samples, 0.5))) | \(microseconds(percentile(samples, 0.99))) | \(String(format: "%.2f×", percentile(samples, 0.5) / floorRTT)) | \(String(format: "%.0f msg/s", rate)) | \(String(format: "%.2f×", rate / floorRate)) |")
}
print("")
// The same client against each server, twice: a client on the global pool wakes a pool
// thread per answer and bounds both servers alike; a pinned client leaves the server as the
// bottleneck.
print("Our server against the swift-nio server, same client on the global pool: throughput \(String(format: "%.2f×", oursRate / nioRate)), median RTT \(String(format: "%.2f×", percentile(oursRTT, 0.5) / percentile(nioRTT, 0.5))).")
print("Our server against the swift-nio server, same pinned client: throughput \(String(format: "%.2f×", pinnedRate / nioPinnedRate)), median RTT \(String(format: "%.2f×", percentile(pinnedRTT, 0.5) / percentile(nioPinnedRTT, 0.5))).")

ourServer.stop()
rawListener.close()
try? await nioChannel.close().get()
try? await group.shutdownGracefully()
