import Foundation
import PeerSupport
import SignalChat
@testable import SwitchboardGRPC
import SwitchboardRuntime
import Testing

/// A schema's events over gRPC: a server-streaming `SwitchboardEvents` per service carries the
/// pushes, in order, to the generated `dispatch`; `SwitchboardAcknowledge` answers each with
/// the status the WebSocket answer would carry, and a withheld push is never acknowledged.
@Suite(.timeLimit(.minutes(3)))
struct GRPCEventTests {
    final class Listener: MessagesEventListener, @unchecked Sendable {
        private let lock = NSLock()
        private(set) var received: [String] = []
        var refuse: Set<String> = []

        func incomingMessage(_ payload: Envelope, context: EventContext) async throws {
            let guid = payload.serverGuid ?? "?"
            if lock.withLock({ refuse.contains(guid) }) { throw CancellationError() }
            lock.withLock { received.append(guid) }
        }

        func queueEmpty(context: EventContext) async throws {
            lock.withLock { received.append("queue empty") }
        }

        var snapshot: [String] { lock.withLock { received } }
    }

    static func push(_ guid: String) throws -> ServerRequest {
        var envelope = Envelope()
        envelope.serverGuid = guid
        envelope.content = Data(guid.utf8)
        return ServerRequest(verb: "PUT", path: "/api/v1/message", headers: ["X-Signal-Timestamp": "1700000000000"],
                             body: try envelope.encodedBody(.protobuf))
    }

    /// A listener that stopped listening does not end the subscriptions that arrive later
    /// (its ended stream refused every one, and each was closed at once).
    @Test func aStoppedListenerDoesNotEndLaterSubscriptions() async throws {
        let server = try GRPCServer(router: RPCRouter(routes: []))
        defer { Task { await server.shutdown(timeout: .seconds(1)) } }
        let stopped = Task { for await _ in server.arrivingSubscribers() {} }
        stopped.cancel()
        _ = await stopped.value
        let arrivals = server.arrivingSubscribers()
        let transport = GRPCClientTransport<Authenticated>(host: "127.0.0.1", port: server.port)
        defer { transport.close() }
        let subscription = try await transport.subscribe(toEventsOf: "signal.chat.Messages") { _ in .withhold(reason: "test") }
        var iterator = arrivals.makeAsyncIterator()
        let subscriber = try #require(await iterator.next())
        try await Task.sleep(for: .milliseconds(100))
        #expect(subscriber.isOpen, "the live listener took it, and it stays open")
        subscription.cancel()
    }

    /// Push interceptors set on the transport's options see each push before its handler,
    /// as a chat connection's do, and can answer for it.
    @Test func pushInterceptorsSeeEveryPush() async throws {
        struct Tagging: PushInterceptor {
            let seen: Locked<[String]>
            func intercept(_ push: ServerRequest, next: @Sendable (ServerRequest) async -> EventOutcome) async -> EventOutcome {
                seen.withLock { $0.append(push.path) }
                if push.path == "/api/v1/answered-by-interceptor" { return .acknowledge(RPCResponse(status: 202, message: "Accepted")) }
                return await next(push)
            }
        }
        let server = try GRPCServer(router: RPCRouter(routes: []))
        let arrivals = server.arrivingSubscribers()
        let seen = Locked<[String]>([])
        var options = GRPCClientOptions()
        options.pushInterceptors = [Tagging(seen: seen)]
        let transport = GRPCClientTransport<Authenticated>(host: "127.0.0.1", port: server.port, options: options)
        let handled = Locked(0)
        let subscription = try await transport.subscribe(toEventsOf: "signal.chat.Messages") { _ in
            handled.withLock { $0 += 1 }
            return .ok
        }
        var iterator = arrivals.makeAsyncIterator()
        let subscriber = try #require(await iterator.next())
        #expect(await subscriber.push(ServerRequest(verb: "PUT", path: "/api/v1/message")) == 200)
        #expect(await subscriber.push(ServerRequest(verb: "PUT", path: "/api/v1/answered-by-interceptor")) == 202)
        #expect(seen.withLock { $0 } == ["/api/v1/message", "/api/v1/answered-by-interceptor"])
        #expect(handled.withLock { $0 } == 1)
        subscription.cancel()
        transport.close()
        await server.shutdown(timeout: .seconds(1))
    }

