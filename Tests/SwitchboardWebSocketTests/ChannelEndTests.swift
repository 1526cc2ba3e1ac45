import Foundation
import PeerSupport
import SwitchboardIO
import SwitchboardWebSocket
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A TLS handshake the peer walks out of fails at once with the reason, not at the connect
/// timeout; a close asked for during the handshake still delivers what was written before it;
/// a channel closed before it starts says so to whoever waits for its start.
/// (A paused channel's end: `PausedChannelTests` in SwitchboardIOTests.)
@Suite(.timeLimit(.minutes(2)))
struct ChannelEndTests {
    @Test func aPeerThatClosesDuringTheTLSHandshakeFailsItAtOnce() async throws {
        let listener = try TCPListener()
        defer { listener.close() }
        // Accepts, reads the ClientHello, and closes.
        Thread.detachNewThread {
            guard let socket = listener.accept() else { return }
            _ = try? socket.read(maximum: 65_536)
            socket.close()
        }
        let started = ContinuousClock.now
        do {
            let connection = try await WebSocketClient.connect(to: URL(string: "wss://127.0.0.1:\(listener.port)/")!,
                                                              options: .init(connectTimeout: .seconds(20), tls: TLSOptions()))
            connection.abort()
            Issue.record("a handshake the peer walked out of must fail")
        } catch {
            #expect(!error.description.contains("timed out"), "\(error)")
        }
        #expect(ContinuousClock.now - started < .seconds(10))
    }

    /// Records how something ended: a channel (as its delegate), a start, a write.
    final class Collector: ChannelDelegate, @unchecked Sendable {
        private let lock = NSLock()
        private var ending: String??
        func channelRead(_ chunk: UnsafeRawBufferPointer) {}
        func channelEnded(reason: String?) { lock.withLock { ending = .some(reason) } }
        func channelWriteFailed(_ reason: String) {}
        var ended: String?? { lock.withLock { ending } }
    }

    #if os(Linux)
    /// Two connected local sockets, for channels that need no network.
    func socketPair() throws -> [Int32] {
        let (first, second) = try #require(TestSockets.pair())
        return [first, second]
    }

    @Test func activatingAClosedChannelAnswersWhoeverWaitsForItsStart() async throws {
        let pair = try socketPair()
        defer { _ = close(pair[1]) }
        let channel = SocketChannel(descriptor: pair[0], loop: EventLoopGroup.shared.next())
        channel.close()
        let start = Collector()
        channel.activate(delegate: Collector()) { start.channelEnded(reason: $0) }
        let deadline = ContinuousClock.now + .seconds(30)
        while start.ended == nil && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        #expect(start.ended == .some("the socket is closed"))
    }

    // Server-side TLS comes from the OpenSSL shim, which only Linux builds have.
    @Test func closeAfterFlushingDuringTheTLSHandshakeSendsWhatWasWrittenFirst() async throws {
        let pair = try socketPair()
        let context = try TLSServerContext(certificateChainPath: await TestCertificates.file("good.pem"),
                                           privateKeyPath: await TestCertificates.file("good.key"))
        let serverSession = try #require(context.makeSession())
        let trust = try String(contentsOfFile: await TestCertificates.file("ca.pem"), encoding: .utf8)
        let clientSession = TLSSession(try TLSEngine(clientTrusting: trust, serverName: "localhost"))
        let loops = EventLoopGroup.shared
        let server = SocketChannel(descriptor: pair[0], loop: loops.next(), tls: serverSession)
        let client = SocketChannel(descriptor: pair[1], loop: loops.next(), tls: clientSession)
        defer { server.close() }
        let handshake = Collector()
        client.activate(delegate: Collector()) { handshake.channelEnded(reason: $0) }
        // Written and closed before the handshake can have finished (the server does not
        // answer until it starts below): both wait for it.
        let written = Collector()
        let result = client.write(Array("written before the handshake".utf8)) { written.channelEnded(reason: $0) }
        guard case .queued = result else {
            Issue.record("a write before the handshake waits for it, got \(result)")
            return
        }
        client.closeAfterFlushing(timeout: .seconds(60))
        guard case .failed = client.write([1], completion: nil) else {
            Issue.record("a write after closeAfterFlushing must fail")
            return
        }
        server.activate(delegate: Collector())
        let deadline = ContinuousClock.now + .seconds(30)
        while (written.ended == nil || !client.isClosed) && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        // Before, the close came at once: the handshake was cut off and the write failed.
        #expect(handshake.ended == .some(nil), "the handshake completes")
        #expect(written.ended == .some(nil), "the write is sent, and its completion says so")
        #expect(client.isClosed)
    }

