import Foundation
import PeerSupport
@testable import SwitchboardHTTP2
import SwitchboardIO
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Hears one stream and lets a test wait for its end.
final class CollectingStream: HTTP2StreamDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private(set) var headerBlocks: [[HPACKHeader]] = []
    private(set) var body: [UInt8] = []
    private let end = FirstValue<HTTP2StreamClosure>()

    func streamReceived(headers: [HPACKHeader], endStream: Bool) { lock.withLock { headerBlocks.append(headers) } }
    func streamReceived(data: ArraySlice<UInt8>, endStream: Bool) { lock.withLock { body += data } }
    func streamClosed(_ closure: HTTP2StreamClosure) { end.offer(closure) }

    var ended: HTTP2StreamClosure {
        get async { await end.value }
    }

    var snapshot: (headers: [[HPACKHeader]], body: [UInt8]) { lock.withLock { (headerBlocks, body) } }
}

/// Answers every request with its body reversed and an `x-length` trailer, as the Python peer does.
final class ReversingAcceptor: HTTP2StreamAcceptor, @unchecked Sendable {
    final class Stream: HTTP2StreamDelegate, @unchecked Sendable {
        let id: UInt32
        let connection: HTTP2ChannelDriver
        var body: [UInt8] = []
        init(id: UInt32, connection: HTTP2ChannelDriver) {
            self.id = id
            self.connection = connection
        }

        func streamReceived(headers: [HPACKHeader], endStream: Bool) { if endStream { answer() } }
        func streamReceived(data: ArraySlice<UInt8>, endStream: Bool) {
            body += data
            if endStream { answer() }
        }
        func streamClosed(_ closure: HTTP2StreamClosure) {}

        private func answer() {
            connection.sendHeaders([HPACKHeader(":status", "200"), HPACKHeader("content-type", "application/octet-stream")], streamID: id, endStream: false)
            connection.sendData(body.reversed(), streamID: id, endStream: false)
            connection.sendHeaders([HPACKHeader("x-length", "\(body.count)")], streamID: id, endStream: true)
        }
    }

    func accept(streamID: UInt32, headers: [HPACKHeader], endStream: Bool, on connection: HTTP2ChannelDriver) -> any HTTP2StreamDelegate {
        let stream = Stream(id: streamID, connection: connection)
        if endStream { stream.streamReceived(data: [], endStream: true) }
        return stream
    }
}

/// HTTP/2 over real sockets on the event loops: our client and server against each other
/// and against Python's `h2`, both directions, with flow control doing real work.
@Suite(.timeLimit(.minutes(4)))
struct HTTP2SocketTests {
    static func request(_ path: String) -> [HPACKHeader] {
        [HPACKHeader(":method", "POST"), HPACKHeader(":scheme", "http"), HPACKHeader(":path", path),
         HPACKHeader(":authority", "127.0.0.1"), HPACKHeader("content-type", "application/octet-stream")]
    }

