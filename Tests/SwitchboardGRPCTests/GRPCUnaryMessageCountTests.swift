import Foundation
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

/// A unary call carries one message each way. A peer that sends more is answered at once,
/// not buffered until it ends its stream (which it might never do).
@Suite(.timeLimit(.minutes(3)))
struct GRPCUnaryMessageCountTests {
    @Test func aSecondRequestMessageIsAnsweredAtOnce() async throws {
        let server = try GRPCServer(router: RPCRouter(routes: SampleHandlers().allRoutes))
        defer { Task { await server.shutdown(timeout: .seconds(1)) } }
        var encoder = HPACKEncoder()
        var bytes = HTTP2ConnectionPreface.bytes
        HTTP2FrameEncoder.write(HTTP2Frame(streamID: 0, payload: .settings([], ack: false)), into: &bytes)
        bytes += GRPCHostilePeerTests.request(1, encoder: &encoder)
        // Two empty messages in one DATA frame, and the stream left open.
        let messages: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
        bytes += GRPCHostilePeerTests.frame(1, .data(messages[...], endStream: false, flowControlledLength: messages.count))
        let port = server.port, request = bytes
        let trailers = await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: Self.trailers(port: port, sending: request)) }
        }
        #expect(trailers?.first { $0.name == "grpc-status" }?.value == "13", "\(String(describing: trailers))")
    }

    @Test func aSecondResponseMessageFailsTheCallAtOnce() async throws {
        let listener = try TCPListener()
        defer { listener.close() }
        // A server that answers stream 1 with two messages and never ends the stream.
        Thread.detachNewThread {
            guard let socket = listener.accept() else { return }
            defer { socket.close() }
            // Answer only once the call's stream is open.
            var frames = HTTP2FrameDecoder(maxFrameSize: HTTP2FrameLimits.maximumMaxFrameSize, expectsPreface: true)
            var opened = false
            while !opened, let bytes = try? socket.read(maximum: 65_536), !bytes.isEmpty {
                frames.append(bytes)
                while let frame = try? frames.nextFrame() {
                    if frame.streamID == 1, case .headers = frame.payload { opened = true }
                }
            }
            var encoder = HPACKEncoder()
            var block: [UInt8] = []
            encoder.encode([HPACKHeader(":status", "200"), HPACKHeader("content-type", "application/grpc")], into: &block)
            var bytes: [UInt8] = []
            HTTP2FrameEncoder.write(HTTP2Frame(streamID: 0, payload: .settings([], ack: false)), into: &bytes)
            HTTP2FrameEncoder.write(HTTP2Frame(streamID: 0, payload: .settings([], ack: true)), into: &bytes)
            HTTP2FrameEncoder.write(HTTP2Frame(streamID: 1, payload: .headers(fragment: block[...], endStream: false, endHeaders: true)), into: &bytes)
            let messages: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
            HTTP2FrameEncoder.write(HTTP2Frame(streamID: 1, payload: .data(messages[...], endStream: false, flowControlledLength: messages.count)), into: &bytes)
            try? socket.write(bytes)
            // Hold the connection open well past the test's expectations.
            _ = try? socket.read(maximum: 65_536)
        }
        let transport = GRPCClientTransport<Unauthenticated>(host: "127.0.0.1", port: listener.port)
        defer { transport.close() }
        let started = ContinuousClock.now
        let result = await UsernamesClient(transport: transport).lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([1])), options: CallOptions(timeout: .seconds(60)))
        #expect(ContinuousClock.now - started < .seconds(30), "it failed at once, not at the deadline")
        guard case let .grpcStatus(code, _, _)? = result.transportError else {
            Issue.record("expected a gRPC status, got \(result)")
            return
        }
        #expect(code == GRPCStatusCode.internal.rawValue)
    }

    /// Sends `bytes`, then reads (5 s at most) until stream 1 ends with a header block, and
    /// returns that block's fields.
    static func trailers(port: Int, sending bytes: [UInt8]) -> [HPACKHeader]? {
        guard let fd = GRPCHostilePeerTests.connectedSocket(port: port, receiveBuffer: nil) else { return nil }
        defer { _ = close(fd) }
        let sent = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        guard sent == bytes.count else { return nil }
        var frames = HTTP2FrameDecoder(maxFrameSize: HTTP2FrameLimits.maximumMaxFrameSize, expectsPreface: false)
        var headers = HPACKDecoder()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline {
            var ready = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&ready, 1, 200) > 0 else { continue }
            let count = recv(fd, &buffer, buffer.count, 0)
            guard count > 0 else { return nil }
            frames.append(Array(buffer[0..<count]))
            while let frame = try? frames.nextFrame() {
                guard case let .headers(fragment, endStream, _) = frame.payload else { continue }
                guard let block = try? headers.decode(fragment) else { return nil }
                if frame.streamID == 1, endStream { return block.headers }
            }
        }
        return nil
    }
}
