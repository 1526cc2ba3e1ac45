import Foundation
import PeerSupport
import SignalChat
@testable import SwitchboardGRPC
@testable import SwitchboardHTTP2
import SwitchboardRuntime
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A hostile HTTP/2 client, written as raw bytes over a real socket, against our gRPC server:
/// each classic attack ends in GOAWAY with the right code and a closed connection, never a
/// hang, and the server goes on serving everyone else.
@Suite(.timeLimit(.minutes(4)))
struct GRPCHostilePeerTests {
    /// Connects, sends `bytes` (after the preface and SETTINGS unless `raw`), and reads what the
    /// server says until it closes (10 s at most). Returns the GOAWAY code it sent, if any.
    static func attack(port: Int, raw: Bool = false, _ bytes: [UInt8]) async -> (code: HTTP2ErrorCode?, closed: Bool) {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(returning: attackBlocking(port: port, raw: raw, bytes))
            }
        }
    }

    /// Sends `bytes` on `fd` from a thread of its own, `chunk` bytes a call, until all are sent
    /// or a send fails.
    static func sendInBackground(_ bytes: [UInt8], on fd: Int32, chunk: Int) -> BackgroundSender {
        let sender = BackgroundSender(fd: fd)
        Thread.detachNewThread {
            defer { sender.done.signal() }
            var offset = 0
            while offset < bytes.count {
                let count = bytes[offset..<min(bytes.count, offset + chunk)].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if count <= 0 { return }
                offset += count
            }
        }
        return sender
    }

    /// The socket a background sender writes to, closed only once that sender has stopped: closed
    /// under it, its next send would go to whatever socket another test opened with that number.
    final class BackgroundSender: Sendable {
        let fd: Int32
        let done = DispatchSemaphore(value: 0)
        init(fd: Int32) { self.fd = fd }

        /// Ends the connection (which fails a send blocked on it), waits for the sender, closes.
        func finishAndClose() {
            _ = shutdown(fd, Int32(SHUT_RDWR))
            done.wait()
            _ = close(fd)
        }
    }

    static func attackBlocking(port: Int, raw: Bool, _ payload: [UInt8]) -> (code: HTTP2ErrorCode?, closed: Bool) {
        guard let fd = connectedSocket(port: port, receiveBuffer: nil) else { return (nil, false) }
        var bytes: [UInt8] = raw ? [] : HTTP2ConnectionPreface.bytes
        if !raw { HTTP2FrameEncoder.write(HTTP2Frame(streamID: 0, payload: .settings([], ack: false)), into: &bytes) }
        bytes += payload
        // Written from another thread: a server that stops reading must not block the reader.
        let sender = sendInBackground(bytes, on: fd, chunk: bytes.count)
        defer { sender.finishAndClose() }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let deadline = Date().addingTimeInterval(10)
        var closed = false
        while Date() < deadline {
            var ready = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&ready, 1, 200) > 0 else { continue }
            let count = recv(fd, &buffer, buffer.count, 0)
            if count <= 0 {
                closed = true
                break
            }
            received += buffer[0..<count]
        }
        var decoder = HTTP2FrameDecoder(maxFrameSize: HTTP2FrameLimits.maximumMaxFrameSize, expectsPreface: false)
        decoder.append(received)
        var code: HTTP2ErrorCode?
        while let frame = try? decoder.nextFrame() {
            if case let .goAway(_, found, _) = frame.payload { code = found }
        }
        return (code, closed)
    }

    static func frame(_ stream: UInt32, _ payload: HTTP2Frame.Payload) -> [UInt8] {
        var bytes: [UInt8] = []
        HTTP2FrameEncoder.write(HTTP2Frame(streamID: stream, payload: payload), into: &bytes)
        return bytes
    }

    static func request(_ stream: UInt32, encoder: inout HPACKEncoder, endStream: Bool = false) -> [UInt8] {
        var block: [UInt8] = []
        encoder.encode([HPACKHeader(":method", "POST"), HPACKHeader(":scheme", "http"), HPACKHeader(":authority", "x"),
                        HPACKHeader(":path", "/signal.chat.Usernames/LookUpUsernameHash"), HPACKHeader("content-type", "application/grpc"),
                        HPACKHeader("te", "trailers")], into: &block)
        return frame(stream, .headers(fragment: block[...], endStream: endStream, endHeaders: true))
    }

    @Test func classicAttacksEndInTheRightGoAway() async throws {
        let server = try GRPCServer(router: RPCRouter(routes: SampleHandlers().allRoutes))
        var encoder = HPACKEncoder()
        var oversized: [UInt8] = []
        HTTP2FrameEncoder.writeHeader(length: 20_000, type: .data, flags: 0, streamID: 1, into: &oversized)
        oversized += [UInt8](repeating: 0, count: 20_000)
        var continuation = Self.frame(1, .headers(fragment: [0x82], endStream: false, endHeaders: false))
        for _ in 0..<1000 { continuation += Self.frame(1, .continuation(fragment: [], endHeaders: false)) }
        var settingsFlood: [UInt8] = []
        for _ in 0..<20_000 { settingsFlood += Self.frame(0, .settings([], ack: false)) }
        var pingFlood: [UInt8] = []
        for n in 0..<20_000 { pingFlood += Self.frame(0, .ping(UInt64(n), ack: false)) }
        var rapidReset: [UInt8] = []
        for n in 0..<2000 {
            let stream = UInt32(n * 2 + 1)
            rapidReset += Self.request(stream, encoder: &encoder) + Self.frame(stream, .rstStream(.cancel))
        }
        var encoder2 = HPACKEncoder()
        let closedStream = Self.request(3, encoder: &encoder2) + Self.request(1, encoder: &encoder2)
        let cases: [(String, Bool, [UInt8], HTTP2ErrorCode)] = [
            ("not HTTP/2 at all", true, Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8), .protocolError),
            ("DATA on an idle stream", false, Self.frame(1, .data([1], endStream: false, flowControlledLength: 1)), .protocolError),
            ("a window grown past 2^31-1", false, Self.frame(0, .windowUpdate(increment: 0x7fff_ffff)), .flowControlError),
            ("a frame over MAX_FRAME_SIZE", false, oversized, .frameSizeError),
            ("a CONTINUATION flood", false, continuation, .enhanceYourCalm),
            ("a table size past the limit (HPACK)", false, Self.frame(1, .headers(fragment: [0x3F, 0xE1, 0x7F], endStream: false, endHeaders: true)), .compressionError),
            ("a SETTINGS flood", false, settingsFlood, .enhanceYourCalm),
            ("a PING flood", false, pingFlood, .enhanceYourCalm),
            ("rapid reset", false, rapidReset, .enhanceYourCalm),
            ("a stream id going backwards", false, closedStream, .protocolError),
            ("PUSH_PROMISE from a client", false, Self.frame(1, .pushPromise(promisedStreamID: 2, fragment: [], endHeaders: true)), .protocolError),
        ]
        for (name, raw, bytes, code) in cases {
            let outcome = await Self.attack(port: server.port, raw: raw, bytes)
            #expect(outcome.code == code, "\(name)")
            #expect(outcome.closed, "\(name): the server closes the connection")
        }
        // Every hostile connection is gone, and the server still answers a real client.
        _ = await eventually(within: .seconds(60)) { server.connectionCount == 0 }
        #expect(server.connectionCount == 0)
        let client = GRPCClientTransport<Unauthenticated>(host: "127.0.0.1", port: server.port)
        #expect(try await UsernamesClient(transport: client).lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([9])), options: CallOptions(timeout: .seconds(300))).get().uuid == "09")
        client.close()
        await server.shutdown()
    }

    /// A client that sends calls but never reads their answers: the server stops reading it
    /// once its answers queue past `maxQueuedOutputBytes`, so what it holds for that client
    /// stays bounded (by that, plus the answers to the calls one read already started: at
    /// most MAX_CONCURRENT_STREAMS of them) however much the client sends, and everyone else
    /// is still served.
    @Test func aPeerThatNeverReadsHoldsABoundedQueue() async throws {
        // Each call answers 4 KiB at no cost, so the answers soon outgrow the socket buffers.
        let answerSize = 4 << 10
        let answer = RPCResponse(status: 200, body: Data(repeating: 7, count: answerSize))
        let endpoint = EndpointDescriptor(rpcName: "test.Big/Get", verb: "POST", pathTemplate: "/big", auth: .none)
        let handled = Counter()
        let big = RPCRoute(endpoint: endpoint, message: { _, _ in handled.add(); return answer }, handler: { _, _ in answer })
        var options = GRPCServerOptions()
        options.http2.maxQueuedOutputBytes = 64 << 10
        options.http2.protocolConfiguration.maxConcurrentStreams = 1000
        let server = try GRPCServer(router: RPCRouter(routes: SampleHandlers().allRoutes + [big]), options: options)
        var calls: [UInt8] = HTTP2ConnectionPreface.bytes
        // Windows wide open, so HTTP/2 flow control never holds the answers back: only the
        // socket does (flow control holds them otherwise, up to `maxPendingConnectionBytes`).
        calls += Self.frame(0, .settings([HTTP2Setting(.initialWindowSize, 0x7fff_ffff)], ack: false))
        calls += Self.frame(0, .windowUpdate(increment: 0x7fff_0000))
        // Acknowledged blind: this client never reads the server's SETTINGS.
        calls += Self.frame(0, .settings([], ack: true))
        var encoder = HPACKEncoder()
        let message: [UInt8] = [0, 0, 0, 0, 0]
        let headers = [HPACKHeader(":method", "POST"), HPACKHeader(":scheme", "http"), HPACKHeader(":authority", "x"),
                       HPACKHeader(":path", "/test.Big/Get"), HPACKHeader("content-type", "application/grpc"), HPACKHeader("te", "trailers")]
        for n in 0..<60_000 {
            let stream = UInt32(n * 2 + 1)
            var block: [UInt8] = []
            encoder.encode(headers, into: &block)
            calls += Self.frame(stream, .headers(fragment: block[...], endStream: false, endHeaders: true))
            calls += Self.frame(stream, .data(message[...], endStream: true, flowControlledLength: message.count))
        }
        let fd = try #require(Self.connectedSocket(port: server.port, receiveBuffer: 8 << 10))
        // Sent from another thread: once the server stops reading, this blocks, as it should.
        let sender = Self.sendInBackground(calls, on: fd, chunk: 16_384)
        defer { sender.finishAndClose() }
        // Wait until the server stops starting calls (nothing new for half a second; 10 s at most).
        var last = -1, steadySince = ContinuousClock.now, largest = 0
        let deadline = ContinuousClock.now.advanced(by: .seconds(10))
        while ContinuousClock.now < deadline, ContinuousClock.now - steadySince < .milliseconds(500) {
            let now = handled.value
            if now != last { (last, steadySince) = (now, .now) }
            largest = max(largest, server.queuedOutputBytes)
            try await Task.sleep(for: .milliseconds(10))
        }
        // It stopped reading: 1.7 MB of calls is far more than the socket buffers between us hold.
        // It stopped reading: of 60,000 calls sent (1.7 MB, which the kernel's buffers take in),
        // it started only those its first reads held, at most MAX_CONCURRENT_STREAMS each.
        #expect(handled.value <= 2 * Int(options.http2.protocolConfiguration.maxConcurrentStreams), "handled \(handled.value)")
        #expect(server.connectionCount == 1)
        let bound = options.http2.maxQueuedOutputBytes + Int(options.http2.protocolConfiguration.maxConcurrentStreams) * (answerSize + 64)
        #expect(largest <= bound, "queued \(largest), bound \(bound)")
        let client = GRPCClientTransport<Unauthenticated>(host: "127.0.0.1", port: server.port)
        #expect(try await UsernamesClient(transport: client).lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([2])), options: CallOptions(timeout: .seconds(300))).get().uuid == "02")
        client.close()
        await server.shutdown(timeout: .seconds(1))
    }

    /// A subscription whose stream is reset in the same read as its request ends there: the
    /// server keeps no subscriber for it (found by review: the reset closed it while its
    /// headers were being sent, before the hub had it, and the hub then kept it for good, with
    /// its connection, one per such stream).
    @Test func aSubscriptionResetInTheSameReadIsNotKept() async throws {
        let server = try GRPCServer(router: RPCRouter(routes: SampleHandlers().allRoutes))
        var encoder = HPACKEncoder()
        var bytes = HTTP2ConnectionPreface.bytes + Self.frame(0, .settings([], ack: false))
        for stream in stride(from: UInt32(1), through: 39, by: 2) {
            var block: [UInt8] = []
            encoder.encode([HPACKHeader(":method", "POST"), HPACKHeader(":scheme", "http"), HPACKHeader(":authority", "x"),
                            HPACKHeader(":path", "/signal.chat.Messages/SwitchboardEvents"), HPACKHeader("content-type", "application/grpc"),
                            HPACKHeader("te", "trailers")], into: &block)
            bytes += Self.frame(stream, .headers(fragment: block[...], endStream: false, endHeaders: true))
            bytes += Self.frame(stream, .data([0, 0, 0, 0, 0], endStream: true, flowControlledLength: 5))
            bytes += Self.frame(stream, .rstStream(.cancel))
        }
        let fd = try #require(Self.connectedSocket(port: server.port, receiveBuffer: nil))
        let sent = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        #expect(sent == bytes.count)
        // A subscription that is not reset, on the same connection, is kept: the server has
        // read everything before it.
        var block: [UInt8] = []
        encoder.encode([HPACKHeader(":method", "POST"), HPACKHeader(":scheme", "http"), HPACKHeader(":authority", "x"),
                        HPACKHeader(":path", "/signal.chat.Messages/SwitchboardEvents"), HPACKHeader("content-type", "application/grpc"),
                        HPACKHeader("te", "trailers")], into: &block)
        let open = Self.frame(41, .headers(fragment: block[...], endStream: false, endHeaders: true))
            + Self.frame(41, .data([0, 0, 0, 0, 0], endStream: true, flowControlledLength: 5))
        _ = open.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        #expect(await eventually(within: .seconds(10)) { server.events.subscriberCount == 1 })
        #expect(server.events.subscriberCount == 1, "\(server.events.subscriberCount) kept")
        _ = close(fd)
        #expect(await eventually(within: .seconds(10)) { server.events.subscriberCount == 0 })
        await server.shutdown(timeout: .seconds(1))
    }

    /// A blocking socket connected to `port`, its receive buffer set first (so the kernel
    /// cannot absorb the answers by growing it).
    static func connectedSocket(port: Int, receiveBuffer: Int32?) -> Int32? {
        let fd = TestSockets.stream()
        if var size = receiveBuffer {
            _ = setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        guard connected else {
            _ = close(fd)
            return nil
        }
        return fd
    }

    /// A call whose own metadata passes the server's MAX_HEADER_LIST_SIZE fails alone, before
    /// it is sent, with a typed error; the connection is not touched, and the next call on the
    /// same transport goes out on the same connection.
    @Test func aHeaderListOverTheLimitFailsOnlyItsCall() async throws {
        let server = try GRPCServer(router: RPCRouter(routes: SampleHandlers().allRoutes))
        let transport = GRPCClientTransport<Unauthenticated>(host: "127.0.0.1", port: server.port)
        let client = UsernamesClient(transport: transport)
        let patient = CallOptions(timeout: .seconds(120))
        // A normal call first: the server's SETTINGS, and its limit, are known from then on.
        #expect(try await client.lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([1])), options: patient).get().uuid == "01")
        // 20 KiB of metadata on this call alone: past the server's 16 KiB MAX_HEADER_LIST_SIZE.
        let limit = GRPCServerOptions().http2.protocolConfiguration.maxHeaderListSize
        let big = CallOptions(timeout: .seconds(120), headers: ["x-big": String(repeating: "b", count: 20_000)])
        let refused = await client.lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([2])), options: big)
        guard case let .invalidRequest(detail)? = refused.transportError else {
            Issue.record("expected invalidRequest for the header list, got \(refused)")
            transport.close()
            await server.shutdown()
            return
        }
        // "a header list of N bytes exceeds the peer's limit of 16384", N counting every field's
        // name and value and 32 octets each (HPACK's size).
        let prefix = "a header list of ", suffix = " bytes exceeds the peer's limit of \(limit)"
        #expect(detail.hasPrefix(prefix) && detail.hasSuffix(suffix), "\(detail)")
        let size = Int(detail.dropFirst(prefix.count).prefix(while: \.isNumber)) ?? 0
        #expect(size > 20_000 + "x-big".count + 32, "\(detail)")
        // The same transport, the same connection: the refused call cost it nothing.
        #expect(try await client.lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([3])), options: patient).get().uuid == "03")
        #expect(transport.connectionsOpened == 1)
        #expect(server.connectionCount == 1)
        transport.close()
        await server.shutdown()
    }

    /// The same call as a fresh connection's first, sent before the server's SETTINGS (and
    /// its limit) have arrived: the server resets its stream, and only its stream, so the
    /// call fails as INTERNAL (or, if the SETTINGS won the race, before it is sent, as above),
    /// and the next call on the same connection is served.
    @Test func aHeaderListOverTheLimitBeforeTheServersSettingsFailsOnlyItsStream() async throws {
        let server = try GRPCServer(router: RPCRouter(routes: SampleHandlers().allRoutes))
        let transport = GRPCClientTransport<Unauthenticated>(host: "127.0.0.1", port: server.port)
        let client = UsernamesClient(transport: transport)
        let big = CallOptions(timeout: .seconds(120), headers: ["x-big": String(repeating: "b", count: 20_000)])
        let refused = await client.lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([2])), options: big)
        switch refused.transportError {
        case let .grpcStatus(code, message, details)?:
            #expect(code == GRPCStatusCode.internal.rawValue, "\(refused)")
            #expect(message == "the server reset the stream with PROTOCOL_ERROR", "\(refused)")
            #expect(details == nil)
        case let .invalidRequest(detail)?:
            #expect(detail.hasPrefix("a header list of "), "\(detail)")
        default:
            Issue.record("expected the stream reset (or the limit known in time), got \(refused)")
        }
        #expect(try await client.lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([3])), options: CallOptions(timeout: .seconds(120))).get().uuid == "03")
        #expect(transport.connectionsOpened == 1)
        #expect(server.connectionCount == 1)
        transport.close()
        await server.shutdown()
    }
}

/// A count several threads add to.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func add() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}
