import Foundation
import SignalChat
import SwitchboardDynamic
import SwitchboardRuntime
import Testing

/// A path parameter of `.` or `..` would make a dot-segment (`/v1/chats/../read`), which
/// RFC 3986 normalisation turns into another resource: such a call fails with
/// `invalidRequest` and nothing is sent.
@Suite struct DotSegmentTests {
    @Test func dotSegmentsAreFoundPlainOrEscaped() {
        for path in ["/v1/chats/../read", "/v1/chats/./read", "/v1/chats/..", "/v1/chats/..?limit=5",
                     "/v1/chats/%2E%2E/read", "/v1/chats/%2e./read", "/v1/chats/.%2E/read", "/v1/chats/%2E/read"] {
            #expect(PathEncoding.dotSegment(in: path) != nil, "\(path)")
        }
        for path in ["/v1/chats/a..b/read", "/v1/chats/.../read", "/v1/chats/.a/read", "/v1/chats/%2E%2E%2E/read",
                     "/v1/chats/x/read?before=..", "/signal.chat.Messages/SendMessage", "/v1/chats//read", "", "/",
                     "/v1/chats/%41/read", "/v1/chats/%2F/read", "/v1/chats/a%2E/read", "/v1/chats/x?%2E"] {
            #expect(PathEncoding.dotSegment(in: path) == nil, "\(path)")
        }
    }

    @Test func aGeneratedClientRefusesAPathParameterOfDots() async {
        let transport = CapturingTransport<Authenticated>()
        let client = ChatRoomClient(transport: transport)
        for chatId in ["..", "."] {
            let result = await client.markRead(ReadReceipt(chatId: chatId, upToMessageId: "m2"))
            guard case .invalidRequest? = result.transportError else {
                Issue.record("'\(chatId)' should fail with invalidRequest, not \(result)")
                continue
            }
            #expect(transport.captured.current == nil, "nothing is sent for '\(chatId)'")
        }
        // Dots inside a value are no dot-segment: sent as they are.
        _ = await client.markRead(ReadReceipt(chatId: "a..b", upToMessageId: "m2"))
        #expect(transport.captured.current?.path == "/v1/chats/a..b/read")
    }

    @Test func anEscapedDotSegmentIsRefusedToo() async {
        let transport = CapturingTransport<Authenticated>()
        let request = RPCRequest(endpoint: ChatRoom.markRead, path: "/v1/chats/%2e%2E/read")
        let result = await RPCCall.send(request, over: transport, options: CallOptions())
        guard case .failure(.invalidRequest) = result else {
            Issue.record("expected invalidRequest, got \(result)")
            return
        }
        #expect(transport.captured.current == nil)
    }

    /// A deadline the request already carries is kept when it is earlier than the call's own.
    @Test func anEarlierDeadlineOnTheRequestIsKept() async {
        let transport = CapturingTransport<Authenticated>()
        let early = ContinuousClock.now.advanced(by: .seconds(1))
        var request = RPCRequest(endpoint: ChatRoom.markRead, path: "/v1/chats/x/read")
        request.deadline = early
        _ = await RPCCall.send(request, over: transport, options: CallOptions())
        let sent = transport.captured.current?.deadline
        #expect(sent != nil && sent! <= early, "the caller's deadline was extended to \(String(describing: sent))")
        // A later one gives way to the call's timeout.
        var late = RPCRequest(endpoint: ChatRoom.markRead, path: "/v1/chats/x/read")
        late.deadline = ContinuousClock.now.advanced(by: .seconds(3600))
        _ = await RPCCall.send(late, over: transport, options: CallOptions(timeout: .seconds(5)))
        let capped = transport.captured.current?.deadline
        #expect(capped != nil && capped! <= ContinuousClock.now.advanced(by: .seconds(5)))
    }

    @Test func theDynamicClientRefusesAPathParameterOfDots() throws {
        let endpoint = try DynamicEndpoint(schema: DynamicCodecAgreementTests.signal, name: "ChatRoom.markRead")
        #expect(throws: DynamicCodecError.self) { try endpoint.request(fromJSON: Data(#"{"chatId": "..", "upToMessageId": "m2"}"#.utf8)) }
        #expect(throws: DynamicCodecError.self) { try endpoint.request(fromJSON: Data(#"{"chatId": ".", "upToMessageId": "m2"}"#.utf8)) }
        #expect(try endpoint.request(fromJSON: Data(#"{"chatId": "a..b", "upToMessageId": "m2"}"#.utf8)).path == "/v1/chats/a..b/read")
    }

    /// A header-bound field holding NUL, CR or LF, which no client sends, is refused by the
    /// dynamic binding as generated handlers refuse it (400).
    @Test func theDynamicBindingRefusesAHeaderWithALineBreak() throws {
        let send = try DynamicEndpoint(schema: DynamicCodecAgreementTests.signal, name: "ChatRoom.sendChatMessage")
        for value in ["a\r\nX-Injected: 1", "a\nb", "a\u{0}b"] {
            #expect(throws: DynamicCodecError.self) {
                try send.requestMessage(pathParameters: ["chatId": "x"], query: "", headers: ["Idempotency-Key": value], jsonBody: Data("{}".utf8))
            }
        }
        #expect(try send.requestMessage(pathParameters: ["chatId": "x"], query: "", headers: ["Idempotency-Key": "a"], jsonBody: Data("{}".utf8)) != nil)
    }
}
