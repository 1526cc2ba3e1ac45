import Foundation
import SignalChat
import SwitchboardDynamic
import SwitchboardRuntime
import Testing

/// An empty path parameter makes an empty segment (`/v1/profile//2`) or a trailing slash
/// (`/v1/accounts/username_hash/`), which a router refuses or serves as another resource:
/// such a call fails with `invalidRequest` and nothing is sent, on every transport.
@Suite struct EmptyPathParameterTests {
    @Test func theEmptyParameterIsNamed() {
        let template = "/v1/profile/{identifier}/{version}"
        #expect(PathEncoding.emptyParameter(in: "/v1/profile//2", template: template) == "identifier")
        #expect(PathEncoding.emptyParameter(in: "/v1/profile/a/", template: template) == "version")
        #expect(PathEncoding.emptyParameter(in: "/v1/profile/a/?x=1", template: template) == "version")
        #expect(PathEncoding.emptyParameter(in: "/v1/profile/a/2", template: template) == nil)
        #expect(PathEncoding.emptyParameter(in: "/v1/keys/", template: "/v1/keys/{id:base64url}") == "id")
        // Query values may be empty; only the path's parameters are checked.
        #expect(PathEncoding.emptyParameter(in: "/v1/chats/c/messages?before_id=&limit=5",
                                            template: "/v1/chats/{chatId}/messages?before_id={beforeId}&limit={limit}") == nil)
        // Slashes in the query make no empty segment; a slash before it does.
        #expect(PathEncoding.emptyParameter(in: "/v1/profile/a/2?x=//", template: template) == nil)
        #expect(PathEncoding.emptyParameter(in: "/v1/profile/a/2?/", template: template) == nil)
        #expect(PathEncoding.emptyParameter(in: "/v1/profile//?x=//", template: template) == "identifier")
        // A path that does not follow the template (an interceptor's, a hand-built one) is not judged.
        #expect(PathEncoding.emptyParameter(in: "/v2/profile//2", template: template) == nil)
        #expect(PathEncoding.emptyParameter(in: "", template: template) == nil)
        #expect(PathEncoding.emptyParameter(in: "/v1/profile", template: template) == nil)
        // Templates without parameters, and gRPC-only endpoints without a path.
        #expect(PathEncoding.emptyParameter(in: "/v1/profile/", template: "/v1/profile/") == nil)
        #expect(PathEncoding.emptyParameter(in: "", template: "") == nil)
    }

    @Test func aGeneratedClientRefusesAnEmptyPathParameter() async {
        let transport = CapturingTransport<Authenticated>()
        let profiles = ProfilesClient(transport: transport)
        for request in [GetProfileRequest(identifier: "", version: "1"), GetProfileRequest(identifier: "a", version: "")] {
            let result = await profiles.getProfile(request)
            guard case let .invalidRequest(reason)? = result.transportError else {
                Issue.record("\(request) should fail with invalidRequest, not \(result)")
                continue
            }
            #expect(reason.contains(request.identifier.isEmpty ? "identifier" : "version"), "\(reason)")
            #expect(transport.captured.current == nil, "nothing is sent for \(request)")
        }
        _ = await profiles.getProfile(GetProfileRequest(identifier: "a", version: "1"))
        #expect(transport.captured.current?.path == "/v1/profile/a/1")
    }

    @Test func aTrailingParameterLeftEmptyIsRefused() async {
        let transport = CapturingTransport<Unauthenticated>()
        let usernames = UsernamesClient(transport: transport)
        let result = await usernames.lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data()))
        guard case .invalidRequest? = result.transportError else {
            Issue.record("an empty hash should fail with invalidRequest, not \(result)")
            return
        }
        #expect(transport.captured.current == nil)
    }

    @Test func theDynamicClientRefusesAnEmptyPathParameter() throws {
        let endpoint = try DynamicEndpoint(schema: DynamicCodecAgreementTests.signal, name: "ChatRoom.markRead")
        #expect(throws: DynamicCodecError.self) { try endpoint.request(fromJSON: Data(#"{"chatId": "", "upToMessageId": "m2"}"#.utf8)) }
        #expect(try endpoint.request(fromJSON: Data(#"{"chatId": "c", "upToMessageId": "m2"}"#.utf8)).path == "/v1/chats/c/read")
    }
}
