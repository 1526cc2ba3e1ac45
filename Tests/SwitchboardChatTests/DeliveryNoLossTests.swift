import Foundation
import SignalChat
import SwitchboardChat
import SwitchboardRuntime
import Testing

/// A deterministic coin, so a failing run can be replayed.
struct SeededCoin: Sendable {
    var state: UInt64
    mutating func flip(probability: Double) -> Bool {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        return Double(z >> 11) / Double(1 << 53) < probability
    }
}

/// The app side: records every delivery per connection and sometimes fails, as a real
/// handler would on a full disk.
final class FlakyListener: MessagesEventListener, @unchecked Sendable {
    enum Delivery: Hashable { case message(Int, handled: Bool), queueEmpty }
    let deliveries = Locked<[[Delivery]]>([])
    private let coin = Locked(SeededCoin(state: 20261121))
    let failureRate: Double
    /// Runs once, inside the handler of the `killAfter`th message handled (the server dies mid-stream).
    let killAfter: Int
    let kill = Locked<(@Sendable () -> Void)?>(nil)
    private let handledSoFar = Locked(0)
    /// Handlers running now, and the most that ever ran at once (one, if they are serial).
    private let running = Locked((now: 0, most: 0))
    var mostAtOnce: Int { running.withLock { $0.most } }

    init(failureRate: Double, killAfter: Int) {
        self.failureRate = failureRate
        self.killAfter = killAfter
    }

    func startConnection() { deliveries.withLock { $0.append([]) } }

    var handledCount: Int {
        deliveries.withLock { $0.joined().filter { if case .message(_, true) = $0 { true } else { false } }.count }
    }

    func incomingMessage(_ payload: Envelope, context: EventContext) async throws {
        running.withLock { $0.now += 1; $0.most = max($0.most, $0.now) }
        defer { running.withLock { $0.now -= 1 } }
        // Suspends, so a second handler started before this one returned would overlap it.
        await Task.yield()
        let index = Int(payload.serverGuid ?? "") ?? -1
        let fails = coin.withLock { $0.flip(probability: failureRate) }
        deliveries.withLock { $0[$0.count - 1].append(.message(index, handled: !fails)) }
        if handledSoFar.withLock({ count in count += 1; return count }) == killAfter {
            kill.withLock { $0 }?()
        }
        if fails { throw CancellationError() }
    }

    func queueEmpty(context: EventContext) async throws {
        deliveries.withLock { $0[$0.count - 1].append(.queueEmpty) }
    }
}

@Suite(.serialized) struct DeliveryNoLossTests {
    static let total = 10_000

    @Test func tenThousandPipelinedPushesSurviveFailuresAndAKilledSocket() async throws {
        let server = try ChatServer(routes: [])
        defer { server.stop() }
        let queue = PushQueue((0..<Self.total).map {
            ServerRequest(verb: "PUT", path: "/api/v1/message", body: Envelope(serverGuid: String($0)).serializedData())
        })
        let listener = FlakyListener(failureRate: 0.02, killAfter: Self.total / 3)
        let credentials = ChatClient.Credentials(username: "aci-1", deviceID: 1, password: "pw")
        var passes: [PushQueue.Pass] = []
        // Bounded: each pass leaves about 2% behind, so a handful of passes drains the queue.
        for round in 0..<12 {
            listener.startConnection()
            let connection = try await ChatClient.connectAuthenticated(
                to: server.url, credentials: credentials, options: .init(keepalive: nil)
            ) { request in await Messages.dispatch(request, to: listener) }
            let client = try #require(await server.client(at: round, timeout: .seconds(60)))
            // Mid-stream: the server's socket dies while the client handles the third of the messages.
            let kill: (@Sendable () -> Void)? = round == 0 ? { @Sendable in client.kill() } : nil
            listener.kill.withLock { $0 = kill }
            let pass = await queue.deliver(to: client, window: 256, ackTimeout: .seconds(1))
            passes.append(pass)
            await connection.close()
            if queue.pending.isEmpty && pass.queueEmptyAcknowledged { break }
        }

        let connections = listener.deliveries.withLock { $0 }
        #expect(queue.pending.isEmpty, "every push is acknowledged in the end")
        #expect(passes.map(\.acknowledged).reduce(0, +) == Self.total, "each push is acknowledged exactly once")
        #expect(passes.count >= 3, "the kill and the failures force redelivery")
        #expect(passes[0].acknowledged < Self.total / 2, "the socket died mid-stream")

        // Every message was handled; the server only forgets a message once acknowledged, so a
        // message acknowledged without being handled would be missing here.
        var handled = Set<Int>()
        var failures = 0
        for connection in connections {
            for case let .message(index, wasHandled) in connection {
                if wasHandled { handled.insert(index) } else { failures += 1 }
            }
        }
        #expect(handled == Set(0..<Self.total))
        #expect(failures > 0, "the handler threw sometimes")
        #expect(listener.mostAtOnce == 1, "one handler at a time")

        // Within each connection: queue order, and queue empty only after every message.
        for (round, connection) in connections.enumerated() {
            let indices = connection.compactMap { if case let .message(index, _) = $0 { index } else { nil } }
            #expect(indices == indices.sorted() && Set(indices).count == indices.count, "connection \(round) kept queue order")
            if let empty = connection.firstIndex(of: .queueEmpty) {
                #expect(empty == connection.count - 1, "queue empty came last on connection \(round)")
            }
        }
        #expect(connections.last?.last == .queueEmpty)
    }
}
