import Foundation
import SignalChat
import SwitchboardGRPC
import SwitchboardRuntime
import Testing

/// A subscription whose connection stops taking new streams (a GOAWAY from either side) ends
/// at once: its acknowledgements could only go over another connection, where a Switchboard
/// server does not take them, so every push would come again (from the gRPC client review).
@Suite(.timeLimit(.minutes(2))) struct GRPCSubscriptionGoAwayTests {
    @Test func aSubscriptionEndsWhenItsConnectionGoesAway() async throws {
        let server = try GRPCServer(router: RPCRouter(routes: []))
        let arrivals = server.arrivingSubscribers()
        let transport = GRPCClientTransport<Authenticated>(host: "127.0.0.1", port: server.port)
        let subscription = try await transport.subscribe(toEventsOf: "signal.chat.Messages") { _ in .ok }
        var iterator = arrivals.makeAsyncIterator()
        let subscriber = try #require(await iterator.next())
        #expect(await subscriber.push(ServerRequest(verb: "PUT", path: "/api/v1/message")) == 200)
        // This side's GOAWAY: the graceful close would otherwise hold the subscription (and
        // ack its pushes over a new connection) until the close's own timeout.
        transport.close()
        #expect(await subscription.ended == GRPCEventSubscription.connectionGoingAway)
        await server.shutdown(timeout: .seconds(1))
    }
}
