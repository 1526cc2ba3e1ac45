import Foundation
import SignalChat
import SwitchboardBridge
import SwitchboardRuntime
import Testing

/// Commands through the bridge to generated handlers in process: routing, binding, and the
/// four kinds of answer document.
@Suite struct StringBridgeRequestTests {
    let bridge = StringBridge.inProcess()

    @Test func aSuccessCarriesTheTypedResultAsJSON() async {
        let hash = PathEncoding.base64URL(BridgeBackend.knownHash)
        let answer = object(await bridge.send(verb: "GET", path: "/v1/accounts/username_hash/\(hash)"))
        #expect(answer["type"] as? String == "success")
        #expect(answer["status"] as? Int == 200)
        #expect((answer["result"] as? [String: Any])?["uuid"] as? String == "aci-1")
    }

    @Test func declaredErrorsAreNonSuccessWithTheirNameBodyAndDelay() async {
        let missing = object(await bridge.send(verb: "GET", path: "/v1/accounts/username_hash/AQ"))
        #expect(missing["type"] as? String == "nonSuccess")
        #expect(missing["status"] as? Int == 404)
        #expect(missing["error"] as? String == "notFound")

        let limited = object(await bridge.send(verb: "GET", path: "/v1/accounts/username_hash/_w"))
        #expect(limited["error"] as? String == "rateLimited")
        #expect(limited["retryAfterMs"] as? Int == 30_000)

        let invalid = object(await bridge.send(verb: "POST", path: "/v1/chats/c1/messages", body: #"{"text": ""}"#))
        #expect(invalid["status"] as? Int == 422)
        #expect(invalid["error"] as? String == "invalid")
        #expect((invalid["body"] as? [String: Any])?["reason"] as? String == "must not be empty")
    }

    @Test func undeclaredStatusesMapAsGeneratedClientsMapThem() async {
        let teapot = object(await bridge.send(verb: "GET", path: "/v1/accounts/username_hash/GA"))
        #expect(teapot["type"] as? String == "nonSuccess")
        #expect(teapot["error"] as? String == "unrecognized")
        #expect(teapot["bodyBase64"] as? String == Data("teapot".utf8).base64EncodedString())
        let unavailable = object(await bridge.send(verb: "GET", path: "/v1/accounts/username_hash/UA"))
        #expect(unavailable["type"] as? String == "failure")
        #expect(unavailable["failure"] as? String == "serverError")
        #expect(unavailable["status"] as? Int == 503)
    }

    @Test func pathQueryHeaderAndBodyBindTheirFields() async {
        let sent = object(await bridge.send(command: "POST /v1/chats/room%201/messages\nIdempotency-Key: c-42\n\n{\"text\": \"hi\"}"))
        let message = sent["result"] as? [String: Any]
        #expect(message?["id"] as? String == "c-42")
        #expect(message?["text"] as? String == "hi")
        #expect((message?["extras"] as? [String: Any])?["chat"] as? String == "room 1")

        let history = object(await bridge.send(verb: "GET", path: "/v1/chats/c1/messages", query: "before_id=m9&limit=5"))
        let first = ((history["result"] as? [String: Any])?["messages"] as? [[String: Any]])?.first
        #expect(first?["id"] as? String == "m9")
        #expect(first?["text"] as? String == "limit=5")

        let count = object(await bridge.send(command: "GET /v2/keys?identity=PNI"))
        #expect((count["result"] as? [String: Any])?["count"] as? Int == 7)
    }

    @Test func keysPickBetweenEndpointsThatShareARoute() async {
        // Without a key: the account's own endpoint, over the authenticated connection.
        let account = object(await bridge.send(verb: "GET", path: "/v2/keys/alice/1"))
        let accountKey = (account["result"] as? [String: Any])?["identityKey"] as? String
        #expect(accountKey.flatMap { Data(base64Encoded: $0) } == Data("account:alice/1".utf8))
        // With the access key: the sealed-sender endpoint, unauthenticated, the key as its header.
        let key = Data([1, 2, 3]).base64EncodedString()
        let sealed = object(await bridge.send(command: "GET /v2/keys/alice/1\nUnidentified-Access-Key: \(key)\n\n"))
        let sealedKey = (sealed["result"] as? [String: Any])?["identityKey"] as? String
        #expect(sealedKey.flatMap { Data(base64Encoded: $0) } == Data("sealed:alice".utf8))
        // The key may be named as in the schema, too.
        let byName = object(await bridge.send(command: "GET /v2/keys/alice/1\naccessKey: \(key)"))
        #expect(byName["type"] as? String == "success")
    }

    @Test(arguments: [
        ("GET /v9/nothing", 404, "unknownPath"),
        ("DELETE /v1/chats/c1/messages", 405, "methodNotAllowed"),
        ("POST /v1/chats/c1/messages {\"text\": ", 400, "badJSON"),
        ("POST /v1/chats/c1/messages {\"txt\": \"hi\"}", 422, "schemaViolation"),
        ("POST /v1/chats/c1/messages {\"text\": 5}", 422, "schemaViolation"),
        ("GET /v1/chats/c1/messages?limit=many", 422, "schemaViolation"),
        ("GET /v1/chats/c1/messages?lmit=5", 422, "schemaViolation"),
        ("GET /v1/chats/c1/messages {\"limit\": 5}", 422, "schemaViolation"),
        ("GET /v1/accounts/username_hash/!!!", 422, "schemaViolation"),
        ("get /v1/chats", 400, "badCommand"),
        ("", 400, "badCommand"),
        ("GET v1/chats", 400, "badCommand"),
        ("GET /v1/chats\nNo colon here\n\n", 400, "badCommand"),
    ]) func badCommandsGetJSONErrorDocuments(command: String, status: Int, code: String) async {
        let answer = object(await bridge.send(command: command))
        #expect(answer["type"] as? String == "error")
        #expect(answer["status"] as? Int == status)
        #expect(answer["error"] as? String == code)
        #expect((answer["message"] as? String)?.isEmpty == false)
    }

    @Test func aBodyOverTheLimitIsRefusedBeforeParsing() async {
        var options = StringBridge.Options()
        options.maxRequestBytes = 64
        let small = StringBridge.inProcess(options: options)
        let answer = object(await small.send(verb: "POST", path: "/v1/chats/c1/messages", body: "{\"text\": \"\(String(repeating: "x", count: 100))\"}"))
        #expect(answer["status"] as? Int == 413)
        #expect(answer["error"] as? String == "tooLarge")
    }

    @Test func aMissingConnectionAndATimeoutAreTyped() async {
        let anonymousOnly = StringBridge(schema: SampleSchema.schema, transports: .init(unauthenticated: InProcessTransport(routes: Usernames.routes(BridgeBackend()))))
        let noAccount = object(await anonymousOnly.send(verb: "GET", path: "/v2/keys/alice/1"))
        #expect(noAccount["error"] as? String == "notConnected")
        #expect(noAccount["status"] as? Int == 503)

        var options = StringBridge.Options()
        options.requestTimeout = .milliseconds(200)
        let impatient = StringBridge.inProcess(options: options)
        let slow = object(await impatient.send(verb: "POST", path: "/v1/chats/c1/messages", body: #"{"text": "slow"}"#))
        #expect(slow["type"] as? String == "failure")
        #expect(slow["failure"] as? String == "timeout")
        // An endpoint with its own timeout (lookUpUsernameHash: 10 s) keeps it: the bridge's
        // is for endpoints that set none.
        let late = object(await impatient.send(verb: "GET", path: "/v1/accounts/username_hash/" + PathEncoding.base64URL(Data([0x51]))))
        #expect(late["type"] as? String == "success", "\(late)")
    }

    @Test func aClosedBridgeAnswersClosed() async {
        let bridge = StringBridge.inProcess()
        await bridge.close()
        let answer = object(await bridge.send(verb: "GET", path: "/v2/keys/alice/1"))
        #expect(answer["error"] as? String == "closed")
        #expect(await bridge.receive(timeout: .seconds(30)) == #"{"type":"closed"}"#)
    }

    @Test func concurrentCommandsEachGetTheirOwnAnswer() async {
        let answers = await withTaskGroup(of: (Int, String).self) { group in
            for index in 0..<64 {
                group.addTask { (index, await bridge.send(verb: "GET", path: "/v2/keys/user\(index)/\(index)")) }
            }
            var collected: [Int: String] = [:]
            for await (index, answer) in group { collected[index] = answer }
            return collected
        }
        #expect(answers.count == 64)
        for (index, document) in answers {
            let answer = object(document)
            let key = (answer["result"] as? [String: Any])?["identityKey"] as? String
            #expect(key.flatMap { Data(base64Encoded: $0) } == Data("account:user\(index)/\(index)".utf8))
        }
    }
}
