@testable import SwitchboardChat
import SwitchboardWebSocket
import Testing

/// Which TLS sessions a chat connection may resume: only those of its own kind (an account's,
/// or the unauthenticated connection's), so a server cannot link the two through a ticket;
/// a preconnect, not knowing whose it will be, resumes none. An app's own scope is kept.
@Suite struct TLSSessionScopeTests {
    @Test func connectionsScopeTheirSessionsByKind() {
        let options = ChatConnectionOptions(tls: TLSOptions(sessionScope: "app"))
        let account = options.webSocketOptions(extraHeaders: [], sessionScope: "account alice.1").tls
        let anonymous = options.webSocketOptions(extraHeaders: [], sessionScope: "unauthenticated").tls
        let preconnect = options.webSocketOptions(extraHeaders: [], sessionScope: nil).tls
        #expect(account.sessionScope == "app account alice.1" && account.resumesSessions)
        #expect(anonymous.sessionScope == "app unauthenticated" && anonymous.resumesSessions)
        #expect(!preconnect.resumesSessions)
        #expect(ChatConnectionOptions().webSocketOptions(extraHeaders: [], sessionScope: "unauthenticated").tls.sessionScope == "unauthenticated")
    }
}