    @Test func pushesArriveInOrderAndAreAcknowledged() async throws {
        let server = try GRPCServer(router: RPCRouter(routes: []))
        let arrivals = server.arrivingSubscribers()
        let transport = GRPCClientTransport<Authenticated>(host: "127.0.0.1", port: server.port)
        let listener = Listener()
        listener.refuse = ["g-refused"]
        let subscription = try await transport.subscribe(toEventsOf: "signal.chat.Messages") { request in
            await Messages.dispatch(request, to: listener)
        }
        var iterator = arrivals.makeAsyncIterator()
        let subscriber = try #require(await iterator.next())
        #expect(subscriber.service == "signal.chat.Messages")
        var statuses: [Int?] = []
        for guid in ["g-1", "g-2", "g-3"] { statuses.append(await subscriber.push(try Self.push(guid))) }
        // A listener that throws answers 500: not 2xx, so the server keeps it for redelivery.
        statuses.append(await subscriber.push(try Self.push("g-refused"), timeout: .seconds(10)))
        statuses.append(await subscriber.push(ServerRequest(verb: "PUT", path: "/api/v1/queue/empty")))
        // A push nobody listens to is answered 404, as over the WebSocket.
        statuses.append(await subscriber.push(ServerRequest(verb: "PUT", path: "/api/v1/unknown")))
        #expect(statuses == [200, 200, 200, 500, 200, 404])
        #expect(listener.snapshot == ["g-1", "g-2", "g-3", "queue empty"])
        // Server-side end: the client hears it.
        subscriber.finish()
        #expect(await subscription.ended == "the server ended the subscription")
        _ = await eventually(within: .seconds(60)) { !subscriber.isOpen }
        #expect(!subscriber.isOpen)
        transport.close()
        await server.shutdown()
    }

    /// Holds each push until opened, so a test can act while the push is in hand.
    final class GatedListener: MessagesEventListener, @unchecked Sendable {
        let received = Locked(0)
        let open = Locked(false)

        func incomingMessage(_ payload: Envelope, context: EventContext) async throws {
            received.withLock { $0 += 1 }
            for _ in 0..<1000 where !open.current { try await Task.sleep(for: .milliseconds(10)) }
        }

        func queueEmpty(context: EventContext) async throws {}
    }

    /// Pushes waiting for a busy handler are bounded in bytes as well as in count (from the
    /// client review: 256 pushes of 4 MiB each could queue); past it they are dropped
    /// unacknowledged, for the server to send again.
    @Test func pushesQueuedForABusyHandlerAreBoundedInBytes() async throws {
        let server = try GRPCServer(router: RPCRouter(routes: []))
        let arrivals = server.arrivingSubscribers()
        var options = GRPCClientOptions()
        options.maximumQueuedPushBytes = 50_000
        let transport = GRPCClientTransport<Authenticated>(host: "127.0.0.1", port: server.port, options: options)
        let release = Locked(false)
        let entered = Locked(false)
        let handled = Locked(0)
        let subscription = try await transport.subscribe(toEventsOf: "signal.chat.Messages") { _ in
            entered.withLock { $0 = true }
            while !release.current { try? await Task.sleep(for: .milliseconds(10)) }
            handled.withLock { $0 += 1 }
            return .ok
        }
        var iterator = arrivals.makeAsyncIterator()
        let subscriber = try #require(await iterator.next())
        let big = ServerRequest(verb: "PUT", path: "/api/v1/message", body: Data(repeating: 1, count: 20_000))
        // The first is in the handler; two more fit in 50,000 bytes; the other seven do not.
        let first = Task { await subscriber.push(big, timeout: .seconds(60)) }
        #expect(await eventually(within: .seconds(60)) { entered.current }, "the first push reached the handler")
        // Long enough that the two queued ones are answered after the release even on a
        // loaded machine (3 s once timed them out under the full parallel run).
        let rest = (0..<9).map { _ in Task { await subscriber.push(big, timeout: .seconds(12)) } }
        // All nine reach the client (queued or dropped) before the handler is released.
        try await Task.sleep(for: .seconds(3))
        release.withLock { $0 = true }
        var statuses = [await first.value]
        for push in rest { statuses.append(await push.value) }
        #expect(statuses.filter { $0 == 200 }.count == 3, "\(statuses)")
        #expect(statuses.filter { $0 == nil }.count == 7, "dropped pushes are not acknowledged: \(statuses)")
        #expect(handled.current == 3)
        #expect(GRPCClientOptions().maximumQueuedPushBytes == 16 << 20, "the documented default")
        subscription.cancel()
        await server.shutdown(timeout: .seconds(1))
    }

