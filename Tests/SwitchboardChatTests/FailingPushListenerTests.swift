import Foundation
import SignalChat
import SwitchboardChat
import SwitchboardRuntime
import Testing

/// A listener that throws answers its push 500: Signal's server keeps what is not answered
/// 2xx, so the message comes again on a later connection, while the pushes behind it and
/// queue-empty go on. Unanswered, it would hold back queue-empty until the socket closed.
@Suite(.timeLimit(.minutes(3)))
struct FailingPushListenerTests {
    final class Listener: MessagesEventListener, @unchecked Sendable {
        let received = Locked<[String]>([])
        let failing: Set<String>
        init(failing: Set<String>) { self.failing = failing }
        struct Failure: Error {}
        func incomingMessage(_ payload: Envelope, context: EventContext) async throws {
            let guid = payload.serverGuid ?? ""
            if failing.contains(guid) { throw Failure() }
            received.withLock { $0.append(guid) }
        }
        func queueEmpty(context: EventContext) async throws {
            received.withLock { $0.append("queue empty") }
        }
    }

    static func message(_ guid: String) -> ServerRequest {
        ServerRequest(verb: "PUT", path: "/api/v1/message", headers: ["X-Signal-Timestamp": "1000"], body: Envelope(serverGuid: guid).serializedData())
    }

    @Test func aFailedListenerAnswers500AndQueueEmptyStillArrives() async throws {
        let server = try ChatServer(routes: [])
        defer { server.stop() }
        let listener = Listener(failing: ["g-2"])
        let observed = try await ObservedConnection.open(to: server, logging: .heads) { request in await Messages.dispatch(request, to: listener) }
        let (connection, diagnostics, records) = (observed.connection, observed.diagnostics, observed.records)
        let client = try #require(await server.client(at: 0))
        let queue = PushQueue([Self.message("g-1"), Self.message("g-2"), Self.message("g-3")])
        // An ack timeout far beyond the time limit: an unanswered push would stall this pass.
        let pass = await queue.deliver(to: client, ackTimeout: .seconds(600))
        #expect(pass.acknowledged == 2)
        #expect(pass.unacknowledged == 1)
        #expect(pass.queueEmptyAcknowledged)
        #expect(listener.received.withLock { $0 } == ["g-1", "g-3", "queue empty"])
        // The failed one stays queued for a later connection.
        #expect(queue.pending.map { (try? Envelope(serializedData: $0.body ?? Data()))?.serverGuid } == ["g-2"])
        let reported = diagnostics.withLock { $0 }.compactMap { diagnostic -> String? in
            if case let .pushHandlerFailed(path, reason) = diagnostic { return "\(path) \(reason)" }
            return nil
        }
        #expect(reported.count == 1)
        #expect(reported.first?.hasPrefix("/api/v1/message ") == true, "\(reported)")
        #expect(records.withLock { $0 }.contains { $0.level == .warning && $0.details.contains("listener failed, answered 500") })
        await connection.close()
    }
}
