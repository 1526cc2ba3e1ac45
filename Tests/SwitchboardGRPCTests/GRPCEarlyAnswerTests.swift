import Foundation
import PeerSupport
import SignalChat
@testable import SwitchboardGRPC
@testable import SwitchboardHTTP2
import SwitchboardIO
import SwitchboardRuntime
import Testing

/// Serves each connection `listener` accepts on a thread of its own: sends `settings` and the
/// acknowledgement of the client's, then hands every frame read to the handler `connected`
/// made for that connection (with a writer that may be called from any thread), until the
/// client closes or 30 s pass.
func serveFrames(on listener: TCPListener, settings: [HTTP2Setting],
                 _ connected: @escaping @Sendable (_ write: @escaping @Sendable ([UInt8]) -> Void) -> (HTTP2Frame) -> Void) {
    Thread.detachNewThread {
        while let socket = listener.accept() {
            Thread.detachNewThread {
                defer { socket.close() }
                let writing = NSLock()
                let write: @Sendable ([UInt8]) -> Void = { bytes in writing.withLock { _ = try? socket.write(bytes) } }
                var hello: [UInt8] = []
                HTTP2FrameEncoder.write(HTTP2Frame(streamID: 0, payload: .settings(settings, ack: false)), into: &hello)
                HTTP2FrameEncoder.write(HTTP2Frame(streamID: 0, payload: .settings([], ack: true)), into: &hello)
                write(hello)
                try? socket.setReadDeadline(.now + .seconds(30))
                var decoder = HTTP2FrameDecoder(maxFrameSize: HTTP2FrameLimits.maximumMaxFrameSize, expectsPreface: true)
                let handle = connected(write)
                while let read = try? socket.read(maximum: 65_536), !read.isEmpty {
                    decoder.append(read)
                    while let frame = try? decoder.nextFrame() { handle(frame) }
                }
            }
        }
    }
}

/// A server may answer a call in full before the request has all arrived (RFC 9113 §8.1): the
/// client then drops what it still had to send with RST_STREAM(NO_ERROR), so the stream frees
/// its slot. Found by review: it stayed half-closed for as long as the server gave no window,
/// holding a MAX_CONCURRENT_STREAMS slot and the unsent bytes.
@Suite(.timeLimit(.minutes(1)))
struct GRPCEarlyAnswerTests {
    /// One stream at a time, a 16-byte stream window that it never opens further; answers each
    /// call UNAUTHENTICATED as soon as its HEADERS arrive, and records the streams reset.
    final class EarlyAnsweringServer: @unchecked Sendable {
        let listener: TCPListener
        let answered = Locked<[UInt32]>([])
        let resets = Locked<[UInt32: HTTP2ErrorCode]>([:])

        init() throws {
            listener = try TCPListener()
            let (answered, resets) = (answered, resets)
            serveFrames(on: listener, settings: [HTTP2Setting(.maxConcurrentStreams, 1), HTTP2Setting(.initialWindowSize, 16)]) { write in
                var encoder = HPACKEncoder()
                return { frame in
                    switch frame.payload {
                    case .headers:
                        answered.withLock { $0.append(frame.streamID) }
                        var block: [UInt8] = []
                        encoder.encode([HPACKHeader(":status", "200"), HPACKHeader("content-type", "application/grpc"),
                                        HPACKHeader("grpc-status", "16"), HPACKHeader("grpc-message", "no")], into: &block)
                        var bytes: [UInt8] = []
                        HTTP2FrameEncoder.write(HTTP2Frame(streamID: frame.streamID, payload: .headers(fragment: block[...], endStream: true, endHeaders: true)),
                                                into: &bytes)
                        write(bytes)
                    case let .rstStream(code):
                        resets.withLock { $0[frame.streamID] = code }
                    default:
                        break
                    }
                }
            }
        }

        func close() { listener.close() }
    }