    @Test func onlyTheSubscribersConnectionMayAcknowledgeItsPushes() async throws {
        let server = try GRPCServer(router: RPCRouter(routes: []))
        let arrivals = server.arrivingSubscribers()
        let transport = GRPCClientTransport<Authenticated>(host: "127.0.0.1", port: server.port)
        let listener = GatedListener()
        let subscription = try await transport.subscribe(toEventsOf: "signal.chat.Messages") { request in
            await Messages.dispatch(request, to: listener)
        }
        var iterator = arrivals.makeAsyncIterator()
        let subscriber = try #require(await iterator.next())
        let status = Task { await subscriber.push(try Self.push("g-1"), timeout: .seconds(60)) }
        for _ in 0..<500 where listener.received.current == 0 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(listener.received.current == 1)
        // Another client guesses the push's id (the server's first) and acknowledges it.
        let other = GRPCClientTransport<Authenticated>(host: "127.0.0.1", port: server.port)
        await other.acknowledge(GRPCPushAcknowledgement(id: 1, status: 299), service: "signal.chat.Messages")
        try await Task.sleep(for: .milliseconds(200))
        listener.open.withLock { $0 = true }
        #expect(try await status.value == 200, "the subscriber's own acknowledgement counts, not the other client's")
        other.close()
        subscription.cancel()
        transport.close()
        await server.shutdown()
    }

    /// A subscription that arrives before the application listens is handed to its first
    /// listener (it was kept by no one: the client waited for pushes that could never come).
    /// Found by review.
    @Test func aSubscriptionBeforeAnyListenerGoesToTheFirstListener() async throws {
        let server = try GRPCServer(router: RPCRouter(routes: []))
        let transport = GRPCClientTransport<Authenticated>(host: "127.0.0.1", port: server.port)
        let handled = Locked<[String]>([])
        let subscription = try await transport.subscribe(toEventsOf: "signal.chat.Messages") { push in
            handled.withLock { $0.append(push.path) }
            return .ok
        }
        var iterator = server.arrivingSubscribers().makeAsyncIterator()
        let subscriber = try #require(await iterator.next())
        #expect(subscriber.isOpen)
        #expect(await subscriber.push(try Self.push("early")) == 200)
        #expect(handled.current == ["/api/v1/message"])
        subscription.cancel()
        transport.close()
        await server.shutdown()
    }

    /// Finishing a subscription twice (the application, then the server's shutdown), or
    /// pushing after finishing, leaves the first OK standing: the client sees the server end
    /// it, not a reset (a second status reset the stream with INTERNAL_ERROR). Found by review.
    @Test func finishingTwiceEndsTheSubscriptionOnceWithOK() async throws {
        let server = try GRPCServer(router: RPCRouter(routes: []))
        let arrivals = server.arrivingSubscribers()
        let transport = GRPCClientTransport<Authenticated>(host: "127.0.0.1", port: server.port)
        let subscription = try await transport.subscribe(toEventsOf: "signal.chat.Messages") { _ in .ok }
        var iterator = arrivals.makeAsyncIterator()
        let subscriber = try #require(await iterator.next())
        subscriber.finish()
        #expect(!subscriber.isOpen)
        #expect(await subscriber.push(try Self.push("late")) == nil)
        subscriber.finish()
        await server.shutdown()
        let reason = await subscription.ended
        #expect(reason == "the server ended the subscription", "\(reason)")
        transport.close()
    }

