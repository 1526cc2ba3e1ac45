import Foundation
import SignalChat
import SwitchboardRuntime
import Testing

/// Typed server pushes and log-safe descriptions.
@Suite struct EventAndRedactionTests {
    final class Listener: MessagesEventListener, @unchecked Sendable {
        let received = Locked<[String]>([])
        let failIncoming: Bool

        init(failIncoming: Bool = false) { self.failIncoming = failIncoming }

        func incomingMessage(_ payload: Envelope, context: EventContext) async throws {
            received.withLock { $0.append("message:\(payload.serverGuid ?? ""):\(context.serverTimestamp?.timeIntervalSince1970 ?? 0)") }
            if failIncoming { throw CancellationError() }
        }

        func queueEmpty(context: EventContext) async throws {
            received.withLock { $0.append("empty") }
            throw CancellationError() // acknowledged on receipt regardless
        }
    }

    func push(_ envelope: Envelope) -> ServerRequest {
        ServerRequest(verb: "PUT", path: "/api/v1/message", headers: ["X-Signal-Timestamp": "1000"], body: envelope.serializedData())
    }

    @Test func incomingMessagesAreAcknowledgedOnlyAfterHandling() async {
        let listener = Listener()
        #expect(await Messages.dispatch(push(Envelope(serverGuid: "g1")), to: listener) == .ok)
        #expect(listener.received.current == ["message:g1:1.0"])
        let failing = Listener(failIncoming: true)
        // Answered 500: not acknowledged (the server keeps it), yet answered, so queue-empty is not held back.
        guard case let .handlerFailed(reason) = await Messages.dispatch(push(Envelope(serverGuid: "g2")), to: failing) else {
            Issue.record("a throwing handler must answer its push as failed")
            return
        }
        #expect(!reason.isEmpty)
    }

    @Test func queueEmptyIsAcknowledgedOnReceiptAndUnknownPathsAreReported() async {
        let listener = Listener()
        #expect(await Messages.dispatch(ServerRequest(verb: "PUT", path: "/api/v1/queue/empty"), to: listener) == .ok)
        #expect(listener.received.current == ["empty"])
        #expect(await Messages.dispatch(ServerRequest(verb: "PUT", path: "/api/v1/other"), to: listener) == .unknown)
        #expect(await Messages.dispatch(ServerRequest(verb: "GET", path: "/api/v1/message"), to: listener) == .unknown)
        let malformed = ServerRequest(verb: "PUT", path: "/api/v1/message", body: Data([0xFF]))
        guard case let .reject(response, reason) = await Messages.dispatch(malformed, to: listener) else {
            Issue.record("a malformed payload must be rejected")
            return
        }
        #expect(response == RPCResponse(status: 400, message: "Bad Request"))
        #expect(reason.hasPrefix("Messages.incomingMessage payload does not decode"))
    }

    @Test func sensitiveFieldsNeverAppearInDescriptions() {
        let secret = Data([0xDE, 0xAD, 0xBE, 0xEF])
        let request = LookUpUsernameHashRequest(hash: secret)
        for text in ["\(request)", String(reflecting: request), "\([request])", "\(Optional(request) as Any)"] {
            #expect(!text.contains("222"), "\(text)") // 0xDE = 222 in a byte dump
            #expect(!text.contains(secret.base64EncodedString()))
            #expect(text.contains("[REDACTED]"))
        }
        let outgoing = SendMessageRequest(destination: "bob", messages: [OutgoingMessage(destinationDeviceId: 2, content: secret)])
        #expect(!"\(outgoing)".contains("222") && "\(outgoing)".contains("destinationDeviceId: 2"))
        #expect("\(AccessKey(secret))" == "AccessKey([REDACTED])")
        #expect(String(reflecting: AccessKey(secret)) == "AccessKey([REDACTED])")
        // An upload form's signed URL, key and CDN headers are credentials (from the runtime
        // review: they were logged in clear with `.bodies`).
        let form = AttachmentUploadForm(cdn: 3, key: "secret-key", headers: ["Authorization": "Bearer xyz"], signedUploadLocation: "https://cdn.example/upload?sig=abc")
        for text in ["\(form)", String(reflecting: form)] {
            #expect(!text.contains("sig=abc") && !text.contains("secret-key") && !text.contains("Bearer xyz"), "\(text)")
            #expect(text.contains("cdn: 3"))
        }
    }
}