    static func body(_ n: Int, size: Int) -> [UInt8] { (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ n) } }

    /// Sends `body` on a new stream of `driver` and waits for the whole answer.
    static func call(_ driver: HTTP2ChannelDriver, path: String, body: [UInt8]) async -> (CollectingStream, HTTP2StreamClosure) {
        let stream = CollectingStream()
        driver.openStream(headers: request(path), delegate: stream) { opened in
            if case let .success(id) = opened { driver.sendData(body, streamID: id, endStream: true) }
        }
        return (stream, await stream.ended)
    }

    static func connectedPair(loop: EventLoop, serverOptions: HTTP2ConnectionOptions = .init()) throws -> (client: HTTP2ChannelDriver, server: HTTP2ChannelDriver) {
        guard let (first, second) = TestSockets.pair() else { throw IOError.system("socketpair", errno) }
        let pair = [first, second]
        for descriptor in pair { _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL, 0) | O_NONBLOCK) }
        let server = HTTP2ChannelDriver(channel: SocketChannel(descriptor: pair[1], loop: loop), role: .server, options: serverOptions,
                                        acceptor: ReversingAcceptor())
        let client = HTTP2ChannelDriver(channel: SocketChannel(descriptor: pair[0], loop: loop), role: .client, options: .init())
        server.start()
        client.start()
        return (client, server)
    }

    @Test func ourClientAndServerCarryConcurrentStreamsWithFlowControl() async throws {
        let loop = try EventLoop(name: "h2-pair")
        var small = HTTP2ConnectionOptions()
        small.protocolConfiguration.initialStreamWindowSize = 8 * 1024
        small.protocolConfiguration.maxConcurrentStreams = 10
        let (client, server) = try Self.connectedPair(loop: loop, serverOptions: small)
        // 50 calls, 10 at a time by the server's limit, each larger than its window.
        let results = await withTaskGroup(of: (Int, CollectingStream, HTTP2StreamClosure).self) { group in
            for n in 0..<50 {
                group.addTask {
                    let (stream, closure) = await Self.call(client, path: "/echo/\(n)", body: Self.body(n, size: 40_000))
                    return (n, stream, closure)
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results.count == 50)
        for (n, stream, closure) in results {
            #expect(closure == .completed)
            let (headers, body) = stream.snapshot
            #expect(body == Self.body(n, size: 40_000).reversed())
            #expect(headers.last == [HPACKHeader("x-length", "40000")])
        }
        client.close()
        let reason = await withCheckedContinuation { continuation in server.whenClosed { continuation.resume(returning: $0) } }
        #expect(!reason.isEmpty)
        #expect(client.state.isClosed && server.state.isClosed)
        await loop.shutdown()
    }

    @Test func streamsFailWhenThePeerVanishes() async throws {
        let loop = try EventLoop(name: "h2-vanish")
        let (client, server) = try Self.connectedPair(loop: loop)
        let stream = CollectingStream()
        client.openStream(headers: Self.request("/never-ends"), delegate: stream) { _ in }
        try await Task.sleep(for: .milliseconds(50))
        server.channel.close(reason: nil)
        let closure = await stream.ended
        guard case .connectionEnded = closure else {
            Issue.record("expected connectionEnded, got \(closure)")
            return
        }
        // A stream asked for after the end fails at once.
        let late = await withCheckedContinuation { continuation in
            client.openStream(headers: Self.request("/late"), delegate: CollectingStream()) { continuation.resume(returning: $0) }
        }
        #expect(late == .failure(.connectionClosed))
        await loop.shutdown()
    }

    @Test func ourClientAgainstPythonH2() async throws {
        let peer = try PythonPeer(script: "h2_peer.py", arguments: ["server"])
        defer { peer.stop() }
        let port = try #require(await peer.firstLineAsync().flatMap { Int($0) })
        let loop = try EventLoop(name: "h2-python-server")
        let descriptor = try await SocketConnector.connect(host: "127.0.0.1", port: port, deadline: .now + .seconds(5), loop: loop)
        let client = HTTP2ChannelDriver(channel: SocketChannel(descriptor: descriptor, loop: loop), role: .client, options: .init())
        client.start()
        let sizes = [0, 1, 100, 70_000, 300_000]
        let results = await withTaskGroup(of: (Int, CollectingStream, HTTP2StreamClosure).self) { group in
            for (n, size) in sizes.enumerated() {
                group.addTask {
                    let (stream, closure) = await Self.call(client, path: "/reverse/\(n)", body: Self.body(n, size: size))
                    return (n, stream, closure)
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        for (n, stream, closure) in results {
            #expect(closure == .completed, "request \(n)")
            let (headers, body) = stream.snapshot
            #expect(headers.first?.first == HPACKHeader(":status", "200"))
            #expect(body == Self.body(n, size: sizes[n]).reversed(), "request \(n)")
            #expect(headers.last == [HPACKHeader("x-length", "\(sizes[n])")])
        }
        client.close()
        await loop.shutdown()
    }

    @Test func pythonH2AgainstOurServer() async throws {
        let loop = try EventLoop(name: "h2-python-client")
        let listener = try LoopbackListener()
        defer { listener.close() }
        let sizes = [0, 5, 16_385, 100_000, 250_000]
        let job = sizes.enumerated().map { n, size in
            ["path": "/reverse/\(n)", "body": Self.body(n, size: size).map { String(format: "%02x", $0) }.joined()]
        }
        let jobURL = try ScratchDirectory.make("h2-client").appendingPathComponent("job.json")
        try JSONSerialization.data(withJSONObject: job).write(to: jobURL)
        let peer = try PythonPeer(script: "h2_peer.py", arguments: ["client", "\(listener.port)", jobURL.path])
        let descriptor = try #require(await listener.acceptAsync())
        let server = HTTP2ChannelDriver(channel: SocketChannel(descriptor: descriptor, loop: loop), role: .server, options: .init(),
                                        acceptor: ReversingAcceptor())
        server.start()
        let result = await peer.finishAsync(timeout: 60)
        try #require(result.status == 0, "\(result.output)")
        struct Answer: Decodable {
            var status: String?
            var body: String
            var trailers: [String: String]
        }
        let answers = try JSONDecoder().decode([Answer].self, from: Data(result.output.utf8))
        #expect(answers.count == sizes.count)
        for (n, answer) in answers.enumerated() {
            #expect(answer.status == "200")
            #expect(answer.body == Self.body(n, size: sizes[n]).reversed().map { String(format: "%02x", $0) }.joined(), "request \(n)")
            #expect(answer.trailers == ["x-length": "\(sizes[n])"])
        }
        // The Python client said GOAWAY and closed: our side ends too.
        let reason = await withCheckedContinuation { continuation in server.whenClosed { continuation.resume(returning: $0) } }
        #expect(!reason.isEmpty)
        await loop.shutdown()
    }
}

/// A loopback TCP listener for tests that need the peer to connect to us.
final class LoopbackListener: @unchecked Sendable {
    let descriptor: Int32
    let port: Int

    init() throws {
        let number = TestSockets.stream()
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(number, $0, length) == 0 && listen(number, 16) == 0 && getsockname(number, $0, &length) == 0 }
        }
        guard bound else { throw IOError.system("bind", errno) }
        descriptor = number
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    /// Accepts one connection within 20 s, non-blocking; nil on timeout.
    func acceptAsync() async -> Int32? {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread { [self] in
                var ready = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                guard poll(&ready, 1, 20_000) > 0 else { return continuation.resume(returning: nil) }
                let client = TestSockets.accept(on: descriptor)
                guard client >= 0 else { return continuation.resume(returning: nil) }
                _ = fcntl(client, F_SETFL, fcntl(client, F_GETFL, 0) | O_NONBLOCK)
                continuation.resume(returning: client)
            }
        }
    }

    func close() {
        #if canImport(Glibc)
        _ = Glibc.close(descriptor)
        #else
        _ = Darwin.close(descriptor)
        #endif
    }
}