    @Test func cancellingTheSubscriptionEndsItOnTheServer() async throws {
        let server = try GRPCServer(router: RPCRouter(routes: []))
        let arrivals = server.arrivingSubscribers()
        let transport = GRPCClientTransport<Authenticated>(host: "127.0.0.1", port: server.port)
        let subscription = try await transport.subscribe(toEventsOf: "signal.chat.Messages") { _ in .ok }
        var iterator = arrivals.makeAsyncIterator()
        let subscriber = try #require(await iterator.next())
        subscription.cancel()
        let reason = await subscription.ended
        #expect(reason == "cancelled", "\(reason)")
        _ = await eventually(within: .seconds(60)) { !subscriber.isOpen }
        #expect(!subscriber.isOpen)
        #expect(await subscriber.push(try Self.push("late")) == nil)
        transport.close()
        await server.shutdown()
    }

    /// grpcio's client (grpc_events_peer.py) listening to our server, in the clear and over
    /// TLS: it gets the pushes in order and acknowledges each through `SwitchboardAcknowledge`.
    @Test(arguments: GRPCPeer.Security.allCases)
    func grpcioListensAndAcknowledges(security: GRPCPeer.Security) async throws {
        let options = try await security.serverOptions()
        let server = try GRPCServer(router: RPCRouter(routes: []), options: options)
        let arrivals = server.arrivingSubscribers()
        let directory = try ScratchDirectory.make("grpc-events")
        let proto = directory.appendingPathComponent("signal_chat.proto")
        try GRPCPeer.exportedProto().write(to: proto, atomically: true, encoding: .utf8)
        var arguments = [proto.path, "\(server.port)", "3"]
        if security == .tls { arguments += ["--tls", await TestCertificates.file("ca.pem")] }
        let peer = try PythonPeer(script: "grpc_events_peer.py", arguments: arguments)
        let finished = Task { await peer.finishAsync(timeout: 60) }
        // A peer that exits without subscribing (a handshake it refused) ends the wait for its
        // subscription, which would otherwise last until the suite's time limit.
        let arrival = Task<GRPCEventSubscriber?, Never> {
            var iterator = arrivals.makeAsyncIterator()
            return await iterator.next()
        }
        let watchdog = Task {
            _ = await finished.value
            arrival.cancel()
        }
        guard let subscriber = await arrival.value else {
            let result = await finished.value
            await server.shutdown()
            Issue.record("grpcio did not subscribe (exit \(result.status)): \(result.output)")
            return
        }
        #expect(subscriber.auth == .account, "credentials in the metadata")
        var statuses: [Int?] = []
        for guid in ["p-1", "p-2", "p-3"] { statuses.append(await subscriber.push(try Self.push(guid))) }
        #expect(statuses == [200, 200, 200])
        let result = await finished.value
        _ = await watchdog.value
        await server.shutdown()
        try #require(result.status == 0, "\(result.output)")
        struct Seen: Decodable {
            var path: String
            var guid: String
        }
        let seen = try JSONDecoder().decode([Seen].self, from: Data(result.output.utf8))
        #expect(seen.map(\.guid) == ["p-1", "p-2", "p-3"])
        #expect(seen.allSatisfy { $0.path == "/api/v1/message" })
    }

    /// grpc_peer.py's log line for one `SwitchboardEvents` call, written as the call ends: the
    /// pushes it sent and the acknowledgements it got for them, with grpcio's address for the
    /// connection each came on.
    struct GrpcioSubscription: Decodable {
        struct Pushed: Decodable {
            var id: UInt64
            var guid: String
        }

