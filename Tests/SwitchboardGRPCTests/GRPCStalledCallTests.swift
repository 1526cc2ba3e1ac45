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

/// Clients that hold a stream without finishing it: each is bounded in time by a server
/// option, so streams (and the requests they buffer) cannot be held for ever; and a
/// subscriber that stops reading cannot make pushes queue without end.
@Suite(.timeLimit(.minutes(2)))
struct GRPCStalledCallTests {
    /// A raw client: sends `bytes` (the preface and SETTINGS first, with `settings`), then
    /// reads the server's frames until `done` holds for them, or `seconds` pass.
    /// Sends `bytes`, then `later` once the server has had 0.3 s and `laterWhen` holds for
    /// the frames read so far, and reads until `done` holds (or `seconds` pass).
    static func exchange(port: Int, settings: [HTTP2Setting] = [], _ bytes: [UInt8], then later: [UInt8] = [],
                         laterWhen: @escaping @Sendable ([HTTP2Frame]) -> Bool = { _ in true }, seconds: Double = 10,
                         until done: @escaping @Sendable ([HTTP2Frame]) -> Bool) async -> [HTTP2Frame] {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                guard let fd = GRPCHostilePeerTests.connectedSocket(port: port, receiveBuffer: nil) else {
                    continuation.resume(returning: [])
                    return
                }
                defer { _ = close(fd) }
                var first = HTTP2ConnectionPreface.bytes
                HTTP2FrameEncoder.write(HTTP2Frame(streamID: 0, payload: .settings(settings, ack: false)), into: &first)
                first += bytes
                func sendAll(_ bytes: [UInt8]) {
                    var offset = 0
                    while offset < bytes.count {
                        let sent = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                        if sent <= 0 { return }
                        offset += sent
                    }
                }
                sendAll(first)
                var decoder = HTTP2FrameDecoder(maxFrameSize: HTTP2FrameLimits.maximumMaxFrameSize, expectsPreface: false)
                var frames: [HTTP2Frame] = []
                var buffer = [UInt8](repeating: 0, count: 65_536)
                let start = Date()
                var sentLater = later.isEmpty
                while Date().timeIntervalSince(start) < seconds, !done(frames) {
                    // What comes later goes once the server has had a moment with the first part.
                    if !sentLater, Date().timeIntervalSince(start) > 0.3, laterWhen(frames) {
                        sendAll(later)
                        sentLater = true
                    }
                    var ready = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                    guard poll(&ready, 1, 50) > 0 else { continue }
                    let count = recv(fd, &buffer, buffer.count, 0)
                    if count <= 0 { break }
                    decoder.append(Array(buffer[0..<count]))
                    while let frame = try? decoder.nextFrame() { frames.append(frame) }
                }
                continuation.resume(returning: frames)
            }
        }
    }

    static func headers(_ stream: UInt32, path: String, extra: [HPACKHeader] = [], encoder: inout HPACKEncoder, endStream: Bool = false) -> [UInt8] {
        var block: [UInt8] = []
        encoder.encode([HPACKHeader(":method", "POST"), HPACKHeader(":scheme", "http"), HPACKHeader(":authority", "x"),
                        HPACKHeader(":path", path), HPACKHeader("content-type", "application/grpc"), HPACKHeader("te", "trailers")] + extra,
                       into: &block)
        return GRPCHostilePeerTests.frame(stream, .headers(fragment: block[...], endStream: endStream, endHeaders: true))
    }

    /// The `grpc-status` of each stream's trailers (or trailers-only answer), in order.
    static func statuses(_ frames: [HTTP2Frame]) -> [UInt32: String] {
        var decoder = HPACKDecoder()
        var found: [UInt32: String] = [:]
        for frame in frames {
            guard case let .headers(fragment, _, _) = frame.payload, let block = try? decoder.decode(fragment) else { continue }
            if let status = block.headers.first(where: { $0.name == "grpc-status" }) { found[frame.streamID] = status.value }
        }
        return found
    }

    static let lookUp = "/signal.chat.Usernames/LookUpUsernameHash"

    @Test func requestBytesAcrossCallsAreBounded() async throws {
        var options = GRPCServerOptions()
        options.maximumRequestBytesInFlight = 20_000
        let server = try GRPCServer(router: RPCRouter(routes: SampleHandlers().allRoutes), options: options)
        var encoder = HPACKEncoder()
        // Three calls whose 12,000-byte messages arrive 8,000 bytes in and stop there: two
        // fit in the budget (1 KiB and their header list each to begin, then their bytes),
        // the third does not.
        let extra = [HPACKHeader("grpc-timeout", "60S")]
        let listSize = HPACKHeader.listSize([HPACKHeader(":method", "POST"), HPACKHeader(":scheme", "http"), HPACKHeader(":authority", "x"),
                                             HPACKHeader(":path", Self.lookUp), HPACKHeader("content-type", "application/grpc"),
                                             HPACKHeader("te", "trailers")] + extra)
        let held = 2 * (1024 + listSize + 8_000)
        #expect(held <= 20_000 && held + 1024 + listSize > 20_000)
        var bytes: [UInt8] = []
        for stream: UInt32 in [1, 3, 5] {
            bytes += Self.headers(stream, path: Self.lookUp, extra: extra, encoder: &encoder)
            let partial = [0, 0, 0, 0x2E, 0xE0] + [UInt8](repeating: 0, count: 7_995)
            bytes += GRPCHostilePeerTests.frame(stream, .data(partial[...], endStream: false, flowControlledLength: partial.count))
        }
        let inFlight = Locked(0)
        let frames = await Self.exchange(port: server.port, bytes, seconds: 5) { frames in
            guard Self.statuses(frames)[5] != nil else { return false }
            // Each call's first kilobyte and header list are taken as its stream opens, its
            // message's bytes as they arrive.
            for _ in 0..<200 where server.requestBytesInFlight != held { usleep(10_000) }
            inFlight.withLock { $0 = server.requestBytesInFlight }
            return true
        }
        #expect(Self.statuses(frames) == [5: "\(GRPCStatusCode.resourceExhausted.rawValue)"], "\(Self.statuses(frames))")
        #expect(inFlight.current == held, "the two held calls, and nothing of the refused one")
        // The client went: every byte is given back.
        #expect(await eventually(within: .seconds(10)) { server.requestBytesInFlight == 0 }, "\(server.requestBytesInFlight)")
        #expect(GRPCServerOptions().maximumRequestBytesInFlight == 256 << 20, "the documented default")
        await server.shutdown(timeout: .seconds(1))
    }

    @Test func aClientDeadlineBeyondTheMaximumIsCutToIt() async throws {
        var options = GRPCServerOptions()
        options.maximumCallTimeout = .seconds(1)
        options.requestReceiveTimeout = .seconds(60)
        let server = try GRPCServer(router: RPCRouter(routes: SampleHandlers().allRoutes), options: options)
        var encoder = HPACKEncoder()
        // About 11,000 years asked for, and a message that never completes.
        var bytes = Self.headers(1, path: Self.lookUp, extra: [HPACKHeader("grpc-timeout", "99999999H")], encoder: &encoder)
        bytes += GRPCHostilePeerTests.frame(1, .data([0, 0, 0, 0, 10, 1], endStream: false, flowControlledLength: 6))
        let started = ContinuousClock.now
        let frames = await Self.exchange(port: server.port, bytes) { Self.statuses($0)[1] != nil }
        #expect(Self.statuses(frames)[1] == "\(GRPCStatusCode.deadlineExceeded.rawValue)")
        #expect(ContinuousClock.now - started < .seconds(8))
        await server.shutdown(timeout: .seconds(1))
    }

    @Test func aRequestThatNeverArrivesInFullEndsAtTheReceiveTimeoutEventStreamsToo() async throws {
        var options = GRPCServerOptions()
        options.requestReceiveTimeout = .milliseconds(500)
        let server = try GRPCServer(router: RPCRouter(routes: SampleHandlers().allRoutes), options: options)
        var encoder = HPACKEncoder()
        // A unary call with a long deadline whose message trickles, and an event subscription
        // whose (empty) request message never comes: neither had a limit before.
        var bytes = Self.headers(1, path: Self.lookUp, extra: [HPACKHeader("grpc-timeout", "60S")], encoder: &encoder)
        bytes += GRPCHostilePeerTests.frame(1, .data([0, 0, 0, 0], endStream: false, flowControlledLength: 4))
        bytes += Self.headers(3, path: "/signal.chat.Messages/SwitchboardEvents", extra: [HPACKHeader("authorization", "Basic YTpi")], encoder: &encoder)
        let frames = await Self.exchange(port: server.port, bytes) { Self.statuses($0).count == 2 }
        let deadlineExceeded = "\(GRPCStatusCode.deadlineExceeded.rawValue)"
        #expect(Self.statuses(frames) == [1: deadlineExceeded, 3: deadlineExceeded])
        await server.shutdown(timeout: .seconds(1))
    }

    /// Requests that cross the server's idle close on the wire: the first GOAWAY names no last
    /// stream yet, a unary call is served, and a subscription (which would hold the closing
    /// connection) is refused as unprocessed, so its client opens it again elsewhere.
    @Test func requestsCrossingAnIdleCloseAreServedAndSubscriptionsRefusedAsUnprocessed() async throws {
        var options = GRPCServerOptions()
        options.http2.idleTimeout = .milliseconds(200)
        let server = try GRPCServer(router: RPCRouter(routes: SampleHandlers().allRoutes), options: options)
        var encoder = HPACKEncoder()
        let message = LookUpUsernameHashRequest(hash: Data([1])).serializedBytes()
        var late = Self.headers(1, path: Self.lookUp, encoder: &encoder)
        late += GRPCHostilePeerTests.frame(1, .data(GRPCMessageFramer.frame(message)[...], endStream: true, flowControlledLength: message.count + 5))
        late += Self.headers(3, path: "/signal.chat.Messages/SwitchboardEvents", extra: [HPACKHeader("authorization", "Basic YTpi")], encoder: &encoder)
        late += GRPCHostilePeerTests.frame(3, .data(GRPCMessageFramer.frame([])[...], endStream: true, flowControlledLength: 5))
        let isReset: @Sendable (HTTP2Frame) -> Bool = { frame in
            if case .rstStream = frame.payload { frame.streamID == 3 } else { false }
        }
        // Sent once the server's first GOAWAY arrived, before its PING is answered (this raw
        // client never answers it).
        let frames = await Self.exchange(port: server.port, [], then: late, laterWhen: { frames in
            frames.contains { if case .goAway = $0.payload { true } else { false } }
        }) { frames in
            Self.statuses(frames)[1] != nil && frames.contains(where: isReset)
        }
        let lastStreams = frames.compactMap { frame -> UInt32? in
            if case let .goAway(last, _, _) = frame.payload { last } else { nil }
        }
        #expect(lastStreams == [0x7fff_ffff], "\(frames.map(\.payload))")
        #expect(frames.contains { if case .ping(_, false) = $0.payload { true } else { false } })
        #expect(Self.statuses(frames)[1] == "0", "the unary call is served")
        guard case let .rstStream(code)? = frames.first(where: isReset)?.payload else {
            Issue.record("the subscription must be reset; frames: \(frames.map(\.payload))")
            await server.shutdown(timeout: .seconds(1))
            return
        }
        #expect(code == .refusedStream)
        await server.shutdown(timeout: .seconds(1))
    }

    @Test func anAnswerTheClientNeverTakesIsResetAtTheDeadline() async throws {
        let server = try GRPCServer(router: RPCRouter(routes: SampleHandlers().allRoutes))
        var encoder = HPACKEncoder()
        // No window for any stream: the answer's message can never be sent.
        var bytes = Self.headers(1, path: Self.lookUp, extra: [HPACKHeader("grpc-timeout", "1S")], encoder: &encoder)
        let message = LookUpUsernameHashRequest(hash: Data([1, 2])).serializedBytes()
        bytes += GRPCHostilePeerTests.frame(1, .data(GRPCMessageFramer.frame(message)[...], endStream: true, flowControlledLength: message.count + 5))
        let frames = await Self.exchange(port: server.port, settings: [HTTP2Setting(.initialWindowSize, 0)], bytes) { frames in
            frames.contains { if case .rstStream = $0.payload { return $0.streamID == 1 } else { return false } }
        }
        let reset = frames.first { if case .rstStream = $0.payload { return $0.streamID == 1 } else { return false } }
        guard case let .rstStream(code)? = reset?.payload else {
            Issue.record("the stream must be reset at the deadline; frames: \(frames.map(\.payload))")
            await server.shutdown(timeout: .seconds(1))
            return
        }
        #expect(code == .cancel)
        #expect(!frames.contains { if case .data = $0.payload { return true } else { return false } }, "no window, no message")
        await server.shutdown(timeout: .seconds(1))
    }

    @Test func tinyConnectionWindowUpdatesWhileStreamsWaitAreControlFrames() async throws {
        // Answers bigger than the connection's first window, so the second one waits for it.
        let answer = RPCResponse(status: 200, body: Data(repeating: 7, count: 40_000))
        let endpoint = EndpointDescriptor(rpcName: "test.Big/Get", verb: "POST", pathTemplate: "/big", auth: .none)
        let big = RPCRoute(endpoint: endpoint, message: { _, _ in answer }, handler: { _, _ in answer })
        var options = GRPCServerOptions()
        options.http2.protocolConfiguration.controlFrameLimit = HTTP2RateLimit(burst: 100, perSecond: 10)
        let server = try GRPCServer(router: RPCRouter(routes: [big]), options: options)
        var encoder = HPACKEncoder()
        var requests: [UInt8] = []
        for stream in [UInt32(1), 3] {
            requests += Self.headers(stream, path: "/test.Big/Get", encoder: &encoder)
            requests += GRPCHostilePeerTests.frame(stream, .data([0, 0, 0, 0, 0], endStream: true, flowControlledLength: 5))
        }
        // Then, once the second answer waits: a flood of one-byte connection window updates.
        var flood: [UInt8] = []
        for _ in 0..<1000 { flood += GRPCHostilePeerTests.frame(0, .windowUpdate(increment: 1)) }
        // The connection's first window (65,535 bytes) is spent once that much DATA came: only
        // then does the second answer wait (on a loaded machine, 0.3 s may not be enough).
        let windowSpent: @Sendable ([HTTP2Frame]) -> Bool = { frames in
            frames.reduce(0) { sum, frame in
                if case let .data(_, _, length) = frame.payload { sum + length } else { sum }
            } >= 65_535
        }
        let frames = await Self.exchange(port: server.port, settings: [HTTP2Setting(.initialWindowSize, 0x7fff_ffff)], requests, then: flood,
                                         laterWhen: windowSpent) { frames in
            frames.contains { if case .goAway = $0.payload { return true } else { return false } }
        }
        let goAway = frames.first { if case .goAway = $0.payload { return true } else { return false } }
        guard case let .goAway(_, code, _)? = goAway?.payload else {
            Issue.record("the flood must end in GOAWAY")
            await server.shutdown(timeout: .seconds(1))
            return
        }
        #expect(code == .enhanceYourCalm)
        await server.shutdown(timeout: .seconds(1))
    }

    @Test func answersAClientWithholdsItsWindowFromAreCappedPerConnection() async throws {
        // Each answer is 40,005 bytes framed: two fit in 100,000, a third does not.
        let answer = RPCResponse(status: 200, body: Data(repeating: 7, count: 40_000))
        let endpoint = EndpointDescriptor(rpcName: "test.Big/Get", verb: "POST", pathTemplate: "/big", auth: .none)
        let big = RPCRoute(endpoint: endpoint, message: { _, _ in answer }, handler: { _, _ in answer })
        var options = GRPCServerOptions()
        options.http2.protocolConfiguration.maxPendingConnectionBytes = 100_000
        let server = try GRPCServer(router: RPCRouter(routes: [big]), options: options)
        var encoder = HPACKEncoder()
        let extra = [HPACKHeader("grpc-timeout", "60S")]
        // Streams 1 and 3 first; 5, 7 and 9 once both their answers wait (their response
        // headers have come), so which answers fit does not depend on the handlers' order.
        var first: [UInt8] = []
        for stream: UInt32 in [1, 3] {
            first += Self.headers(stream, path: "/test.Big/Get", extra: extra, encoder: &encoder)
            first += GRPCHostilePeerTests.frame(stream, .data([0, 0, 0, 0, 0], endStream: true, flowControlledLength: 5))
        }
        var later: [UInt8] = []
        for stream: UInt32 in [5, 7, 9] {
            later += Self.headers(stream, path: "/test.Big/Get", extra: extra, encoder: &encoder)
            later += GRPCHostilePeerTests.frame(stream, .data([0, 0, 0, 0, 0], endStream: true, flowControlledLength: 5))
        }
        let answered: @Sendable ([HTTP2Frame]) -> Bool = { frames in
            let streams = frames.compactMap { frame -> UInt32? in
                if case .headers = frame.payload { return frame.streamID }
                return nil
            }
            return Set(streams).isSuperset(of: [1, 3])
        }
        // INITIAL_WINDOW_SIZE 0: no answer can leave; every one waits for window.
        let frames = await Self.exchange(port: server.port, settings: [HTTP2Setting(.initialWindowSize, 0)], first, then: later,
                                         laterWhen: answered) { frames in
            let reset = frames.compactMap { frame -> UInt32? in
                if case .rstStream = frame.payload { return frame.streamID }
                return nil
            }
            return Set(reset).isSuperset(of: [5, 7, 9])
        }
        var resets: [UInt32: HTTP2ErrorCode] = [:]
        for frame in frames { if case let .rstStream(code) = frame.payload { resets[frame.streamID] = code } }
        let expected: [UInt32: HTTP2ErrorCode] = [5: .enhanceYourCalm, 7: .enhanceYourCalm, 9: .enhanceYourCalm]
        #expect(resets == expected, "none on 1 and 3; frames: \(frames.map(\.payload))")
        #expect(!frames.contains { if case .goAway = $0.payload { return true } else { return false } })
        #expect(!frames.contains { if case .data = $0.payload { return true } else { return false } }, "no window, no message")
        await server.shutdown(timeout: .seconds(1))
    }

    @Test func subscriptionsTheApplicationNeverTakesAreEndedPastTheLimit() async throws {
        var options = GRPCServerOptions()
        options.http2.protocolConfiguration.maxConcurrentStreams = 2000
        let server = try GRPCServer(router: RPCRouter(routes: []), options: options)
        // Asked for, never iterated: before, every arrival waited in it for ever.
        let arrivals = server.arrivingSubscribers()
        var encoder = HPACKEncoder()
        var bytes = GRPCHostilePeerTests.frame(0, .settings([], ack: true))
        let count = GRPCEventHub.maximumWaitingArrivals + 6
        for index in 0..<count {
            let stream = UInt32(index * 2 + 1)
            bytes += Self.headers(stream, path: "/signal.chat.Messages/SwitchboardEvents", extra: [HPACKHeader("authorization", "Basic YTpi")], encoder: &encoder)
            bytes += GRPCHostilePeerTests.frame(stream, .data([0, 0, 0, 0, 0], endStream: true, flowControlledLength: 5))
        }
        let frames = await Self.exchange(port: server.port, bytes) { Self.statuses($0).count >= 6 }
        // The 1,024 waiting are open (headers only); the six past them were ended with OK.
        let ended = Self.statuses(frames)
        #expect(ended.count == 6, "\(ended.count) ended")
        #expect(ended.values.allSatisfy { $0 == "0" })
        #expect(ended.keys.allSatisfy { Int($0) >= GRPCEventHub.maximumWaitingArrivals * 2 }, "the newest are the ones ended")
        _ = arrivals
        await server.shutdown(timeout: .seconds(1))
    }

    @Test func oneAddressHoldsAtMostItsShareOfConnections() async throws {
        var options = GRPCServerOptions()
        options.maximumConnectionsPerAddress = 2
        let server = try GRPCServer(router: RPCRouter(routes: SampleHandlers().allRoutes), options: options)
        var held: [Int32] = []
        defer { for fd in held { _ = close(fd) } }
        // Each a proper HTTP/2 client (its SETTINGS acknowledged blind), so none times out.
        var hello = HTTP2ConnectionPreface.bytes
        hello += GRPCHostilePeerTests.frame(0, .settings([], ack: false)) + GRPCHostilePeerTests.frame(0, .settings([], ack: true))
        func connect() throws -> Int32 {
            let fd = try #require(GRPCHostilePeerTests.connectedSocket(port: server.port, receiveBuffer: nil))
            _ = hello.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            return fd
        }
        for _ in 0..<2 { held.append(try connect()) }
        var deadline = ContinuousClock.now + .seconds(10)
        while server.connectionCount < 2 && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(server.connectionCount == 2)
        // A third from the same address is closed at once: its read sees the end.
        let third = try #require(GRPCHostilePeerTests.connectedSocket(port: server.port, receiveBuffer: nil))
        defer { _ = close(third) }
        var ready = pollfd(fd: third, events: Int16(POLLIN), revents: 0)
        #expect(poll(&ready, 1, 10_000) == 1)
        var byte: UInt8 = 0
        #expect(recv(third, &byte, 1, 0) <= 0, "closed, not served")
        #expect(server.connectionCount == 2)
        // One leaves: its slot is free again.
        _ = close(held.removeFirst())
        deadline = ContinuousClock.now + .seconds(10)
        while server.connectionCount > 1 && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        held.append(try connect())
        deadline = ContinuousClock.now + .seconds(10)
        while server.connectionCount < 2 && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(server.connectionCount == 2)
        await server.shutdown(timeout: .seconds(1))
    }

    /// A connection's slots are its descriptor's: after a protocol error the server keeps
    /// reading (and dropping) for a while before the socket goes, and until then it still
    /// counts, so a client that breaks connections by the hundred cannot hold descriptors
    /// nobody counts (from the I/O review). A peer that closes ends the wait at once.
    @Test func aConnectionClosingAfterAnErrorKeepsItsSlotUntilReleased() async throws {
        var options = GRPCServerOptions()
        options.maximumConnectionsPerAddress = 2
        // Long enough that no scheduling delay ends the lingers before the third connection is
        // refused; the peer's own close ends them below.
        options.http2.lingerAfterError = .seconds(60)
        let server = try GRPCServer(router: RPCRouter(routes: SampleHandlers().allRoutes), options: options)
        var broken: [Int32] = []
        defer { for fd in broken { _ = close(fd) } }
        for _ in 0..<2 {
            let fd = try #require(GRPCHostilePeerTests.connectedSocket(port: server.port, receiveBuffer: nil))
            let garbage = Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
            _ = garbage.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            broken.append(fd)
        }
        // Both ended (GOAWAY sent) but neither socket is released: this peer neither reads nor closes.
        var deadline = ContinuousClock.now + .seconds(10)
        while server.connectionCount > 0 && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(server.connectionCount == 0)
        let third = try #require(GRPCHostilePeerTests.connectedSocket(port: server.port, receiveBuffer: nil))
        var ready = pollfd(fd: third, events: Int16(POLLIN), revents: 0)
        #expect(poll(&ready, 1, 10_000) == 1)
        var byte: UInt8 = 0
        #expect(recv(third, &byte, 1, 0) <= 0, "refused while the address's lingering sockets hold its share")
        _ = close(third)
        // The peer closes, one socket with a FIN and one with a reset (our GOAWAY unread): the
        // lingers end at once (not after 60 s), and a newcomer is served.
        _ = shutdown(broken[0], Int32(SHUT_WR))
        _ = close(broken[1])
        broken.removeLast()
        var served = false
        deadline = ContinuousClock.now + .seconds(15)
        while !served && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(200))
            let fd = try #require(GRPCHostilePeerTests.connectedSocket(port: server.port, receiveBuffer: nil))
            let hello = HTTP2ConnectionPreface.bytes + GRPCHostilePeerTests.frame(0, .settings([], ack: false))
            _ = hello.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            var answer = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            if poll(&answer, 1, 5_000) == 1, recv(fd, &byte, 1, 0) == 1 { served = true }
            _ = close(fd)
        }
        #expect(served, "a newcomer is served once the lingering sockets are released")
        await server.shutdown(timeout: .seconds(1))
    }

    @Test func pushesToASubscriberThatStopsReadingEndItsConnectionAtTheQueueLimit() async throws {
        var options = GRPCServerOptions()
        options.http2.outputQueueLimit = 256 << 10
        let server = try GRPCServer(router: RPCRouter(routes: []), options: options)
        let arrivals = server.arrivingSubscribers()
        var encoder = HPACKEncoder()
        // Windows wide open, so only the socket holds the pushes back; the client never reads.
        var bytes = GRPCHostilePeerTests.frame(0, .windowUpdate(increment: 0x7fff_0000))
        bytes += GRPCHostilePeerTests.frame(0, .settings([], ack: true))
        bytes += Self.headers(1, path: "/signal.chat.Messages/SwitchboardEvents", extra: [HPACKHeader("authorization", "Basic YTpi")], encoder: &encoder)
        bytes += GRPCHostilePeerTests.frame(1, .data([0, 0, 0, 0, 0], endStream: true, flowControlledLength: 5))
        let fd = try #require(GRPCHostilePeerTests.connectedSocket(port: server.port, receiveBuffer: 8 << 10))
        defer { _ = close(fd) }
        var first = HTTP2ConnectionPreface.bytes
        HTTP2FrameEncoder.write(HTTP2Frame(streamID: 0, payload: .settings([HTTP2Setting(.initialWindowSize, 0x7fff_ffff)], ack: false)), into: &first)
        first += bytes
        #expect(first.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == first.count)
        var iterator = arrivals.makeAsyncIterator()
        let subscriber = try #require(await iterator.next())
        var largest = 0
        var pushes = 0
        let body = Data(repeating: 1, count: 32 << 10)
        while subscriber.isOpen && pushes < 400 {
            // Not waiting for acknowledgements, which never come.
            _ = await subscriber.push(ServerRequest(verb: "PUT", path: "/api/v1/message", body: body), timeout: .milliseconds(1))
            pushes += 1
            largest = max(largest, server.queuedOutputBytes)
        }
        // 400 pushes are 13 MB; the queue stopped at the limit (plus one push) and the
        // connection ended there.
        #expect(!subscriber.isOpen, "after \(pushes) pushes")
        #expect(largest <= options.http2.outputQueueLimit + body.count + 1024, "queued \(largest)")
        let deadline = ContinuousClock.now + .seconds(10)
        while server.connectionCount > 0 && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(server.connectionCount == 0)
        await server.shutdown(timeout: .seconds(1))
    }
}
