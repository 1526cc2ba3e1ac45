import Foundation
import SignalChat
@testable import SwitchboardChat
import SwitchboardRuntime
@testable import SwitchboardWebSocket
import Testing

/// No credential, secret header value, key or `@sensitive` field is reachable through
/// `description`, `debugDescription`, `dump` or `Mirror`: a secret is planted in every
/// public type that can carry one, and every way of printing it is scanned.
@Suite struct SecretRedactionTests {
    static let secret = "s3cr3t-PLANTED-9f2"
    static var secretBytes: Data { Data(secret.utf8) }

    /// Every form in which the secret could show up.
    static let forms: [String] = [secret, secretBytes.base64EncodedString(), secretBytes.map(String.init).joined(separator: ", ")]

    /// Texts from every way of printing `value`, recursing through its mirror.
    static func printed(_ value: Any) -> [String] {
        var texts = [String(describing: value), String(reflecting: value)]
        var dumped = ""
        dump(value, to: &dumped)
        texts.append(dumped)
        func walk(_ value: Any, depth: Int) {
            for child in Mirror(reflecting: value).children {
                texts.append(String(describing: child.value))
                texts.append(String(reflecting: child.value))
                if depth < 8 { walk(child.value, depth: depth + 1) }
            }
        }
        walk(value, depth: 0)
        return texts
    }

    func expectNoSecret(_ value: Any, _ name: String) {
        let leaks = Self.printed(value).filter { text in Self.forms.contains { text.contains($0) } }
        #expect(leaks.isEmpty, "\(name) shows the secret: \(leaks.first ?? "")")
    }

    static let endpoint = EndpointDescriptor(rpcName: "test.Secrets/Get", verb: "GET", pathTemplate: "/v1/secrets/{hash}", auth: .none)
    static var secretHeaders: RPCHeaders {
        ["Authorization": "Basic \(secret)", "Unidentified-Access-Key": secret, "X-App-Token": secret, "Content-Type": "application/json"]
    }

    @Test func runtimeRequestsResponsesAndHeaders() {
        expectNoSecret(Self.secretHeaders, "RPCHeaders")
        expectNoSecret(RPCRequest(endpoint: Self.endpoint, path: "/v1/secrets/\(Self.secret)?token=\(Self.secret)",
                                  logSafePath: "/v1/secrets/[REDACTED]", headers: Self.secretHeaders, body: Self.secretBytes), "RPCRequest")
        expectNoSecret(ServerRequest(verb: "GET", path: "/v1/secrets/\(Self.secret)", headers: Self.secretHeaders, body: Self.secretBytes), "ServerRequest")
        expectNoSecret(RPCResponse(status: 200, headers: ["Set-Cookie": Self.secret], body: Self.secretBytes, message: "OK"), "RPCResponse")
        expectNoSecret(ServerContext(auth: .account, headers: Self.secretHeaders, pathParameters: ["hash": Self.secret],
                                     query: [(name: "token", value: Self.secret)]), "ServerContext")
    }

    /// The scan itself finds a secret wherever Swift's defaults would print it.
    @Test func theScanFindsUnredactedSecrets() {
        struct Plain { var password: String; var key: Data }
        let texts = Self.printed(Plain(password: "x", key: Self.secretBytes)) + Self.printed([("token", Self.secret)])
        #expect(Self.forms.contains { form in texts.contains { $0.contains(form) } })
        #expect(Self.printed(["a": Plain(password: Self.secret, key: Data())]).contains { $0.contains(Self.secret) })
    }

