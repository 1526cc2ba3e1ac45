import Foundation
import SignalChat
import SwitchboardRuntime
import Testing

/// `@pushPayload(userId)` on the sample schema's `PushNotificationPayload`: a payload is
/// shown only to the account it names.
@Suite struct PushPayloadTests {
    static let payload = PushNotificationPayload(userId: 42, messages: [
        PushedMessage(userName: "Alice", text: String(repeating: "x", count: 120), createdAt: ProtoTimestamp(seconds: 1_700_000_000)),
        PushedMessage(userName: "Bob", text: "hi", createdAt: ProtoTimestamp(seconds: 1_700_000_060)),
    ])

    @Test(arguments: [BodyEncoding.protobuf, .json]) func aPayloadForTheLoggedInUserIsAccepted(encoding: BodyEncoding) throws {
        let bytes = try Self.payload.encodedBody(encoding)
        let result = PushNotificationPayload.decode(bytes, encoding: encoding, loggedInUser: 42)
        #expect(result == .success(Self.payload))
        #expect(try result.get().messages.map(\.userName) == ["Alice", "Bob"])
    }

    @Test(arguments: [BodyEncoding.protobuf, .json]) func aPayloadForAnotherUserIsRefused(encoding: BodyEncoding) throws {
        let bytes = try Self.payload.encodedBody(encoding)
        let result = PushNotificationPayload.decode(bytes, encoding: encoding, loggedInUser: 7)
        #expect(result == .failure(.addressedToAnotherUser(42)))
        // The refusal names no account when logged.
        #expect(!"\(PushPayloadRejection<UInt64>.addressedToAnotherUser(42))".contains("42"))
    }

    @Test func nobodyLoggedInRefusesEveryPayload() throws {
        let bytes = Self.payload.serializedData()
        #expect(PushNotificationPayload.decode(bytes, encoding: .protobuf, loggedInUser: nil) == .failure(.noUserLoggedIn))
    }

    @Test func undecodableBytesAreATypedRefusal() {
        // A length-delimited field whose length runs past the end.
        let result = PushNotificationPayload.decode(Data([0x12, 0x7F, 0x01]), encoding: .protobuf, loggedInUser: 42)
        guard case .failure(.undecodable) = result else {
            Issue.record("expected undecodable, got \(result)")
            return
        }
        let json = PushNotificationPayload.decode(Data("{\"userId\": \"forty-two\"}".utf8), encoding: .json, loggedInUser: 42)
        guard case .failure(.undecodable) = json else {
            Issue.record("expected undecodable, got \(json)")
            return
        }
    }

    @Test func theGeneratedConformanceReadsTheSchemasField() {
        var payload = Self.payload
        #expect(payload.recipientID == 42)
        payload.userId = 9
        #expect(payload.recipientID == 9)
        #expect(payload.accepted(for: 9) == .success(payload))
    }
}
