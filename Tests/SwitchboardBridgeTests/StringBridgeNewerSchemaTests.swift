import Foundation
import SignalChat
import SwitchboardBridge
import SwitchboardRuntime
import Testing

/// Answers every request with one response, as a server on a newer schema might.
struct FixedResponseTransport<Auth: AuthMode>: RPCTransport {
    let response: RPCResponse
    func send(_ request: RPCRequest) async throws(TransportError) -> RPCResponse { response }
}

/// A server on a newer schema adds members and enum names to what it sends. Generated code
/// skips them (`ignoreUnknownFields`); so must the bridge, which answered such a 200 with an
/// `undecodableResponse` failure and refused such a push with 400.
@Suite struct StringBridgeNewerSchemaTests {
    static let json: RPCHeaders = ["Content-Type": BodyEncoding.json.contentType]

    static func bridge(answering response: RPCResponse) -> StringBridge {
        StringBridge(schema: SampleSchema.schema, transports: .init(authenticated: FixedResponseTransport<Authenticated>(response: response)))
    }

    @Test func aSuccessWithMembersTheSchemaDoesNotKnowIsASuccess() async {
        let body = #"{"id":"m1","futureMember":{"deep":[1,"two",null]},"text":"hi","status":"delivered","extras":{"k":"v"}}"#
        let bridge = Self.bridge(answering: RPCResponse(status: 200, headers: Self.json, body: Data(body.utf8), message: "OK"))
        let answer = object(await bridge.send(verb: "POST", path: "/v1/chats/c1/messages", body: #"{"text": "hi"}"#))
        #expect(answer["type"] as? String == "success", "\(answer)")
        #expect(answer["status"] as? Int == 200)
        let result = answer["result"] as? [String: Any]
        #expect(result?["id"] as? String == "m1")
        #expect(result?["text"] as? String == "hi")
        #expect((result?["extras"] as? [String: Any])?["k"] as? String == "v")
        #expect(result?["futureMember"] == nil)
        // An enum name the schema does not know leaves the field unset, as in generated code.
        #expect(result?["status"] == nil)
    }

    @Test func aDeclaredErrorWithMembersTheSchemaDoesNotKnowKeepsItsBody() async {
        let body = #"{"field":"text","hint":"shorter","reason":"empty"}"#
        let bridge = Self.bridge(answering: RPCResponse(status: 422, headers: Self.json, body: Data(body.utf8)))
        let answer = object(await bridge.send(verb: "POST", path: "/v1/chats/c1/messages", body: #"{"text": "hi"}"#))
        #expect(answer["type"] as? String == "nonSuccess", "\(answer)")
        #expect(answer["error"] as? String == "invalid")
        let error = answer["body"] as? [String: Any]
        #expect(error?["reason"] as? String == "empty")
        #expect(error?["hint"] == nil)
    }

    @Test func aPushWithMembersTheSchemaDoesNotKnowIsDelivered() async throws {
        let bridge = StringBridge.inProcess()
        let body = #"{"chatId":"c1","futureMember":[1],"message":{"id":"m1","status":"delivered","reactedBy":"x"}}"#
        let push = ServerRequest(verb: "PUT", path: "/api/v1/room/event", headers: Self.json, body: Data(body.utf8))
        #expect(throws: Never.self) { try RoomEvent(decoding: Data(body.utf8), encoding: .json) }
        // Delivered from a task: the event may be acknowledged only once the host takes it.
        let outcome = Task { await bridge.deliver(push) }
        let event = object(await bridge.receive(timeout: .seconds(30)))
        #expect(await outcome.value == .ok)
        #expect(event["event"] as? String == "roomEvent", "\(event)")
        let payload = event["payload"] as? [String: Any]
        #expect(payload?["chatId"] as? String == "c1")
        #expect(payload?["futureMember"] == nil)
        let message = payload?["message"] as? [String: Any]
        #expect(message?["id"] as? String == "m1")
        #expect(message?["status"] == nil)
        await bridge.close()
    }
}
