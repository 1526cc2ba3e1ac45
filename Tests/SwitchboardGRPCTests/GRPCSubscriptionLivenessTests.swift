import Foundation
import PeerSupport
@testable import SwitchboardGRPC
@testable import SwitchboardHTTP2
import SwitchboardRuntime
import Testing

/// An open event subscription that hears nothing for `subscriptionLivenessInterval` has the
/// connection PING the server, so a half-open connection ends it instead of holding it silent
/// for ever (keepalive is off by default, as in grpc-swift); pushes arriving make the PING
/// unnecessary.
@Suite(.timeLimit(.minutes(2)))
struct GRPCSubscriptionLivenessTests {
    static func options(interval: Duration) -> GRPCClientOptions {
        var options = GRPCClientOptions()
        options.subscriptionLivenessInterval = interval
        options.http2.keepaliveTimeout = .milliseconds(300)
        options.http2.minimumPingIntervalWithoutData = .milliseconds(100)
        return options
    }

    @Test func theDefaultAsksAfterFiveQuietMinutes() {
        #expect(GRPCClientOptions().subscriptionLivenessInterval == .seconds(330))
        #expect(GRPCClientOptions().http2.keepaliveInterval == nil)
    }

    @Test func aSubscriptionToAServerThatWentSilentEnds() async throws {
        // Opens the subscription, then reads on and answers nothing, PINGs included.
        let server = try RawHTTP2Server { connection, _ in
            connection.greet()
            guard let headers = connection.read(for: .seconds(10), until: { $0.type == .headers }) else { return }
            connection.send(RawHTTP2Connection.responseHeaders(headers.frame.streamID))
            connection.read(for: .seconds(20))
        }
        defer { server.stop() }
        let transport = GRPCClientTransport<Authenticated>(host: "127.0.0.1", port: server.port, options: Self.options(interval: .milliseconds(200)))
        defer { transport.close() }
        let subscription = try await transport.subscribe(toEventsOf: "signal.chat.Messages") { _ in .withhold(reason: "test") }
        let started = ContinuousClock.now
        let reason = await subscription.ended
        #expect(reason.contains("without a push unanswered"), "\(reason)")
        #expect(ContinuousClock.now - started < .seconds(10), "the server read for 20 s")
    }

    @Test func aLiveServerIsAskedOnlyWhileItSendsNothing() async throws {
        let pingsWhilePushing = Locked(0)
        let pingsAnswered = Locked(0)
        let server = try RawHTTP2Server { connection, _ in
            connection.greet()
            guard let headers = connection.read(for: .seconds(10), until: { $0.type == .headers }) else { return }
            let stream = headers.frame.streamID
            connection.send(RawHTTP2Connection.responseHeaders(stream))
            func push(_ id: UInt64) {
                let message = GRPCMessageFramer.frame(GRPCPush(id: id, request: ServerRequest(verb: "PUT", path: "/api/v1/queue/empty")).serializedBytes())
                connection.send(stream, .data(message[...], endStream: false, flowControlledLength: message.count))
            }
            // Pushes every 50 ms for a second, against a 200 ms interval: no PING is needed.
            for id in 1...20 {
                push(UInt64(id))
                if connection.read(for: .milliseconds(50), until: \.isPingRequest) != nil { pingsWhilePushing.withLock { $0 += 1 } }
            }
            // Then quiet, answering PINGs, until two came; a last push shows the subscription lived on.
            while pingsAnswered.current < 2, let ping = connection.read(for: .seconds(5), until: \.isPingRequest),
                  case let .ping(opaque, _) = ping.frame.payload {
                connection.send(0, .ping(opaque, ack: true))
                pingsAnswered.withLock { $0 += 1 }
            }
            push(21)
            connection.read(for: .seconds(5))
        }
        defer { server.stop() }
        let transport = GRPCClientTransport<Authenticated>(host: "127.0.0.1", port: server.port, options: Self.options(interval: .milliseconds(200)))
        defer { transport.close() }
        let received = Locked(0)
        let subscription = try await transport.subscribe(toEventsOf: "signal.chat.Messages") { _ in
            received.withLock { $0 += 1 }
            return .withhold(reason: "test")
        }
        defer { subscription.cancel() }
        #expect(await eventually(within: .seconds(15)) { received.current == 21 }, "\(received.current) pushes")
        #expect(pingsWhilePushing.current == 0)
        #expect(pingsAnswered.current == 2)
        #expect(transport.connectionsOpened == 1)
    }
}