    @Test func aCallAnsweredBeforeItsRequestIsSentFreesItsStream() async throws {
        let server = try EarlyAnsweringServer()
        defer { server.close() }
        let transport = GRPCClientTransport<Unauthenticated>(host: "127.0.0.1", port: server.listener.port)
        defer { transport.close() }
        let client = UsernamesClient(transport: transport)
        // 100 KB: far more than the 16-byte window lets out.
        let big = LookUpUsernameHashRequest(hash: Data(repeating: 7, count: 100_000))
        for round in 1...3 {
            let result = await client.lookUpUsernameHash(big, options: CallOptions(timeout: .seconds(10)))
            guard case let .grpcStatus(code, _, _)? = result.transportError else {
                Issue.record("round \(round): expected the server's status, got \(result)")
                return
            }
            // The next call needs the one slot this one held.
            #expect(code == 16, "round \(round)")
        }
        #expect(server.answered.current.count == 3)
        #expect(await eventually { server.resets.current.count == 3 })
        #expect(server.resets.current.values.allSatisfy { $0 == .noError }, "\(server.resets.current.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" })")
        #expect(transport.connectionsOpened == 1)
    }
}

/// Large requests sent at once wait for the bytes already waiting for the server's windows,
/// as they wait for a stream slot, instead of failing (found by review: past
/// `maxPendingConnectionBytes` a further one was reset with ENHANCE_YOUR_CALM at once, though
/// only this side was busy).
@Suite(.timeLimit(.minutes(2)))
struct GRPCSendBacklogTests {
    /// Gives each stream a 16-byte window; after the first request's HEADERS it opens every
    /// window wide once `release` says so (300 ms later by default, at most 20 s), then
    /// answers each request, once whole, with its size as the uuid. It sends nothing else,
    /// not even PING acknowledgements (the client pings when a call's deadline passes; any
    /// frame read lets waiting streams open, which would hide what a test looks for).
    final class SlowWindowServer: @unchecked Sendable {
        let listener: TCPListener
        let headersSeen = Locked(0)
        let answered = Locked(0)
        private let release: @Sendable () -> Bool

        init(release: (@Sendable () -> Bool)? = nil) throws {
            let start = ContinuousClock.now
            self.release = release ?? { ContinuousClock.now - start >= .milliseconds(300) }
            listener = try TCPListener()
            let (headersSeen, answered, release) = (headersSeen, answered, self.release)
            serveFrames(on: listener, settings: [HTTP2Setting(.initialWindowSize, 16)]) { write in
                var encoder = HPACKEncoder()
                var received: [UInt32: [UInt8]] = [:]
                var opened = false
                return { frame in
                    switch frame.payload {
                    case .headers:
                        headersSeen.withLock { $0 += 1 }
                        received[frame.streamID] = []
                        guard !opened else { return }
                        opened = true
                        // On a thread of its own, so requests keep being read and answered meanwhile.
                        Thread.detachNewThread {
                            let deadline = ContinuousClock.now + .seconds(20)
                            while !release(), ContinuousClock.now < deadline { Thread.sleep(forTimeInterval: 0.005) }
                            var wide: [UInt8] = []
                            HTTP2FrameEncoder.write(HTTP2Frame(streamID: 0, payload: .settings([HTTP2Setting(.initialWindowSize, 1 << 30)], ack: false)), into: &wide)
                            HTTP2FrameEncoder.write(HTTP2Frame(streamID: 0, payload: .windowUpdate(increment: 1 << 30)), into: &wide)
                            write(wide)
                        }
                    case let .data(bytes, endStream, _):
                        received[frame.streamID, default: []] += bytes
                        guard endStream else { return }
                        let request = try? LookUpUsernameHashRequest(serializedBytes: Array((received[frame.streamID] ?? []).dropFirst(5)))
                        let size = request?.hash.count ?? -1
                        var head: [UInt8] = []
                        encoder.encode([HPACKHeader(":status", "200"), HPACKHeader("content-type", "application/grpc")], into: &head)
                        var trailers: [UInt8] = []
                        encoder.encode([HPACKHeader("grpc-status", "0")], into: &trailers)
                        let framed = GRPCMessageFramer.frame(LookUpUsernameHashResponse(uuid: String(size)).serializedBytes())
                        var answer: [UInt8] = []
                        HTTP2FrameEncoder.write(HTTP2Frame(streamID: frame.streamID, payload: .headers(fragment: head[...], endStream: false, endHeaders: true)), into: &answer)
                        HTTP2FrameEncoder.write(HTTP2Frame(streamID: frame.streamID, payload: .data(framed[...], endStream: false, flowControlledLength: framed.count)), into: &answer)
                        HTTP2FrameEncoder.write(HTTP2Frame(streamID: frame.streamID, payload: .headers(fragment: trailers[...], endStream: true, endHeaders: true)), into: &answer)
                        write(answer)
                        answered.withLock { $0 += 1 }
                    default:
                        break
                    }
                }
            }
        }

