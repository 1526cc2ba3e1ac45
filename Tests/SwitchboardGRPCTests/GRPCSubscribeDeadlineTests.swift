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
    /// A server's empty SETTINGS and its acknowledgement of the client's.
    static var settingsAndAcknowledgement: [UInt8] {
        var bytes: [UInt8] = []
        HTTP2FrameEncoder.write(HTTP2Frame(streamID: 0, payload: .settings([], ack: false)), into: &bytes)
        HTTP2FrameEncoder.write(HTTP2Frame(streamID: 0, payload: .settings([], ack: true)), into: &bytes)
        return bytes
    }

    /// Speaks HTTP/2 (SETTINGS and their acknowledgement) and never answers a stream.
    static func silentServer() throws -> TCPListener {
        let listener = try TCPListener()
        Thread.detachNewThread {
            guard let socket = listener.accept() else { return }
            defer { socket.close() }
            try? socket.write(Self.settingsAndAcknowledgement)
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

    /// Answers the client's first stream with `headers` (ending it if `endStream`).
    static func answeringServer(_ headers: [HPACKHeader], endStream: Bool) throws -> TCPListener {
        let listener = try TCPListener()
        Thread.detachNewThread {
            guard let socket = listener.accept() else { return }
            defer { socket.close() }
            try? socket.write(Self.settingsAndAcknowledgement)
            // Read until the stream's HEADERS have come (frame by frame after the preface):
            // answering earlier would be HEADERS on a stream the client has not opened yet,
            // which a loaded machine made happen now and then.
            var received: [UInt8] = []
            func sawStreamOneHeaders() -> Bool {
                var offset = 24
                while offset + 9 <= received.count {
                    let length = Int(received[offset]) << 16 | Int(received[offset + 1]) << 8 | Int(received[offset + 2])
                    if received[offset + 3] == 0x01, received[(offset + 5)..<(offset + 9)].elementsEqual([0, 0, 0, 1]) { return true }
                    offset += 9 + length
                }
                return false
            }
            let deadline = Date().addingTimeInterval(10)
            while !sawStreamOneHeaders(), Date() < deadline, let read = try? socket.read(maximum: 65_536), !read.isEmpty { received += read }
            var encoder = HPACKEncoder()
            var block: [UInt8] = []
            encoder.encode(headers, into: &block)
            var answer: [UInt8] = []
            HTTP2FrameEncoder.write(HTTP2Frame(streamID: 1, payload: .headers(fragment: block[...], endStream: endStream, endHeaders: true)), into: &answer)
            try? socket.write(answer)
            while let read = try? socket.read(maximum: 65_536), !read.isEmpty {}
        }
        return listener
    }

    /// A subscription the server refuses as it opens fails with the server's answer: a gRPC
    /// status is `grpcStatus` (UNAUTHENTICATED is not a dropped connection to retry), an HTTP
    /// error or a content type that is not gRPC is `unexpectedResponse` (from the client
    /// review: all of them were `disconnected`, or opened a subscription that ended at once).
    @Test func aSubscriptionRefusedAsItOpensFailsWithTheServersAnswer() async throws {
        let cases: [([HPACKHeader], Bool, (TransportError) -> Bool)] = [
            ([HPACKHeader(":status", "200"), HPACKHeader("content-type", "application/grpc"), HPACKHeader("grpc-status", "16"),
              HPACKHeader("grpc-message", "who%20are%20you")], true,
             { if case .grpcStatus(16, "who are you", _) = $0 { true } else { false } }),
            ([HPACKHeader(":status", "503"), HPACKHeader("content-type", "text/html")], false,
             { if case .unexpectedResponse = $0 { true } else { false } }),
            ([HPACKHeader(":status", "200"), HPACKHeader("content-type", "text/html")], false,
             { if case .unexpectedResponse = $0 { true } else { false } }),
        ]
        for (headers, endStream, expected) in cases {
            let listener = try Self.answeringServer(headers, endStream: endStream)
            defer { listener.close() }
            let transport = GRPCClientTransport<Authenticated>(host: "127.0.0.1", port: listener.port)
            defer { transport.close() }
            do throws(TransportError) {
                _ = try await transport.subscribe(toEventsOf: "signal.chat.Messages") { _ in .withhold(reason: "test") }
                Issue.record("\(headers) must refuse the subscription")
            } catch {
                #expect(expected(error), "\(headers) -> \(error)")
            }
        }
    }
}