    /// Blocks `loop` until the returned semaphore is signalled, so what is sent meanwhile
    /// arrives in one read.
    func hold(_ loop: EventLoop) -> DispatchSemaphore {
        let held = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        loop.execute {
            held.signal()
            release.wait()
        }
        held.wait()
        return release
    }

    /// What a channel delivered, and how its reading ended.
    final class Recorder: ChannelDelegate, @unchecked Sendable {
        private let lock = NSLock()
        private var bytes: [UInt8] = []
        private var ending: String??
        func channelRead(_ chunk: UnsafeRawBufferPointer) { lock.withLock { bytes += chunk } }
        func channelEnded(reason: String?) { lock.withLock { ending = .some(reason) } }
        func channelWriteFailed(_ reason: String) {}
        var received: [UInt8] { lock.withLock { bytes } }
        var ended: String?? { lock.withLock { ending } }
    }

    /// A TLS 1.3 client may send its Finished and a request in one flight and leave: the
    /// server's session tickets then meet a closed socket. The whole request still arrives,
    /// as over TCP, and only writes fail (before, the failed ticket write failed the
    /// handshake and the request was dropped). The request spans several TLS records and
    /// more than one read.
    @Test func aRequestSentWithTheLastHandshakeFlightArrivesWhenTheTicketsCannotBeSent() async throws {
        let pair = try socketPair()
        // The server's own loop, so the test can hold it while the client's last flight lands.
        let loop = try EventLoop(name: "ticket-test")
        defer { loop.shutdownBlocking() }
        let recorder = Recorder()
        let handshake = Collector()
        let (server, client) = try await handshakenByHand(pair, delegate: recorder, loop: loop) { handshake.channelEnded(reason: $0) }
        defer { server.close() }
        let request = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        try #require(request.withUnsafeBytes { client.write($0) })
        let flight = client.takeOutput()   // Finished, then the request

        // Hold the server's loop while the flight is sent and the socket closed, so the server
        // reads both at once and its tickets find no one.
        let release = hold(loop)
        let sent = send(pair[1], flight, flight.count, 0)
        _ = close(pair[1])
        release.signal()
        try #require(sent == flight.count)

        let deadline = ContinuousClock.now + .seconds(30)
        while recorder.ended == nil && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(handshake.ended == .some(nil), "the handshake completed")
        #expect(recorder.received.count == request.count)
        #expect(recorder.received == request, "the whole request arrives")
        #expect(recorder.ended != nil, "then the end of the stream")
        guard case .failed = server.write([1], completion: nil) else {
            Issue.record("a write to a peer that left fails")
            return
        }
    }

