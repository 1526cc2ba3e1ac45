import Foundation
import PeerSupport
import SignalChat
@testable import SwitchboardGRPC
@testable import SwitchboardHTTP2
import SwitchboardIO
import SwitchboardRuntime
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The client's connection over time: a server that stops answering is noticed by the
/// keepalive PING, one that never finishes SETTINGS by its timeout, and after the server goes
/// away the next call opens a new connection.
@Suite(.timeLimit(.minutes(4)))
struct GRPCConnectionLifecycleTests {
    /// A server that speaks HTTP/2 just enough (SETTINGS and its acknowledgement, if `settles`)
    /// and then reads everything and answers nothing; if `goesAway`, it sends GOAWAY processing
    /// no stream shortly after the client's first bytes, on each of `connections` in turn.
    final class MuteServer: @unchecked Sendable {
        let listener: Int32
        let port: Int
        private let settles: Bool
        private let settings: [HTTP2Setting]
        private let goesAway: Bool
        private let connections: Int
        private let accepted = Locked(0)
        private let stopped = Locked(false)
        /// Signalled when the serving thread ends: the listener is closed only after it, or its
        /// next poll or accept would use whatever descriptor another test opened with that number.
        private let finished = DispatchSemaphore(value: 0)
        /// How many connections it has accepted.
        var acceptedCount: Int { accepted.withLock { $0 } }