        func close() { listener.close() }
    }

    /// A transport to `server` that lets at most 256 KiB wait for the server's windows.
    static func transport(to server: SlowWindowServer) -> GRPCClientTransport<Unauthenticated> {
        var options = GRPCClientOptions()
        options.http2.protocolConfiguration.maxPendingConnectionBytes = 256 << 10
        return GRPCClientTransport<Unauthenticated>(host: "127.0.0.1", port: server.listener.port, options: options)
    }

    @Test func aLargeRequestBeyondTheBacklogWaitsItsTurn() async throws {
        let server = try SlowWindowServer()
        defer { server.close() }
        let transport = Self.transport(to: server)
        defer { transport.close() }
        let client = UsernamesClient(transport: transport)
        func call(_ size: Int) async -> String {
            let result = await client.lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data(repeating: 1, count: size)), options: CallOptions(timeout: .seconds(20)))
            return result.value.map(\.uuid) ?? "failed: \(result)"
        }
        // The first waits for window; the second, started while it does, would take the bytes
        // waiting past 256 KiB, so it waits for them to drain before its stream opens.
        async let first = call(300_000)
        #expect(await eventually { server.headersSeen.current == 1 })
        async let second = call(300_001)
        let answers = await [first, second]
        #expect(answers == ["300000", "300001"])
        #expect(transport.connectionsOpened == 1)
    }

    @Test func aCallGivenUpWhileWaitingForTheBacklogLetsTheNextOpenAtOnce() async throws {
        let windowsOpen = Locked(false)
        let server = try SlowWindowServer { windowsOpen.current }
        defer { server.close() }
        let transport = Self.transport(to: server)
        defer { transport.close() }
        let client = UsernamesClient(transport: transport)
        func call(_ size: Int, timeout: Duration) async -> String {
            let result = await client.lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data(repeating: 1, count: size)), options: CallOptions(timeout: timeout))
            return result.value.map(\.uuid) ?? "failed"
        }
        // Answered within the 16-byte window: the server's SETTINGS are in force from here on.
        #expect(await call(4, timeout: .seconds(20)) == "4")
        // 200 kB wait for window; 100 kB more would pass 256 KiB, so the second waits to open,
        // and the third, whose 11 bytes fit the window, waits behind it.
        async let first = call(200_000, timeout: .seconds(20))
        #expect(await eventually { server.headersSeen.current == 2 })
        async let second = call(100_000, timeout: .seconds(2))
        #expect(await eventually { transport.streamsInUse == 2 })
        async let third = call(4, timeout: .seconds(20))
        #expect(await eventually { transport.streamsInUse == 3 })
        // Once the second gives up, the third opens and is answered while no window has moved.
        #expect(await second == "failed")
        // (Well before the unanswered liveness PING ends the connection, 10 s after the deadline.)
        #expect(await eventually(within: .seconds(5)) { server.answered.current == 2 })
        #expect(await third == "4")
        #expect(server.headersSeen.current == 3)
        windowsOpen.withLock { $0 = true }
        #expect(await first == "200000")
        #expect(transport.connectionsOpened == 1)
    }
}