    /// A TLS server channel on its own end of `pair`, read by `delegate` on `loop` (telling
    /// `handshakeDone`), and a client engine that has finished its handshake with it by hand
    /// over `pair[1]` (a blocking socket; reads time out). The server channel is closed if the
    /// handshake fails.
    func handshakenByHand(_ pair: [Int32], delegate: any ChannelDelegate, loop: EventLoop = EventLoopGroup.shared.next(),
                          handshakeDone: (@Sendable (String?) -> Void)? = nil) async throws -> (server: SocketChannel, client: TLSEngine) {
        let context = try TLSServerContext(certificateChainPath: await TestCertificates.file("good.pem"),
                                           privateKeyPath: await TestCertificates.file("good.key"))
        let serverSession = try #require(context.makeSession())
        let trust = try String(contentsOfFile: await TestCertificates.file("ca.pem"), encoding: .utf8)
        let client = try TLSEngine(clientTrusting: trust, serverName: "localhost")
        let server = SocketChannel(descriptor: pair[0], loop: loop, tls: serverSession)
        server.activate(delegate: delegate, handshakeDone: handshakeDone)
        do {
            var timeout = timeval(tv_sec: 10, tv_usec: 0)
            _ = setsockopt(pair[1], SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            var buffer = [UInt8](repeating: 0, count: 65_536)
            for _ in 0..<20 {
                let step = client.handshake()
                if step == .done { return (server, client) }
                try #require(step == .wantInput, "client handshake: \(step)")
                let output = client.takeOutput()
                if !output.isEmpty { try #require(send(pair[1], output, output.count, 0) == output.count) }
                let count = recv(pair[1], &buffer, buffer.count, 0)
                try #require(count > 0, "the server answers the handshake")
                buffer.withUnsafeBytes { client.feed(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
            }
            throw IOFailure("the handshake did not finish in 20 steps")
        } catch {
            server.close()
            throw error
        }
    }

    /// Sends what `client` has sealed, then a FIN (not `close`: with the server's session
    /// tickets unread that would send a reset instead).
    func sendAndFinish(_ client: TLSEngine, on socket: Int32) throws {
        let flight = client.takeOutput()
        try #require(send(socket, flight, flight.count, 0) == flight.count)
        _ = shutdown(socket, Int32(SHUT_WR))
    }

    /// Only close_notify says a TLS stream is whole: a peer that ends TCP without it may have
    /// been cut short by anyone on the path (RFC 8446 section 6.1), so the channel ends with
    /// a reason, as swift-nio-ssl's unclean shutdown; with it, the end is a plain one. What
    /// came before arrives either way.
    @Test(arguments: [true, false])
    func aTLSPeerThatClosesWithoutCloseNotifyEndsTheChannelWithAReason(sendsCloseNotify: Bool) async throws {
        let pair = try socketPair()
        defer { _ = close(pair[1]) }
        let recorder = Recorder()
        let (server, client) = try await handshakenByHand(pair, delegate: recorder)
        defer { server.close() }
        let message = Array("the last words".utf8)
        try #require(message.withUnsafeBytes { client.write($0) })
        if sendsCloseNotify { client.shutdown() }
        try sendAndFinish(client, on: pair[1])
        let deadline = ContinuousClock.now + .seconds(30)
        while recorder.ended == nil && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(recorder.received == message)
        #expect(recorder.ended == .some(sendsCloseNotify ? nil : SocketChannel.uncleanShutdown))
    }

    /// Pauses its channel's reading on the first bytes, as a delegate under backpressure does.
    final class PausingRecorder: ChannelDelegate, @unchecked Sendable {
        let recorder = Recorder()
        private let lock = NSLock()
        private var channel: SocketChannel?
        func pause(_ channel: SocketChannel) { lock.withLock { self.channel = channel } }
        func channelRead(_ chunk: UnsafeRawBufferPointer) {
            recorder.channelRead(chunk)
            lock.withLock { channel }?.setReading(false)
        }
        func channelEnded(reason: String?) { recorder.channelEnded(reason: reason) }
        func channelWriteFailed(_ reason: String) {}
    }

    /// A close_notify among the records of the read that paused the delegate is not lost: the
    /// delegate hears the plain end when it resumes (before, it was dropped, and the FIN
    /// behind it then read as a truncation).
    @Test func aCloseNotifyThatArrivesWhilePausedEndsTheChannelOnResume() async throws {
        let pair = try socketPair()
        defer { _ = close(pair[1]) }
        let pausing = PausingRecorder()
        let (server, client) = try await handshakenByHand(pair, delegate: pausing)
        defer { server.close() }
        pausing.pause(server)
        let message = Array("then goodbye".utf8)
        try #require(message.withUnsafeBytes { client.write($0) })
        client.shutdown()
        try sendAndFinish(client, on: pair[1])
        let deadline = ContinuousClock.now + .seconds(30)
        while pausing.recorder.received.isEmpty && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        try await Task.sleep(for: .milliseconds(100))
        #expect(pausing.recorder.received == message)
        #expect(pausing.recorder.ended == nil, "paused: the end waits")
        server.setReading(true)
        while pausing.recorder.ended == nil && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(pausing.recorder.ended == .some(nil), "close_notify arrived: a plain end")
    }

    /// A damaged record among those of the read that paused the delegate kills the session,
    /// and the channel closes: the delegate hears it then, with the reason, not on a resume
    /// that a closed channel never gets (before, it heard nothing, and its connection stayed
    /// open with its descriptor gone). Found by review.
    @Test func aDamagedRecordWhilePausedEndsTheChannelWithAReason() async throws {
        let pair = try socketPair()
        defer { _ = close(pair[1]) }
        let pausing = PausingRecorder()
        let (server, client) = try await handshakenByHand(pair, delegate: pausing)
        defer { server.close() }
        pausing.pause(server)
        let first = Array("first".utf8)
        try #require(first.withUnsafeBytes { client.write($0) })
        let intact = client.takeOutput()
        try #require(Array("second".utf8).withUnsafeBytes { client.write($0) })
        var damaged = client.takeOutput()
        damaged[damaged.count - 1] ^= 0xFF
        let flight = intact + damaged
        try #require(send(pair[1], flight, flight.count, 0) == flight.count)
        let deadline = ContinuousClock.now + .seconds(30)
        while pausing.recorder.ended == nil && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(pausing.recorder.received == first)
        let ending = try #require(pausing.recorder.ended, "the delegate heard the end without resuming")
        #expect(ending != nil, "a failure, with its reason")
        #expect(server.isClosed)
    }

    /// Hands the channel to `next` on its first read (as a server's upgrade hands it to the
    /// WebSocket connection).
    final class HandOver: ChannelDelegate, @unchecked Sendable {
        let recorder = Recorder()
        let channel: SocketChannel
        let next: Recorder
        init(channel: SocketChannel, next: Recorder) {
            self.channel = channel
            self.next = next
        }
        func channelRead(_ chunk: UnsafeRawBufferPointer) {
            recorder.channelRead(chunk)
            channel.activate(delegate: next)
        }
        func channelEnded(reason: String?) {}
        func channelWriteFailed(_ reason: String) {}
    }

    /// Records that arrive in one read after the delegate handed the channel over go to the
    /// new delegate (before, the rest of that read went to the old one and was lost).
    @Test func recordsAfterAHandOverInTheSameReadGoToTheNewDelegate() async throws {
        let pair = try socketPair()
        let context = try TLSServerContext(certificateChainPath: await TestCertificates.file("good.pem"),
                                           privateKeyPath: await TestCertificates.file("good.key"))
        let trust = try String(contentsOfFile: await TestCertificates.file("ca.pem"), encoding: .utf8)
        let loop = try EventLoop(name: "hand-over-test")
        defer { loop.shutdownBlocking() }
        let serverSession = try #require(context.makeSession())
        let server = SocketChannel(descriptor: pair[0], loop: loop, tls: serverSession)
        let client = SocketChannel(descriptor: pair[1], loop: EventLoopGroup.shared.next(),
                                   tls: TLSSession(try TLSEngine(clientTrusting: trust, serverName: "localhost")))
        defer {
            server.close()
            client.close()
        }
        let next = Recorder()
        let first = HandOver(channel: server, next: next)
        let serverStart = Collector(), clientStart = Collector()
        server.activate(delegate: first) { serverStart.channelEnded(reason: $0) }
        client.activate(delegate: Collector()) { clientStart.channelEnded(reason: $0) }
        let deadline = ContinuousClock.now + .seconds(30)
        while (serverStart.ended == nil || clientStart.ended == nil) && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        try #require(serverStart.ended == .some(nil) && clientStart.ended == .some(nil))

        // Both records land before the server reads either.
        let release = hold(loop)
        let sent = Collector()
        _ = client.write(Array("first".utf8), completion: nil)
        _ = client.write(Array("second".utf8)) { sent.channelEnded(reason: $0) }
        // `.written` answers at once; `.queued` through the completion.
        while sent.ended == nil && client.queuedByteCount > 0 && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        release.signal()
        while next.received.isEmpty && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        #expect(first.recorder.received == Array("first".utf8))
        #expect(next.received == Array("second".utf8))
    }
    #endif
}
