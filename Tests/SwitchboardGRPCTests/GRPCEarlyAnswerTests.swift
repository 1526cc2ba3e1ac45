import Foundation
import PeerSupport
import SignalChat
@testable import SwitchboardGRPC
@testable import SwitchboardHTTP2
import SwitchboardIO
import SwitchboardRuntime
import Testing

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
            Thread.detachNewThread { [self] in
                while let socket = listener.accept() {
                    Thread.detachNewThread { [self] in serve(socket) }
                }
            }
        }

        private func serve(_ socket: TCPSocket) {
            defer { socket.close() }
            var hello: [UInt8] = []
            HTTP2FrameEncoder.write(HTTP2Frame(streamID: 0, payload: .settings([HTTP2Setting(.maxConcurrentStreams, 1), HTTP2Setting(.initialWindowSize, 16)], ack: false)),
                                    into: &hello)
            HTTP2FrameEncoder.write(HTTP2Frame(streamID: 0, payload: .settings([], ack: true)), into: &hello)
            try? socket.write(hello)
            try? socket.setReadDeadline(.now + .seconds(30))
            var decoder = HTTP2FrameDecoder(maxFrameSize: HTTP2FrameLimits.maximumMaxFrameSize, expectsPreface: true)
            var encoder = HPACKEncoder()
            while let read = try? socket.read(maximum: 65_536), !read.isEmpty {
                decoder.append(read)
                while let frame = try? decoder.nextFrame() {
                    switch frame.payload {
                    case .headers:
                        answered.withLock { $0.append(frame.streamID) }
                        var block: [UInt8] = []
                        encoder.encode([HPACKHeader(":status", "200"), HPACKHeader("content-type", "application/grpc"),
                                        HPACKHeader("grpc-status", "16"), HPACKHeader("grpc-message", "no")], into: &block)
                        var bytes: [UInt8] = []
                        HTTP2FrameEncoder.write(HTTP2Frame(streamID: frame.streamID, payload: .headers(fragment: block[...], endStream: true, endHeaders: true)),
                                                into: &bytes)
                        try? socket.write(bytes)
                    case let .rstStream(code):
                        resets.withLock { $0[frame.streamID] = code }
                    default:
                        continue
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
    /// Gives each stream a 16-byte window; 300 ms after the first request's HEADERS it opens
    /// every window wide, then answers each request, once whole, with its size as the uuid.
    final class SlowWindowServer: @unchecked Sendable {
        let listener: TCPListener
        let headersSeen = Locked(0)

        init() throws {
            listener = try TCPListener()
            Thread.detachNewThread { [self] in
                while let socket = listener.accept() {
                    Thread.detachNewThread { [self] in serve(socket) }
                }
            }
        }

        private func serve(_ socket: TCPSocket) {
            defer { socket.close() }
            var hello: [UInt8] = []
            HTTP2FrameEncoder.write(HTTP2Frame(streamID: 0, payload: .settings([HTTP2Setting(.initialWindowSize, 16)], ack: false)), into: &hello)
            HTTP2FrameEncoder.write(HTTP2Frame(streamID: 0, payload: .settings([], ack: true)), into: &hello)
            try? socket.write(hello)
            try? socket.setReadDeadline(.now + .seconds(30))
            var decoder = HTTP2FrameDecoder(maxFrameSize: HTTP2FrameLimits.maximumMaxFrameSize, expectsPreface: true)
            var encoder = HPACKEncoder()
            var received: [UInt32: [UInt8]] = [:]
            var opened = false
            while let read = try? socket.read(maximum: 65_536), !read.isEmpty {
                decoder.append(read)
                while let frame = try? decoder.nextFrame() {
                    switch frame.payload {
                    case .headers:
                        headersSeen.withLock { $0 += 1 }
                        received[frame.streamID] = []
                        guard !opened else { continue }
                        opened = true
                        Thread.sleep(forTimeInterval: 0.3)
                        var wide: [UInt8] = []
                        HTTP2FrameEncoder.write(HTTP2Frame(streamID: 0, payload: .settings([HTTP2Setting(.initialWindowSize, 1 << 30)], ack: false)), into: &wide)
                        HTTP2FrameEncoder.write(HTTP2Frame(streamID: 0, payload: .windowUpdate(increment: 1 << 30)), into: &wide)
                        try? socket.write(wide)
                    case let .data(bytes, endStream, _):
                        received[frame.streamID, default: []] += bytes
                        guard endStream else { continue }
                        let request = try? LookUpUsernameHashRequest(serializedBytes: Array((received[frame.streamID] ?? []).dropFirst(5)))
                        let size = request?.hash.count ?? -1
                        var head: [UInt8] = []
                        encoder.encode([HPACKHeader(":status", "200"), HPACKHeader("content-type", "application/grpc")], into: &head)
                        var trailers: [UInt8] = []
                        encoder.encode([HPACKHeader("grpc-status", "0")], into: &trailers)
                        let message = LookUpUsernameHashResponse(uuid: String(size)).serializedBytes()
                        let framed = GRPCMessageFramer.frame(message)
                        var bytes: [UInt8] = []
                        HTTP2FrameEncoder.write(HTTP2Frame(streamID: frame.streamID, payload: .headers(fragment: head[...], endStream: false, endHeaders: true)), into: &bytes)
                        HTTP2FrameEncoder.write(HTTP2Frame(streamID: frame.streamID, payload: .data(framed[...], endStream: false, flowControlledLength: framed.count)), into: &bytes)
                        HTTP2FrameEncoder.write(HTTP2Frame(streamID: frame.streamID, payload: .headers(fragment: trailers[...], endStream: true, endHeaders: true)), into: &bytes)
                        try? socket.write(bytes)
                    default:
                        continue
                    }
                }
            }
        }

        func close() { listener.close() }
    }

    @Test func aLargeRequestBeyondTheBacklogWaitsItsTurn() async throws {
        let server = try SlowWindowServer()
        defer { server.close() }
        var options = GRPCClientOptions()
        options.http2.protocolConfiguration.maxPendingConnectionBytes = 256 << 10
        let transport = GRPCClientTransport<Unauthenticated>(host: "127.0.0.1", port: server.listener.port, options: options)
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
}