    @Test func harmlessHeaderValuesStayVisible() {
        let headers: RPCHeaders = ["Content-Type": "application/json", "Authorization": "x"]
        #expect(headers.description == "[Content-Type: application/json, Authorization: [REDACTED]]")
        #expect(HTTPHeaderField(name: "User-Agent", value: "app/1").description == "User-Agent: app/1")
        #expect(LogRedaction.visibleHeaderNames == HeaderRedaction.visibleHeaderNames, "one rule in both modules")
        // Every visible name in any case; nothing else, whatever its length.
        for name in LogRedaction.visibleHeaderNames {
            #expect(LogRedaction.showsValue(ofHeader: name) && LogRedaction.showsValue(ofHeader: name.uppercased()), "\(name)")
        }
        for name in ["authorization", "Authorization", "x-signal-key", "dates", "", "content-type-x", "h\u{e9}st", "sec-websoc\u{212A}et-version" /* lowercases to a visible name of another length: hidden */] {
            #expect(!LogRedaction.showsValue(ofHeader: name), "\(name)")
        }
    }

    @Test func webSocketAndChatConfiguration() throws {
        let header = HTTPHeaderField(name: "Authorization", value: "Basic \(Self.secret)")
        expectNoSecret(header, "HTTPHeaderField")
        expectNoSecret(WebSocketClient.Options(headers: [header]), "WebSocketClient.Options")
        expectNoSecret(ChatConnectionOptions(headers: [header, HTTPHeaderField(name: "X-Token", value: Self.secret)]), "ChatConnectionOptions")
        expectNoSecret(WebSocketHandshake.ClientRequest(host: "chat.example", port: 443, path: "/v1/websocket/?login=a&password=\(Self.secret)",
                                                        isSecure: true, headers: [header]), "handshake client request")
        let head = try #require(try HTTPHead.parse(Array(("GET /v1/websocket/?password=\(Self.secret) HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n"
            + "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nAuthorization: \(Self.secret)\r\n\r\n").utf8)))
        expectNoSecret(try WebSocketHandshake.parseUpgrade(head.head), "handshake server request")
        expectNoSecret(ChatClient.Credentials(username: "aci-1", deviceID: 2, password: Self.secret), "ChatClient.Credentials")
    }

    @Test func generatedKeysAndSensitiveFields() {
        expectNoSecret(AccessKey(Self.secretBytes), "AccessKey")
        expectNoSecret(GroupSendToken(Self.secretBytes), "GroupSendToken")
        expectNoSecret(LookUpUsernameHashRequest(hash: Self.secretBytes), "LookUpUsernameHashRequest")
        expectNoSecret(Envelope(content: Self.secretBytes), "Envelope")
        expectNoSecret([Envelope(content: Self.secretBytes)], "a list of Envelopes")
    }

    /// A field this schema does not know may be one a newer schema marks `@sensitive`: what
    /// a message keeps of it shows as a size, in a message with no `@sensitive` field of its own.
    @Test func unknownFieldsShowOnlyTheirSize() throws {
        // Field 99, length-delimited: tag 99 << 3 | 2 = 794, a two-byte varint.
        let wire: [UInt8] = [0x9A, 0x06, UInt8(Self.secretBytes.count)] + Array(Self.secretBytes)
        let decoded = try LookUpUsernameHashResponse(serializedBytes: wire)
        #expect(decoded.unknownFields.bytes == wire, "the secret is there to leak")
        expectNoSecret(decoded, "a message holding an unknown field")
        expectNoSecret(decoded.unknownFields, "UnknownFields")
        #expect(decoded.unknownFields.description == "UnknownFields(\(wire.count) bytes)")
    }

    @Test func aFakeServersRecordedRequest() async throws {
        let fake = FakeServerTransport<Unauthenticated>()
        let call = Task {
            await RPCCall.send(RPCRequest(endpoint: Self.endpoint, path: "/v1/secrets/\(Self.secret)", logSafePath: "/v1/secrets/[REDACTED]",
                                          headers: Self.secretHeaders, body: Self.secretBytes), over: fake, options: .init())
        }
        let request = try await fake.nextRequest()
        expectNoSecret(request, "FakeServerTransport.IncomingRequest")
        fake.respond(to: request.id, status: 204)
        _ = await call.value
    }
}
