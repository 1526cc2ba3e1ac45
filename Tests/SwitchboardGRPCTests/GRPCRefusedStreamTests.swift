import Foundation
import SignalChat
@testable import SwitchboardGRPC
@testable import SwitchboardHTTP2
import SwitchboardIO
import SwitchboardRuntime
import Testing

/// A stream refused with REFUSED_STREAM was not processed (RFC 9113 section 8.7): the call is
/// sent once more (on the same connection, which stays up), and if that is refused too it
/// fails as going away, as after a GOAWAY, so the app retries it as it would any call the
/// server never took.
@Suite(.timeLimit(.minutes(1)))
struct GRPCRefusedStreamTests {
    /// Speaks HTTP/2 and refuses every stream it is offered, on every connection; counts them.
    /// With `answersFirst`, it sends the response's headers before refusing.
    final class RefusingServer: @unchecked Sendable {
        let listener: TCPListener
        let refused = Locked(0)

        init(answersFirst: Bool = false) throws {
            listener = try TCPListener()
            Thread.detachNewThread { [listener, refused] in
                while let socket = listener.accept() {
                    Thread.detachNewThread { Self.serve(socket, refused: refused, answersFirst: answersFirst) }
                }
            }
        }

        private static func serve(_ socket: TCPSocket, refused: Locked<Int>, answersFirst: Bool) {
            defer { socket.close() }
            try? socket.write(GRPCSubscribeDeadlineTests.settingsAndAcknowledgement)
            var decoder = HTTP2FrameDecoder(maxFrameSize: HTTP2FrameLimits.maximumMaxFrameSize, expectsPreface: true)
            while let read = try? socket.read(maximum: 65_536), !read.isEmpty {
                decoder.append(read)
                while let frame = try? decoder.nextFrame() {
                    guard case .headers = frame.payload else { continue }
                    refused.withLock { $0 += 1 }
                    var bytes: [UInt8] = []
                    if answersFirst {
                        var encoder = HPACKEncoder()
                        var block: [UInt8] = []
                        encoder.encode([HPACKHeader(":status", "200"), HPACKHeader("content-type", "application/grpc")], into: &block)
                        HTTP2FrameEncoder.write(HTTP2Frame(streamID: frame.streamID, payload: .headers(fragment: block[...], endStream: false, endHeaders: true)), into: &bytes)
                    }
                    HTTP2FrameEncoder.write(HTTP2Frame(streamID: frame.streamID, payload: .rstStream(.refusedStream)), into: &bytes)
                    try? socket.write(bytes)
                }
            }
        }

        func close() { listener.close() }
    }

    @Test func aCallRefusedTwiceFailsAsGoingAway() async throws {
        let server = try RefusingServer()
        defer { server.close() }
        let transport = GRPCClientTransport<Unauthenticated>(host: "127.0.0.1", port: server.listener.port)
        defer { transport.close() }
        let result = await UsernamesClient(transport: transport).lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([1])))
        guard case let .disconnected(reason) = result.transportError else {
            Issue.record("expected a disconnection, got \(result)")
            return
        }
        #expect(reason.kind == .goingAway, "\(reason)")
        #expect(server.refused.current == 2, "refused once, sent once more")
        #expect(transport.connectionsOpened == 1, "a refusal leaves the connection up, so it is used again")
    }

    /// A refusal after the response's headers is not a refusal: the server began the call,
    /// so it is not sent again (found by review), and fails as unavailable.
    @Test func aCallRefusedAfterItsHeadersIsNotSentAgain() async throws {
        let server = try RefusingServer(answersFirst: true)
        defer { server.close() }
        let transport = GRPCClientTransport<Unauthenticated>(host: "127.0.0.1", port: server.listener.port)
        defer { transport.close() }
        let result = await UsernamesClient(transport: transport).lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([1])))
        guard case let .grpcStatus(code, message, _)? = result.transportError else {
            Issue.record("expected a gRPC status, got \(result)")
            return
        }
        #expect(code == GRPCStatusCode.unavailable.rawValue, "\(message)")
        #expect(server.refused.current == 1, "sent once")
    }

    @Test func aSubscriptionRefusedTwiceFailsAsGoingAway() async throws {
        let server = try RefusingServer()
        defer { server.close() }
        let transport = GRPCClientTransport<Authenticated>(host: "127.0.0.1", port: server.listener.port)
        defer { transport.close() }
        do throws(TransportError) {
            _ = try await transport.subscribe(toEventsOf: "signal.chat.Messages") { _ in .withhold(reason: "test") }
            Issue.record("a refused subscription must not open")
        } catch {
            guard case let .disconnected(reason) = error else {
                Issue.record("expected a disconnection, got \(error)")
                return
            }
            #expect(reason.kind == .goingAway, "\(reason)")
        }
        #expect(server.refused.current == 2, "refused once, sent once more")
    }
}
