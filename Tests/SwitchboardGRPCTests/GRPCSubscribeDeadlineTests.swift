import Foundation
import SignalChat
@testable import SwitchboardGRPC
@testable import SwitchboardHTTP2
import SwitchboardIO
import SwitchboardRuntime
import Testing

/// Subscribing waits for the server's answer no longer than the transport's request timeout,
/// and no longer than the caller wants: a server that takes the stream and never answers
/// cannot hold `subscribe(toEventsOf:)` for ever.
@Suite(.timeLimit(.minutes(2)))
struct GRPCSubscribeDeadlineTests {
    /// Speaks HTTP/2 (SETTINGS and their acknowledgement) and never answers a stream.
    static func silentServer() throws -> TCPListener {
        let listener = try TCPListener()
        Thread.detachNewThread {
            guard let socket = listener.accept() else { return }
            defer { socket.close() }
            var bytes: [UInt8] = []
            HTTP2FrameEncoder.write(HTTP2Frame(streamID: 0, payload: .settings([], ack: false)), into: &bytes)
            HTTP2FrameEncoder.write(HTTP2Frame(streamID: 0, payload: .settings([], ack: true)), into: &bytes)
            try? socket.write(bytes)
            while let read = try? socket.read(maximum: 65_536), !read.isEmpty {}
        }
        return listener
    }

    @Test func aSubscriptionTheServerNeverAnswersTimesOut() async throws {
        let listener = try Self.silentServer()
        defer { listener.close() }
        var options = GRPCClientOptions()
        options.defaultRequestTimeout = .milliseconds(500)
        let transport = GRPCClientTransport<Authenticated>(host: "127.0.0.1", port: listener.port, options: options)
        defer { transport.close() }
        let started = ContinuousClock.now
        do throws(TransportError) {
            _ = try await transport.subscribe(toEventsOf: "signal.chat.Messages") { _ in .withhold(reason: "test") }
            Issue.record("a subscription nobody answered must not open")
        } catch {
            #expect(error == .timeout)
        }
        #expect(ContinuousClock.now - started < .seconds(20))
    }

    @Test func aCancelledSubscribeReturnsAtOnce() async throws {
        let listener = try Self.silentServer()
        defer { listener.close() }
        let transport = GRPCClientTransport<Authenticated>(host: "127.0.0.1", port: listener.port)
        defer { transport.close() }
        let attempt = Task { () -> TransportError? in
            do throws(TransportError) {
                _ = try await transport.subscribe(toEventsOf: "signal.chat.Messages") { _ in .withhold(reason: "test") }
                return nil
            } catch {
                return error
            }
        }
        try await Task.sleep(for: .milliseconds(200))
        let started = ContinuousClock.now
        attempt.cancel()
        #expect(await attempt.value == .cancelled)
        #expect(ContinuousClock.now - started < .seconds(10), "the default request timeout is 30 s")
    }
}
