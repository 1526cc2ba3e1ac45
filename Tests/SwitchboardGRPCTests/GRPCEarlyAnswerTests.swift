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
        #expect(server.resets.current.values.allSatisfy { $0 == .noError }, "\(server.resets.current)")
        #expect(transport.connectionsOpened == 1)
    }
}
