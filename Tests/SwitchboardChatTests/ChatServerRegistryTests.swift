import Foundation
import PeerSupport
@testable import SwitchboardChat
import SwitchboardRuntime
import Testing

/// The mock server holds what is connected now, not everyone who ever connected.
@Suite(.timeLimit(.minutes(4)))
struct ChatServerRegistryTests {

    @Test func endedClientsLeaveAndOnlyTheNewestStayFindable() async throws {
        let server = try ChatServer(routes: [])
        defer { server.stop() }
        let kept = ChatServer.Registry.endedClientsKept
        let total = kept + 6
        for _ in 0..<total {
            let connection = try await ChatClient.connectUnauthenticated(to: server.url, options: .init(keepalive: nil))
            await connection.close()
        }
        #expect(await eventually { server.connectedClients.isEmpty }, "every client left the live set")
        // The first six ended longest ago and were let go; the newest are still there.
        #expect(await server.client(at: 0, timeout: .seconds(5)) == nil)
        #expect(await server.client(at: total - kept - 1, timeout: .seconds(5)) == nil)
        #expect(await server.client(at: total - kept, timeout: .seconds(5)) != nil)
        #expect(await server.client(at: total - 1, timeout: .seconds(5)) != nil)
    }

    @Test func connectedClientsAreTheLiveOnesOldestFirst() async throws {
        let server = try ChatServer(routes: [])
        defer { server.stop() }
        let first = try await ChatClient.connectUnauthenticated(to: server.url, options: .init(keepalive: nil))
        let second = try await ChatClient.connectUnauthenticated(to: server.url, options: .init(keepalive: nil))
        let third = try await ChatClient.connectUnauthenticated(to: server.url, options: .init(keepalive: nil))
        let clients = try await [server.client(at: 0), server.client(at: 1), server.client(at: 2)].map { try #require($0) }
        #expect(await eventually { server.connectedClients.count == 3 })
        await second.close()
        #expect(await eventually { server.connectedClients.count == 2 })
        #expect(server.connectedClients.map(ObjectIdentifier.init) == [clients[0], clients[2]].map(ObjectIdentifier.init))
        await first.close()
        await third.close()
    }

    @Test func arrivingClientsComeInOrderAndFinishWhenTheServerStops() async throws {
        let server = try ChatServer(routes: [])
        let arrivals = server.arrivingClients()
        var connections: [ChatConnection<Unauthenticated>] = []
        for _ in 0..<3 {
            connections.append(try await ChatClient.connectUnauthenticated(to: server.url, options: .init(keepalive: nil)))
        }
        let expected = try await [server.client(at: 0), server.client(at: 1), server.client(at: 2)].map { try #require($0) }
        let collector = Task {
            var seen: [ObjectIdentifier] = []
            for await client in arrivals { seen.append(ObjectIdentifier(client)) }
            return seen
        }
        for _ in 0..<500 where server.connectedClients.count < 3 { try await Task.sleep(for: .milliseconds(10)) }
        server.stop()
        #expect(await collector.value == expected.map(ObjectIdentifier.init), "all three, in arrival order, then the stream ends")
        // A subscription after the stop ends at once.
        var late = server.arrivingClients().makeAsyncIterator()
        #expect(await late.next() == nil)
        for connection in connections { await connection.close() }
    }
}
