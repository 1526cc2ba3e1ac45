import Foundation
import SignalChat
import SwitchboardChat
import SwitchboardRuntime
import Testing

/// A push for a known event whose payload does not decode is answered 400 (which Signal's
/// server keeps for a later connection, as any answer but 2xx) and reported to the
/// diagnostics hook, not dropped silently; the listener never sees it, and the push interceptors see it rejected.
@Suite(.timeLimit(.minutes(3)))
struct UndecodablePushTests {
    final class Listener: MessagesEventListener, @unchecked Sendable {
        let received = Locked<[String]>([])
        func incomingMessage(_ payload: Envelope, context: EventContext) async throws {
            received.withLock { $0.append(payload.serverGuid ?? "") }
        }
        func queueEmpty(context: EventContext) async throws {}
    }

    @Test func anUndecodablePushIsAnswered400AndReported() async throws {
        let server = try ChatServer(routes: [])
        defer { server.stop() }
        let listener = Listener()
        let observed = try await ObservedConnection.open(to: server, logging: .bodies) { request in await Messages.dispatch(request, to: listener) }
        let (connection, diagnostics, records) = (observed.connection, observed.diagnostics, observed.records)
        let client = try #require(await server.client(at: 0))
        // Field 2 (sourceServiceId, a string) holding invalid UTF-8.
        let broken = ServerRequest(verb: "PUT", path: "/api/v1/message", body: Data([0x12, 0x02, 0xFF, 0xFE]))
        #expect(await client.push(broken)?.status == 400)
        let good = ServerRequest(verb: "PUT", path: "/api/v1/message", body: Envelope(serverGuid: "g1").serializedData())
        #expect(await client.push(good)?.status == 200)
        #expect(listener.received.withLock { $0 } == ["g1"])
        let reported = diagnostics.withLock { $0 }.compactMap { diagnostic -> String? in
            if case let .undecodablePush(path, reason) = diagnostic { return "\(path) \(reason)" }
            return nil
        }
        #expect(reported.count == 1)
        #expect(reported.first?.hasPrefix("/api/v1/message Messages.incomingMessage payload does not decode") == true)
        // The push interceptors saw both: the rejected one as a warning with its reason.
        let logged = records.withLock { $0 }
        #expect(logged.map(\.level) == [.warning, .info])
        #expect(logged.allSatisfy { $0.subject == "PUT /api/v1/message" })
        #expect(logged.first?.details.contains("rejected with 400 Bad Request: Messages.incomingMessage payload does not decode") == true, "\(logged)")
        #expect(logged.last?.details.contains("serverGuid: Optional(\"g1\")") == true, "\(logged)")
        #expect(logged.last?.details.hasSuffix("-> 200 OK") == true, "\(logged)")
        await connection.close()
    }
}
