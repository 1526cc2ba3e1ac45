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

/// A connection the server sent a graceful GOAWAY on, replaced by a new one for the next call,
/// lets the calls the server is still answering finish within their own deadlines (found by
/// review: replacing it closed it, and its graceful-close timeout, 5 s by default, ended them).
@Suite(.timeLimit(.minutes(2)))
struct GRPCRetiredConnectionTests {
    /// Answers stream 1 of each connection with `LookUpUsernameHashResponse(uuid:)`: on the
    /// first connection after a GOAWAY that still processes it, `firstDelay` later; on the
    /// second at once.
    final class DrainingServer: @unchecked Sendable {
        let listener: Int32
        let port: Int
        let firstDelay: Duration
        /// Signalled when the accepting thread ends: the listener is closed only after it.
        private let finished = DispatchSemaphore(value: 0)
        private let stopped = Locked(false)

        init(firstDelay: Duration) throws {
            self.firstDelay = firstDelay
            (listener, port) = try loopbackListener()
            Thread.detachNewThread { [self] in
                defer { finished.signal() }
                for index in 0..<2 {
                    guard TestSockets.awaitConnection(on: listener, stopped: { stopped.withLock { $0 } }) else { return }
                    let client = TestSockets.accept(on: listener)
                    guard client >= 0 else { return }
                    Thread.detachNewThread { [self] in
                        serve(client, first: index == 0)
                        _ = close(client)
                    }
                }
            }
        }

        private func write(_ frames: [HTTP2Frame], to client: Int32) {
            var bytes: [UInt8] = []
            for frame in frames { HTTP2FrameEncoder.write(frame, into: &bytes) }
            _ = bytes.withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        }

        private func serve(_ client: Int32, first: Bool) {
            write([HTTP2Frame(streamID: 0, payload: .settings([], ack: false)), HTTP2Frame(streamID: 0, payload: .settings([], ack: true))], to: client)
            var decoder = HTTP2FrameDecoder(maxFrameSize: HTTP2FrameLimits.maximumMaxFrameSize, expectsPreface: true)
            var buffer = [UInt8](repeating: 0, count: 4096)
            var answered = false
            let deadline = Date().addingTimeInterval(20)
            while Date() < deadline {
                var readable = pollfd(fd: client, events: Int16(POLLIN), revents: 0)
                guard poll(&readable, 1, 20) > 0 else { continue }
                let count = recv(client, &buffer, buffer.count, 0)
                if count <= 0 { return }
                decoder.append(Array(buffer[0..<count]))
                while let frame = try? decoder.nextFrame() {
                    guard !answered, frame.streamID == 1, case .data(_, true, _) = frame.payload else { continue }
                    answered = true
                    if first {
                        // Stream 1 is still processed; no new stream will be.
                        write([HTTP2Frame(streamID: 0, payload: .goAway(lastStreamID: 1, code: .noError, debugData: []))], to: client)
                        Thread.sleep(forTimeInterval: Double(firstDelay.components.seconds) + Double(firstDelay.components.attoseconds) / 1e18)
                    }
                    answer(client, uuid: first ? "first" : "second")
                }
            }
        }

        private func answer(_ client: Int32, uuid: String) {
            var encoder = HPACKEncoder()
            var head: [UInt8] = []
            encoder.encode([HPACKHeader(":status", "200"), HPACKHeader("content-type", "application/grpc")], into: &head)
            var trailers: [UInt8] = []
            encoder.encode([HPACKHeader("grpc-status", "0")], into: &trailers)
            let message = LookUpUsernameHashResponse(uuid: uuid).serializedBytes()
            let count = UInt32(message.count)
            let framed: [UInt8] = [0, UInt8(count >> 24), UInt8(count >> 16 & 0xFF), UInt8(count >> 8 & 0xFF), UInt8(count & 0xFF)] + message
            write([HTTP2Frame(streamID: 1, payload: .headers(fragment: head[...], endStream: false, endHeaders: true)),
                   HTTP2Frame(streamID: 1, payload: .data(framed[...], endStream: false, flowControlledLength: framed.count)),
                   HTTP2Frame(streamID: 1, payload: .headers(fragment: trailers[...], endStream: true, endHeaders: true))], to: client)
        }

        /// Stops accepting: wakes the accepting thread, waits for it, closes the listener.
        func stop() {
            stopped.withLock { $0 = true }
            _ = shutdown(listener, Int32(SHUT_RDWR))
            finished.wait()
            _ = close(listener)
        }
    }

    @Test func aCallOnAConnectionThatWentAwayFinishesAfterANewOneReplacesIt() async throws {
        let server = try DrainingServer(firstDelay: .milliseconds(1500))
        defer { server.stop() }
        var options = GRPCClientOptions()
        // Far shorter than the first call's wait: closing the old connection would end it.
        options.http2.gracefulCloseTimeout = .milliseconds(200)
        let transport = GRPCClientTransport<Unauthenticated>(host: "127.0.0.1", port: server.port, options: options)
        defer { transport.close() }
        let client = UsernamesClient(transport: transport)
        let patient = CallOptions(timeout: .seconds(30))
        let first = Task { await client.lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([1])), options: patient) }
        // Once the GOAWAY is in, the next call needs a new connection.
        #expect(await eventually(within: .seconds(10)) { transport.connectionsOpened == 1 })
        try await Task.sleep(for: .milliseconds(300))
        let second = await client.lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([2])), options: patient)
        #expect(try second.get().uuid == "second")
        #expect(transport.connectionsOpened == 2)
        #expect(try await first.value.get().uuid == "first")
    }
}
