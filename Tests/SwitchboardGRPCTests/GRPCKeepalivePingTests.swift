import Foundation
import PeerSupport
import SignalChat
@testable import SwitchboardGRPC
@testable import SwitchboardHTTP2
import SwitchboardIO
import SwitchboardRuntime
import Testing

/// How often the client PINGs, seen from a raw server's side of the socket: a GOAWAY
/// `too_many_pings` (gRFC A8) doubles the keepalive interval for the next connection, and a
/// call reaching its deadline PINGs again without data between only once
/// `minimumPingIntervalWithoutData` has passed.
@Suite(.timeLimit(.minutes(2)))
struct GRPCKeepalivePingTests {
    @Test func tooManyPingsDoublesTheKeepaliveIntervalOfTheNextConnection() async throws {
        let interval = Duration.milliseconds(250)
        // When each connection's PINGs arrived.
        let pings = Locked<[Int: [ContinuousClock.Instant]]>([:])
        let server = try RawHTTP2Server(connections: 2) { connection, index in
            connection.greet()
            // The call's HEADERS: its stream is open, so keepalive PINGs go out.
            guard connection.read(for: .seconds(10), until: { $0.type == .headers }) != nil else { return }
            if index == 0 {
                // The first keepalive PING is one too many: GOAWAY, processing no stream.
                guard let ping = connection.read(for: .seconds(10), until: \.isPingRequest) else { return }
                pings.withLock { $0[0, default: []].append(ping.at) }
                connection.send(0, .goAway(lastStreamID: 0, code: .enhanceYourCalm, debugData: Array("too_many_pings".utf8)))
                // The client closes once nothing is left on it.
                connection.read(for: .seconds(5))
            } else {
                // Four PINGs, each answered, then the connection closes (ending the call).
                for _ in 0..<4 {
                    guard let ping = connection.read(for: .seconds(10), until: \.isPingRequest),
                          case let .ping(opaque, _) = ping.frame.payload else { return }
                    pings.withLock { $0[1, default: []].append(ping.at) }
                    connection.send(0, .ping(opaque, ack: true))
                }
            }
        }
        defer { server.stop() }
        var options = GRPCClientOptions()
        options.http2.keepaliveInterval = interval
        let transport = GRPCClientTransport<Unauthenticated>(host: "127.0.0.1", port: server.port, options: options)
        defer { transport.close() }
        let started = ContinuousClock.now
        // Left unprocessed by the GOAWAY, the call goes once more, on a second connection,
        // which the server closes after four PINGs.
        let result = await UsernamesClient(transport: transport).lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([1])),
                                                                                     options: CallOptions(timeout: .seconds(30)))
        let took = ContinuousClock.now - started
        guard case .disconnected? = result.transportError else {
            Issue.record("expected the second connection's end to fail the call, got \(result)")
            return
        }
        #expect(took < .seconds(10), "\(took)")
        #expect(transport.connectionsOpened == 2, "the call went to a new connection after the GOAWAY")
        #expect(server.acceptedCount == 2)
        let recorded = pings.current
        #expect(recorded[0]?.count == 1)
        let second = recorded[1] ?? []
        try #require(second.count == 4, "PINGs on the second connection: \(second.count)")
        // Configured 250 ms, doubled to 500 ms: an average over three gaps, which a late first
        // PING can shorten by a third of its lateness at most. 400 ms is far above 250 ms.
        let average = (second[3] - second[0]) / 3
        #expect(average >= .milliseconds(400), "PINGs every \(average) after too_many_pings, with \(interval) configured")
    }

    @Test func aDeadlinePingWithoutDataWaitsForTheMinimumInterval() async throws {
        let minimum = Duration.milliseconds(2500)
        let pingCount = Locked(0)
        // Answers every PING; answers the HEADERS of stream 5 (the third call) with response
        // headers and nothing more, so that call still reaches its deadline, after data.
        let server = try RawHTTP2Server { connection, _ in
            connection.greet()
            while let received = connection.read(for: .seconds(20), until: { $0.isPingRequest || ($0.streamID == 5 && $0.type == .headers) }) {
                if case let .ping(opaque, _) = received.frame.payload {
                    pingCount.withLock { $0 += 1 }
                    connection.send(0, .ping(opaque, ack: true))
                } else {
                    connection.send(RawHTTP2Connection.responseHeaders(5))
                }
            }
        }
        defer { server.stop() }
        var options = GRPCClientOptions()
        options.http2.minimumPingIntervalWithoutData = minimum
        let transport = GRPCClientTransport<Unauthenticated>(host: "127.0.0.1", port: server.port, options: options)
        defer { transport.close() }
        let client = UsernamesClient(transport: transport)
        func call(_ timeout: Duration) async -> TransportError? {
            await client.lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([1])), options: CallOptions(timeout: timeout)).transportError
        }
        // Stream 1: the first deadline PINGs (none went before).
        #expect(await call(.seconds(1)) == .timeout)
        #expect(await eventually(within: .seconds(5)) { pingCount.current == 1 }, "\(pingCount.current) PINGs")
        // Stream 3: nothing from the server since that PING, well within the minimum: no PING.
        #expect(await call(.milliseconds(300)) == .timeout)
        try await Task.sleep(for: .milliseconds(300))
        #expect(pingCount.current == 1, "PINGed again with no data between, within minimumPingIntervalWithoutData")
        // Stream 5: the server sends its response headers, then nothing: the deadline may PING at once.
        #expect(await call(.milliseconds(700)) == .timeout)
        let dataPing = ContinuousClock.now
        #expect(await eventually(within: .seconds(5)) { pingCount.current == 2 }, "no PING after data: \(pingCount.current)")
        // Stream 7: no data since, but the minimum interval has passed.
        try await Task.sleep(until: dataPing.advanced(by: minimum + .milliseconds(300)))
        #expect(await call(.milliseconds(300)) == .timeout)
        #expect(await eventually(within: .seconds(5)) { pingCount.current == 3 }, "no PING after the interval: \(pingCount.current)")
        // Every PING was answered: the connection lived on through all of it.
        #expect(transport.connectionsOpened == 1)
    }
}
