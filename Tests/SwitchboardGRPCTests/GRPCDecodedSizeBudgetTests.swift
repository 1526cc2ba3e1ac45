import Foundation
import PeerSupport
@testable import SwitchboardGRPC
@testable import SwitchboardHTTP2
import SwitchboardRuntime
import Testing

/// Budgets that count what a peer's bytes become once decoded, not their size on the wire.
/// Found by review: a push of empty headers (2 bytes each) decodes to about 50 times its
/// message, and a call's header list was held (by a subscription, for its whole life)
/// without counting against any budget.
@Suite(.timeLimit(.minutes(2)))
struct GRPCDecodedSizeBudgetTests {
    /// A push of `count` empty headers: 2 bytes each in its message, an entry of two strings
    /// each once decoded.
    static func headerFlood(_ count: Int) -> ServerRequest {
        ServerRequest(verb: "PUT", path: "/api/v1/message", headers: RPCHeaders(Array(repeating: (name: "", value: ""), count: count)))
    }

    /// As the WebSocket client's `PushMemoryTests`: pushes queued for a busy handler count
    /// what they hold decoded, so header-flood pushes fill `maximumQueuedPushBytes` long
    /// before their messages' bytes would.
    @Test func headerFloodPushesCountWhatTheyHoldDecoded() async throws {
        let server = try GRPCServer(router: RPCRouter(routes: []))
        let arrivals = server.arrivingSubscribers()
        let headers = 20_000
        let flood = Self.headerFlood(headers)
        // About 40 KB in its message (ids below 128 are one byte, so every push here is the
        // same size), about 2 MB decoded.
        let messageBytes = GRPCPush(id: 1, request: flood).serializedBytes().count
        let cost = DecodedRequestSize.bytes(envelopeBytes: messageBytes, headerCount: headers)
        #expect(cost > 40 * messageBytes, "\(cost) for \(messageBytes) bytes")
        var options = GRPCClientOptions()
        // Room for two pushes by what they hold; by their messages' bytes, for all of them.
        options.maximumQueuedPushBytes = 2 * cost + cost / 2
        #expect(options.maximumQueuedPushBytes > 10 * (messageBytes + DecodedRequestSize.perRequest))
        let transport = GRPCClientTransport<Authenticated>(host: "127.0.0.1", port: server.port, options: options)
        defer { transport.close() }
        let release = Locked(false)
        let entered = Locked(false)
        let handled = Locked(0)
        let subscription = try await transport.subscribe(toEventsOf: "signal.chat.Messages") { request in
            #expect(request.headers.fields.count == headers)
            entered.withLock { $0 = true }
            for _ in 0..<3000 where !release.current { try? await Task.sleep(for: .milliseconds(10)) }
            handled.withLock { $0 += 1 }
            return .ok
        }
        var iterator = arrivals.makeAsyncIterator()
        let subscriber = try #require(await iterator.next())
        // Each push's acknowledgement as it comes: 200, or nil once dropped (when the
        // subscription ends, or at its timeout).
        let statuses = Locked<[Int?]>([])
        func push() -> Task<Void, Never> {
            Task {
                let status = await subscriber.push(flood, timeout: .seconds(30))
                statuses.withLock { $0.append(status) }
            }
        }
        // The first is in the handler; two more fit in the budget; the other four do not.
        let first = push()
        #expect(await eventually(within: .seconds(30)) { entered.current }, "the first push reached the handler")
        let rest = (0..<6).map { _ in push() }
        #expect(await eventually(within: .seconds(30)) { subscription.queuedPushBytes == 2 * cost }, "\(subscription.queuedPushBytes)")
        // All six reach the client (queued or dropped) before the handler is released; what
        // is queued never passes the budget meanwhile.
        for _ in 0..<150 {
            #expect(subscription.queuedPushBytes <= options.maximumQueuedPushBytes)
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(subscription.queuedPushBytes == 2 * cost, "\(subscription.queuedPushBytes)")
        release.withLock { $0 = true }
        #expect(await eventually(within: .seconds(30)) { statuses.current.filter { $0 == 200 }.count == 3 }, "\(statuses.current)")
        try await Task.sleep(for: .milliseconds(300))
        #expect(handled.current == 3, "the first and the two queued; the dropped ones never reach the handler")
        #expect(subscription.queuedPushBytes == 0)
        // Ending the subscription answers the dropped pushes' waits (nil: unacknowledged).
        subscription.cancel()
        _ = await first.value
        for task in rest { _ = await task.value }
        #expect(statuses.current.filter { $0 == 200 }.count == 3, "\(statuses.current)")
        #expect(statuses.current.filter { $0 == nil }.count == 4, "dropped pushes are not acknowledged: \(statuses.current)")
        await server.shutdown(timeout: .seconds(1))
    }

    /// A call's header list counts against `maximumRequestBytesInFlight` from its headers
    /// until its stream closes: a subscription holds its metadata for as long as it lasts.
    @Test func requestMetadataCountsAgainstTheRequestBudget() async throws {
        // Eight metadata headers of 1,000 bytes: about 8 KB of each call's header list.
        var metadata = RPCHeaders()
        for index in 0..<8 { metadata.add("x-pad-\(index)", String(repeating: "a", count: 1000)) }
        let metadataSize = HPACKHeader.listSize(metadata.fields.map { HPACKHeader($0.name, $0.value) })
        var serverOptions = GRPCServerOptions()
        // Two such subscriptions fit, a third does not; counted by 1 KiB and their (empty)
        // messages alone, twenty would.
        serverOptions.maximumRequestBytesInFlight = 25_000
        let server = try GRPCServer(router: RPCRouter(routes: []), options: serverOptions)
        var clientOptions = GRPCClientOptions()
        clientOptions.metadata = metadata
        let transport = GRPCClientTransport<Authenticated>(host: "127.0.0.1", port: server.port, options: clientOptions)
        defer { transport.close() }
        #expect(server.requestBytesInFlight == 0)

        let first = try await transport.subscribe(toEventsOf: "signal.chat.Messages") { _ in .ok }
        // Its 1 KiB, its whole header list (the metadata, and some 500 bytes of the
        // protocol's own fields) and its empty message's 5 bytes; charged on the loop.
        #expect(await eventually(within: .seconds(10)) { server.requestBytesInFlight >= 1024 + metadataSize + 5 }, "\(server.requestBytesInFlight)")
        try await Task.sleep(for: .milliseconds(100))
        let one = server.requestBytesInFlight
        #expect(one >= 1024 + metadataSize + 5 && one <= 1024 + metadataSize + 1024, "\(one) for \(metadataSize) bytes of metadata")

        let second = try await transport.subscribe(toEventsOf: "signal.chat.Messages") { _ in .ok }
        #expect(await eventually(within: .seconds(10)) { server.requestBytesInFlight == 2 * one }, "\(server.requestBytesInFlight)")
        #expect(2 * one <= serverOptions.maximumRequestBytesInFlight && 3 * one > serverOptions.maximumRequestBytesInFlight)

        // Past the budget: refused as a message past it is.
        do throws(TransportError) {
            let third = try await transport.subscribe(toEventsOf: "signal.chat.Messages") { _ in .ok }
            Issue.record("a subscription past the budget opened")
            third.cancel()
        } catch {
            guard case let .grpcStatus(code, _, _) = error else {
                Issue.record("expected RESOURCE_EXHAUSTED, got \(error)")
                return
            }
            #expect(code == GRPCStatusCode.resourceExhausted.rawValue)
        }
        // The refused call holds nothing.
        #expect(await eventually(within: .seconds(10)) { server.requestBytesInFlight == 2 * one }, "\(server.requestBytesInFlight)")

        // A subscription that ends gives its share back, and another fits again.
        first.cancel()
        #expect(await eventually(within: .seconds(10)) { server.requestBytesInFlight == one }, "\(server.requestBytesInFlight)")
        let again = try await transport.subscribe(toEventsOf: "signal.chat.Messages") { _ in .ok }
        #expect(await eventually(within: .seconds(10)) { server.requestBytesInFlight == 2 * one }, "\(server.requestBytesInFlight)")
        second.cancel()
        again.cancel()
        #expect(await eventually(within: .seconds(10)) { server.requestBytesInFlight == 0 }, "\(server.requestBytesInFlight)")
        await server.shutdown(timeout: .seconds(1))
    }
}
