import Foundation
import SignalChat
import SwitchboardChat
import SwitchboardRuntime
import SwitchboardSession

// Watch a session's lifecycle against the local mock server:
//   swift run session-demo
// It connects, loses the server and gets it back, goes offline and online, and finally
// meets a server that ends the session (4401), showing each state and banner on the way.

struct DemoMessages: MessagesHandler {
    func sendMessage(_ request: SendMessageRequest, context: ServerContext) async throws(Messages.SendMessageError) -> SendMessageResponse {
        SendMessageResponse(needsSync: false)
    }
}

func say(_ text: String) { print("         \(text)") }

func waitFor(_ session: Session<ContinuousClock>, _ state: SessionState, seconds: Double = 15) async {
    let deadline = Date().addingTimeInterval(seconds)
    while session.state != state && Date() < deadline { try? await Task.sleep(for: .milliseconds(20)) }
    if session.state != state { say("(gave up waiting for \(state))") }
}

var server = try ChatServer(routes: DemoMessages().routes)
let port = server.port
let session = Session(connector: ChatSessionConnector(url: server.url), invalidateCaches: { say("(cached history and member lists invalidated)") })
let printer = Task {
    for await change in session.changes {
        let screen: String
        switch change.uiHint {
        case .loginForm: screen = "login form"
        case .loadingIndicator: screen = "loading indicator"
        case .usernameSelection: screen = "username selection"
        case .permanentError: screen = "permanent error, with a dismiss button"
        case .clientUI(nil): screen = "client UI"
        case let .clientUI(banner?): screen = "client UI, banner \"\(banner.text)\""
        }
        let reason = change.reason.map { " because \($0)" } ?? ""
        print("\(change.to.rawValue.padding(toLength: 13, withPad: " ", startingAt: 0)) \(screen); failures: \(change.failureCount)\(reason)")
    }
}

say("log in with stored credentials")
session.logIn(cached: ChatClient.Credentials(username: "demo", deviceID: 1, password: "secret"))
await waitFor(session, .connected)
let messages = MessagesClient(transport: session.transport)
say("send a message while connected: \(await messages.sendMessage(SendMessageRequest(destination: "bob")).value != nil ? "sent" : "failed")")

say("the server goes away, and comes back half a second later")
server.stop()
await waitFor(session, .disconnected)
if case .failure(.notConnected) = await messages.sendMessage(SendMessageRequest(destination: "bob")) {
    say("a message sent now fails fast: not connected")
}
try await Task.sleep(for: .milliseconds(500))
server = try ChatServer(routes: DemoMessages().routes, port: port)
await waitFor(session, .connected)

say("the server goes away again, and the device loses its network")
server.stop()
await waitFor(session, .disconnected)
session.deviceOffline()
server = try ChatServer(routes: DemoMessages().routes, port: port)
try await Task.sleep(for: .milliseconds(300))
say("the network is back")
session.deviceOnline()
await waitFor(session, .connected)

say("the server ends the session: reauthentication required (4401)")
await server.client(at: 0)?.close(code: .reauthenticationRequired)
await waitFor(session, .error)
say("the user dismisses the error")
session.dismiss()
await waitFor(session, .ready)

await session.shutDown()
server.stop()
_ = await printer.value
say("done")