        init(settles: Bool, settings: [HTTP2Setting] = [], goesAway: Bool = false, connections: Int = 1) throws {
            self.settles = settles
            self.settings = settings
            self.goesAway = goesAway
            self.connections = connections
            let fd = TestSockets.stream()
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && listen(fd, 4) == 0 && getsockname(fd, $0, &length) == 0 }
            }
            guard bound else { throw CocoaError(.fileReadUnknown) }
            listener = fd
            port = Int(UInt16(bigEndian: address.sin_port))
            Thread.detachNewThread { [self] in serve() }
        }

        private func serve() {
            defer { finished.signal() }
            for _ in 0..<connections {
                guard TestSockets.awaitConnection(on: listener, stopped: { stopped.withLock { $0 } }) else { return }
                let client = TestSockets.accept(on: listener)
                guard client >= 0 else { return }
                accepted.withLock { $0 += 1 }
                serve(client)
                _ = close(client)
            }
        }

        private func serve(_ client: Int32) {
            if settles {
                var hello: [UInt8] = []
                HTTP2FrameEncoder.write(HTTP2Frame(streamID: 0, payload: .settings(settings, ack: false)), into: &hello)
                HTTP2FrameEncoder.write(HTTP2Frame(streamID: 0, payload: .settings([], ack: true)), into: &hello)
                _ = hello.withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let deadline = Date().addingTimeInterval(20)
            var goAwayAt: Date?
            while Date() < deadline, !stopped.withLock({ $0 }) {
                if let due = goAwayAt, Date() >= due {
                    goAwayAt = .distantFuture
                    var bye: [UInt8] = []
                    HTTP2FrameEncoder.write(HTTP2Frame(streamID: 0, payload: .goAway(lastStreamID: 0, code: .noError, debugData: [])), into: &bye)
                    _ = bye.withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                }
                var readable = pollfd(fd: client, events: Int16(POLLIN), revents: 0)
                guard poll(&readable, 1, 20) > 0 else { continue }
                if recv(client, &buffer, buffer.count, 0) <= 0 { return }
                // Late enough that the call's HEADERS have been sent with the preface.
                if goesAway, goAwayAt == nil { goAwayAt = Date().addingTimeInterval(0.1) }
            }
        }

        /// Stops listening and serving: wakes the serving thread, waits for it, closes.
        func stop() {
            stopped.withLock { $0 = true }
            _ = shutdown(listener, Int32(SHUT_RDWR))
            finished.wait()
            _ = close(listener)
        }
    }

    @Test func anUnansweredKeepalivePingEndsTheConnection() async throws {
        let server = try MuteServer(settles: true)
        defer { server.stop() }
        var options = GRPCClientOptions()
        options.http2.keepaliveInterval = .milliseconds(200)
        options.http2.keepaliveTimeout = .milliseconds(300)
        let transport = GRPCClientTransport<Unauthenticated>(host: "127.0.0.1", port: server.port, options: options)
        let started = ContinuousClock.now
        let result = await UsernamesClient(transport: transport).lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([1])),
                                                                                     options: CallOptions(timeout: .seconds(30)))
        guard case let .failure(.disconnected(reason)) = result else {
            Issue.record("expected the keepalive to drop the connection, got \(result)")
            return
        }
        #expect(reason.detail.contains("keepalive"))
        #expect(ContinuousClock.now - started < .seconds(20), "well before the call's own deadline")
    }

    /// A server that allows no stream at all: calls wait for one, up to
    /// `maximumWaitingStreams`; past that they fail at once as `retryLater` (from the client
    /// review: they queued without bound, and each one given up on was a scan of the queue).
    @Test func callsWaitingForAServerThatAllowsNoStreamsAreBounded() async throws {
        let server = try MuteServer(settles: true, settings: [HTTP2Setting(.maxConcurrentStreams, 0)])
        defer { server.stop() }
        var options = GRPCClientOptions()
        options.http2.maximumWaitingStreams = 8
        let transport = GRPCClientTransport<Unauthenticated>(host: "127.0.0.1", port: server.port, options: options)
        defer { transport.close() }
        let client = UsernamesClient(transport: transport)
        // The connection first, so every call below meets the server's limit (long enough
        // for its SETTINGS to have arrived on any machine).
        _ = await client.lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([1])), options: CallOptions(timeout: .seconds(3)))
        // Deadlines that every one of the calls reaches only after all have started.
        let calls = (0..<20).map { _ in
            Task { await client.lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([1])), options: CallOptions(timeout: .seconds(8))) }
        }
        var timedOut = 0, refused = 0
        for call in calls {
            switch await call.value.transportError {
            case .timeout?: timedOut += 1
            case .retryLater?: refused += 1
            case let other: Issue.record("unexpected \(String(describing: other))")
            }
        }
        // At most 8 wait (7 if the first call's place is not yet given back); the rest are refused.
        #expect((1...8).contains(timedOut) && refused == 20 - timedOut, "\(timedOut) waited to their deadline, \(refused) were refused")
        #expect(HTTP2ConnectionOptions().maximumWaitingStreams == 1024, "the documented default")
    }

    /// A call that reaches its deadline PINGs the connection; a server that went silent does
    /// not answer, the connection is dropped, and the next call opens a new one instead of
    /// timing out on the dead one too (from the client review; keepalive is off by default).
    @Test func aCallsDeadlineChecksTheConnectionIsAlive() async throws {
        let server = try MuteServer(settles: true)
        defer { server.stop() }
        var options = GRPCClientOptions()
        options.http2.keepaliveTimeout = .milliseconds(300)
        let transport = GRPCClientTransport<Unauthenticated>(host: "127.0.0.1", port: server.port, options: options)
        defer { transport.close() }
        let client = UsernamesClient(transport: transport)
        // Long enough for the connection to open on any machine: the server never answers.
        let first = await client.lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([1])), options: CallOptions(timeout: .seconds(2)))
        #expect(first.transportError == .timeout)
        #expect(transport.connectionsOpened == 1)
        // The PING goes unanswered: the connection ends, and a later call connects anew.
        for _ in 0..<20 where transport.connectionsOpened < 2 {
            try await Task.sleep(for: .milliseconds(400))
            _ = await client.lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([1])), options: CallOptions(timeout: .milliseconds(100)))
        }
        #expect(transport.connectionsOpened == 2, "the silent connection was dropped")
    }

    @Test func unacknowledgedSettingsEndTheConnection() async throws {
        let server = try MuteServer(settles: false)
        defer { server.stop() }
        var options = GRPCClientOptions()
        options.http2.settingsTimeout = .milliseconds(300)
        let transport = GRPCClientTransport<Unauthenticated>(host: "127.0.0.1", port: server.port, options: options)
        let result = await UsernamesClient(transport: transport).lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([1])),
                                                                                     options: CallOptions(timeout: .seconds(30)))
        guard case let .failure(.disconnected(reason)) = result else {
            Issue.record("expected SETTINGS_TIMEOUT to drop the connection, got \(result)")
            return
        }
        #expect(reason.detail.contains("SETTINGS"))
    }

    /// After the server's GOAWAY the connection reads on for `lingerAfterError`, so the
    /// client's late bytes meet no reset; once the client closes there is nothing left to
    /// protect, and the server lets the connection go at once (it held it, and with it its
    /// shutdown, until the linger ran out).
    @Test func aClientThatClosesAfterTheGoAwayIsReleasedAtOnce() async throws {
        var options = GRPCServerOptions()
        options.http2.lingerAfterError = .seconds(60)
        let server = try GRPCServer(router: RPCRouter(routes: SampleHandlers().allRoutes), options: options)
        let transport = GRPCClientTransport<Unauthenticated>(host: "127.0.0.1", port: server.port)
        let patient = CallOptions(timeout: .seconds(120))
        #expect(try await UsernamesClient(transport: transport).lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([1])), options: patient).get().uuid == "01")
        #expect(server.connectionCount == 1)
        let started = ContinuousClock.now
        // GOAWAY; the client, with no call open, closes its connection on it.
        let shutdown = Task { await server.shutdown(timeout: .seconds(120)) }
        #expect(await eventually(within: .seconds(30)) { server.connectionCount == 0 }, "\(server.connectionCount) still held")
        await shutdown.value
        #expect(ContinuousClock.now - started < .seconds(30), "the shutdown waited for the 60 s linger")
        transport.close()
    }

    /// A client that goes away itself while the server's shutdown waits for its PING (as a
    /// closing client does, reading on and answering nothing) ends the wait: the server sends
    /// its last GOAWAY and closes at once. It waited for the PING's answer, then lingered,
    /// while the client lingered waiting for the server: both until a linger ran out.
    @Test func aClientGoingAwayDuringTheShutdownEndsItAtOnce() async throws {
        var options = GRPCServerOptions()
        options.http2.lingerAfterError = .seconds(60)
        options.http2.gracefulCloseTimeout = .seconds(60)
        let server = try GRPCServer(router: RPCRouter(routes: SampleHandlers().allRoutes), options: options)
        guard let fd = GRPCHostilePeerTests.connectedSocket(port: server.port, receiveBuffer: nil) else {
            Issue.record("no connection")
            await server.shutdown(timeout: .seconds(1))
            return
        }
        var open = true
        defer { if open { _ = close(fd) } }
        var hello = HTTP2ConnectionPreface.bytes
        HTTP2FrameEncoder.write(HTTP2Frame(streamID: 0, payload: .settings([], ack: false)), into: &hello)
        #expect(hello.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == hello.count)
        #expect(await eventually(within: .seconds(30)) { server.connectionCount == 1 })
        let started = ContinuousClock.now
        let shutdown = Task { await server.shutdown(timeout: .seconds(120)) }
        var decoder = HTTP2FrameDecoder(maxFrameSize: HTTP2FrameLimits.maximumMaxFrameSize, expectsPreface: false)
        var goAways: [UInt32] = []
        var codes: [HTTP2ErrorCode] = []
        var pinged = false
        var sentGoAway = false
        var closed = false
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while !closed, ContinuousClock.now - started < .seconds(30) {
            var ready = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&ready, 1, 200) > 0 else { continue }
            let count = recv(fd, &buffer, buffer.count, 0)
            guard count > 0 else {
                closed = true
                break
            }
            decoder.append(Array(buffer[0..<count]))
            while let frame = try decoder.nextFrame() {
                switch frame.payload {
                case let .goAway(last, code, _):
                    goAways.append(last)
                    codes.append(code)
                case .ping(_, ack: false): pinged = true
                case .settings(_, ack: false):
                    // Acknowledged, so the server's SETTINGS timeout plays no part.
                    let ack = GRPCHostilePeerTests.frame(0, .settings([], ack: true))
                    #expect(ack.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == ack.count)
                default: break
                }
            }
            if pinged, !goAways.isEmpty, !sentGoAway {
                // Goes away without answering the PING, and reads on without closing.
                let bye = GRPCHostilePeerTests.frame(0, .goAway(lastStreamID: 0, code: .noError, debugData: []))
                #expect(bye.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == bye.count)
                sentGoAway = true
            }
        }
        #expect(sentGoAway, "the shutdown's GOAWAY and PING came")
        #expect(closed, "the server closed within 30 s (its PING wait and linger are 60 s)")
        #expect(goAways == [0x7fff_ffff, 0], "the first GOAWAY, then the last naming no stream")
        #expect(codes == [.noError, .noError], "a graceful end, not a SETTINGS timeout")
        _ = close(fd)
        open = false
        await shutdown.value
        #expect(ContinuousClock.now - started < .seconds(30), "the shutdown waited for a 60 s timer")
        #expect(server.connectionCount == 0)
    }

    /// A server that accepts TCP and closes at once (overloaded, or not HTTP/2) is a failed
    /// connect, backed off as one: it was counted a success, which reset the backoff, so every
    /// call dialled it again (once or twice each). Found by review.
    @Test func aServerThatClosesBeforeItsSettingsIsBackedOffFrom() async throws {
        let listener = try TCPListener()
        let accepted = Locked(0)
        Thread.detachNewThread {
            while let socket = listener.accept() {
                accepted.withLock { $0 += 1 }
                socket.close()
            }
        }
        defer { listener.close() }
        let transport = GRPCClientTransport<Unauthenticated>(host: "127.0.0.1", port: listener.port)
        defer { transport.close() }
        let usernames = UsernamesClient(transport: transport)
        for index in 0..<10 {
            let result = await usernames.lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([UInt8(index)])), options: CallOptions(timeout: .seconds(30)))
            #expect(result.transportError != nil, "\(result)")
        }
        // The first connect and a retry of the first call, then backoff (1 s, then 3 s) holds.
        #expect(transport.connectionsOpened <= 4, "\(transport.connectionsOpened) connections for 10 calls")
    }

    /// A transport let go without `close()` closes its connection: the server sees it go.
    @Test func aTransportLetGoClosesItsConnection() async throws {
        let server = try GRPCServer(router: RPCRouter(routes: SampleHandlers().allRoutes))
        do {
            let transport = GRPCClientTransport<Unauthenticated>(host: "127.0.0.1", port: server.port)
            let result = await UsernamesClient(transport: transport).lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([1])),
                                                                                         options: CallOptions(timeout: .seconds(120)))
            #expect(try result.get().uuid == "01")
            #expect(server.connectionCount == 1)
        }
        #expect(await eventually(within: .seconds(20)) { server.connectionCount == 0 })
        await server.shutdown()
    }

    @Test func afterTheServerGoesAwayTheNextCallReconnects() async throws {
        // Outside the range other tests' sockets draw from: no one takes the port between
        // the two servers, or listens on it after the second.
        let port = FixedPorts.free()
        let first = try GRPCServer(router: RPCRouter(routes: SampleHandlers().allRoutes), port: port)
        let transport = GRPCClientTransport<Unauthenticated>(host: "127.0.0.1", port: port)
        let usernames = UsernamesClient(transport: transport)
        // Generous deadlines: on a loaded machine the endpoint's own 10 s can pass before the
        // server's handler gets a thread, and this test is about reconnecting, not latency.
        let patient = CallOptions(timeout: .seconds(120))
        #expect(try await usernames.lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([1])), options: patient).get().uuid == "01")
        // GOAWAY, then the socket closes; a server comes back on the same port.
        await first.shutdown()
        let second = try GRPCServer(router: RPCRouter(routes: SampleHandlers().allRoutes), port: port)
        #expect(try await usernames.lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([2])), options: patient).get().uuid == "02")
        #expect(transport.connectionsOpened == 2)
        // Nothing listening: a typed failure naming the place, not a hang.
        await second.shutdown()
        let down = await usernames.lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([3])), options: patient)
        guard case let .failure(.disconnected(reason)) = down else {
            Issue.record("expected a connect failure, got \(down)")
            return
        }
        #expect(reason.detail.contains("127.0.0.1:\(port)"))
        transport.close()
    }

    /// A call a GOAWAY leaves unprocessed is sent once more on a new connection; left
    /// unprocessed there too, it fails as `goingAway` (retryable), not as a lost connection.
    @Test func aCallTwiceLeftUnprocessedByGoAwayIsReportedAsGoingAway() async throws {
        let server = try MuteServer(settles: true, goesAway: true, connections: 2)
        defer { server.stop() }
        let transport = GRPCClientTransport<Unauthenticated>(host: "127.0.0.1", port: server.port)
        defer { transport.close() }
        let result = await UsernamesClient(transport: transport).lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([1])),
                                                                                     options: CallOptions(timeout: .seconds(30)))
        guard case let .failure(.disconnected(reason)) = result else {
            Issue.record("expected the GOAWAY to be reported, got \(result)")
            return
        }
        #expect(reason.kind == .goingAway, "\(reason)")
        #expect(reason.isRetryable)
        #expect(server.acceptedCount == 2, "sent once more on a new connection")
    }

    /// The same for a subscription's stream: tried once more, then reported as going away.
    @Test func aSubscriptionTwiceLeftUnprocessedByGoAwayIsReportedAsGoingAway() async throws {
        let server = try MuteServer(settles: true, goesAway: true, connections: 2)
        defer { server.stop() }
        let transport = GRPCClientTransport<Authenticated>(host: "127.0.0.1", port: server.port)
        defer { transport.close() }
        do {
            let subscription = try await transport.subscribe(toEventsOf: "signal.chat.Messages") { _ in .withhold(reason: "test") }
            subscription.cancel()
            Issue.record("expected the GOAWAY to be reported")
        } catch {
            guard case let .disconnected(reason) = error else {
                Issue.record("expected a disconnection, got \(error)")
                return
            }
            #expect(reason.kind == .goingAway, "\(reason)")
        }
        #expect(server.acceptedCount == 2, "opened once more on a new connection")
    }
}
