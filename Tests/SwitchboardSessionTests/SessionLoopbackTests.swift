import Foundation
import SignalChat
import SwitchboardChat
import SwitchboardRuntime
import SwitchboardSession
import Testing

struct LoopbackMessages: MessagesHandler {
    func sendMessage(_ request: SendMessageRequest, context: ServerContext) async throws(Messages.SendMessageError) -> SendMessageResponse {
        try? await Task.sleep(for: .milliseconds(Int.random(in: 0...5)))
        return SendMessageResponse(needsSync: request.urgent)
    }
}

final class RecordingInbox: MessagesEventListener, @unchecked Sendable {
    let handled = Locked<[String]>([])
    func incomingMessage(_ payload: Envelope, context: EventContext) async throws {
        handled.withLock { $0.append(payload.serverGuid ?? "?") }
    }
    func queueEmpty(context: EventContext) async throws {}
}

/// The real connector, to wherever the server listens now: each restart takes a fresh port,
/// since the old one may be taken meanwhile by another test's socket.
struct FollowingConnector: SessionConnector {
    let url: Locked<URL>
    func connect(credentials: ChatClient.Credentials, onPush: @escaping ChatConnection<Authenticated>.PushHandler) async throws(ChatConnectionError) -> any SessionLink {
        try await ChatSessionConnector(url: url.current).connect(credentials: credentials, onPush: onPush)
    }
}

/// The real session against the real mock server on loopback, with the server stopped and
/// restarted 20 times during traffic. Retry timers run on a virtual clock that the test
/// advances, so the run is quick and its timing deterministic.
@Suite(.serialized) struct SessionLoopbackTests {
    static let restarts = 20
    static let messagesPerRound = 25

    /// Advances the virtual clock whenever the session waits to retry, until `state`.
    func reach(_ state: SessionState, _ session: Session<ManualClock>, clock: ManualClock, timeout: Duration = .seconds(60)) async -> Bool {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while session.state != state {
            if ContinuousClock.now >= deadline { return false }
            if session.state == .disconnected, let next = clock.nextDeadline {
                clock.advance(by: clock.now.duration(to: next))
            }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return true
    }

    @Test func survivesTwentyServerRestartsDuringTraffic() async throws {
        var server = try ChatServer(routes: LoopbackMessages().routes)
        let serverURL = Locked(server.url)
        let clock = ManualClock()
        let invalidations = Locked(0)
        let session = Session(connector: FollowingConnector(url: serverURL), clock: clock, jitter: { 1.0 },
                              invalidateCaches: { invalidations.withLock { $0 += 1 } })
        let log = ChangeLog(session)
        let inbox = RecordingInbox()
        session.setPushHandler { await Messages.dispatch($0, to: inbox) }
        let messages = MessagesClient(transport: session.transport)
        let mailbox = PushQueue()
        var sent = 0
        var outcomes: [String: Int] = [:]

        session.logIn(cached: ChatClient.Credentials(username: "aci", deviceID: 1, password: "pw"))
        for round in 0...Self.restarts {
            #expect(await reach(.connected, session, clock: clock), "round \(round): the session reconnects")
            guard let client = await server.client(at: 0, timeout: .seconds(60)) else {
                Issue.record("round \(round): no client on the server")
                break
            }
            for _ in 0..<Self.messagesPerRound {
                mailbox.append(ServerRequest(verb: "PUT", path: "/api/v1/message", body: Envelope(serverGuid: "m\(sent)").serializedData()))
                sent += 1
            }
            let delivery = Task { await mailbox.deliver(to: client, window: 256, ackTimeout: .seconds(2)) }
            guard round < Self.restarts else {
                _ = await delivery.value
                break
            }
            // While connected, traffic gets through.
            let warm = await messages.sendMessage(SendMessageRequest(destination: "bob"), options: CallOptions(timeout: .seconds(30)))
            #expect(warm.value != nil, "round \(round): a request while connected succeeds, got \(warm)")
            // Requests in flight when the server goes away must finish, one way or another.
            let traffic = Task {
                await withTaskGroup(of: String.self) { group in
                    for index in 0..<10 {
                        group.addTask {
                            let request = SendMessageRequest(destination: "bob", urgent: index % 2 == 0)
                            switch await messages.sendMessage(request, options: CallOptions(timeout: .seconds(5))) {
                            case .success: return "success"
                            case let .failure(error): return "\(error)".components(separatedBy: ":").first ?? "failure"
                            case .nonSuccess: return "nonSuccess"
                            }
                        }
                    }
                    var results: [String] = []
                    for await result in group { results.append(result) }
                    return results
                }
            }
            try await Task.sleep(for: .milliseconds(Int.random(in: 1...15)))
            server.stop()
            #expect(await eventually { session.state != .connected }, "round \(round): the session notices the server is gone")
            let results = await traffic.value
            #expect(results.count == 10, "round \(round): no request hangs")
            for result in results { outcomes[result, default: 0] += 1 }
            _ = await delivery.value
            server = try ChatServer(routes: LoopbackMessages().routes)
            serverURL.withLock { $0 = server.url }
        }
        // Drain what the restarts left unacknowledged.
        for _ in 0..<5 where !mailbox.pending.isEmpty {
            #expect(await reach(.connected, session, clock: clock))
            guard let client = server.connectedClients.last else { break }
            // Patient here: what is left must be acknowledged, however slow the machine.
            _ = await mailbox.deliver(to: client, ackTimeout: .seconds(10))
        }
        server.stop()

        #expect(mailbox.pending.isEmpty, "every push was acknowledged in the end")
        #expect(Set(inbox.handled.current) == Set((0..<sent).map { "m\($0)" }), "no pushed message is lost")
        #expect(outcomes.values.reduce(0, +) == Self.restarts * 10, "every request in flight at a restart finished: \(outcomes)")
        let changes = log.changes.current
        #expect(changes.filter { $0.to == .connected }.count >= Self.restarts + 1, "CONNECTED after every restart")
        // The sequence is legal: each change follows the specification and starts where the last ended.
        var previous = SessionState.ready
        for change in changes {
            #expect(change.from == previous, "\(change) starts where the last change ended")
            let allowed = SessionTransitions.target(of: change.event, from: change.from) == change.to
            #expect(allowed, "\(change) is not in the specification")
            previous = change.to
        }
        #expect(invalidations.current >= Self.restarts, "each reconnect invalidated cached data")
        await session.shutDown()
    }
}