        struct Acknowledgement: Decodable {
            var id: UInt64
            var status: Int
            var peer: String
        }

        var method: String
        var metadata: [String: String]
        var peer: String
        var pushed: [Pushed]
        var acks: [Acknowledgement]
        var cancelled: Bool
    }

    /// The subscription grpc_peer.py logged with `x-test` metadata `test`, waiting 30 s at most
    /// (the shared peer's log holds every other test's calls too).
    static func grpcioSubscription(_ peer: GRPCPeer, test: String) async -> GrpcioSubscription? {
        var found: GrpcioSubscription?
        _ = await eventually(within: .seconds(30)) {
            let text = (try? String(contentsOf: peer.events, encoding: .utf8)) ?? ""
            found = text.split(separator: "\n").lazy
                .compactMap { try? JSONDecoder().decode(GrpcioSubscription.self, from: Data($0.utf8)) }
                .first { $0.metadata["x-test"] == test }
            return found != nil
        }
        return found
    }

    /// The other direction: our client listening to grpcio's `SwitchboardEvents`
    /// (grpc_peer.py, serving the exported `.proto`), in the clear and over TLS. Its three
    /// scripted pushes reach the generated `dispatch` in order, and grpcio gets exactly one
    /// acknowledgement for each, with the listener's status (500 for the one it throws on), on
    /// the subscription's own connection (our server accepts no other).
    @Test(arguments: GRPCPeer.Security.allCases)
    func ourClientListensToGrpcioAndAcknowledges(security: GRPCPeer.Security) async throws {
        let peer = try await GRPCPeer.shared(security)
        let tag = "events-\(security.rawValue)-\(UUID().uuidString)"
        let test = "events:3:\(tag)"
        // Transport metadata goes with the subscription and every acknowledgement alike.
        let transport: GRPCClientTransport<Authenticated> = try await GRPCInteropTests.transport(
            peer, security, metadata: ["Authorization": "Basic dXNlcjpwYXNz", "x-test": test])
        defer { transport.close() }
        let listener = Listener()
        listener.refuse = ["\(tag)-3"]
        let arrived = Locked<[String]>([])
        let subscription = try await transport.subscribe(toEventsOf: "signal.chat.Messages") { request in
            arrived.withLock { $0.append("\(request.verb) \(request.path) \(request.headers["X-Signal-Timestamp"] ?? "no timestamp")") }
            return await Messages.dispatch(request, to: listener)
        }
        // grpcio ends the stream with OK once every push is acknowledged, or after 30 s.
        let reason = await subscription.ended
        #expect(reason == GRPCEventSubscription.endedByServer, "\(reason)")
        #expect(arrived.current == (1...3).map { "PUT /api/v1/message 170000000000\($0)" })
        #expect(listener.snapshot == ["\(tag)-1", "\(tag)-2"], "the third was refused")
        let logged = await Self.grpcioSubscription(peer, test: test)
        let record = try #require(logged, "grpcio logged no subscription")
        #expect(record.method == "/signal.chat.Messages/SwitchboardEvents")
        #expect(record.metadata["authorization"] == "Basic dXNlcjpwYXNz")
        #expect(!record.cancelled)
        #expect(record.pushed.map(\.guid) == ["\(tag)-1", "\(tag)-2", "\(tag)-3"])
        let ids = record.pushed.map(\.id)
        #expect(Set(ids).count == 3 && ids.allSatisfy { $0 > UInt64(UInt32.max) }, "distinct 64-bit ids: \(ids)")
        #expect(record.acks.map(\.id) == ids, "one acknowledgement per push, in order")
        #expect(record.acks.map(\.status) == [200, 200, 500])
        #expect(record.acks.allSatisfy { $0.peer == record.peer }, "acknowledged on the subscription's connection: \(record.peer), \(record.acks.map(\.peer))")
        await peer.stop()
    }
}
