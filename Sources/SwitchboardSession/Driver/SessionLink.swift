import Foundation
import SwitchboardChat
import SwitchboardRuntime

/// What a session needs from one live connection. `ChatConnection<Authenticated>` is one;
/// tests may supply their own to script the server in virtual time.
public protocol SessionLink: AnyObject, Sendable {
    /// Where the session's requests go while this link is current.
    var transport: any RPCTransport<Authenticated> { get }
    /// Yields whenever something arrives from the server; ends when the link closes.
    var activity: AsyncStream<Void> { get }
    /// Sends a heartbeat (a ping, and Signal's keepalive request).
    func probe() async
    /// Waits until the link has ended (and any push handler it was running has returned),
    /// and says why.
    func waitUntilEnded() async -> ChatConnectionError
    /// Closes the link and waits until it has ended.
    func end() async
}

/// Opens links for a session.
public protocol SessionConnector: Sendable {
    /// Connects with the account's credentials; pushes go to `onPush`.
    func connect(credentials: ChatClient.Credentials, onPush: @escaping ChatConnection<Authenticated>.PushHandler) async throws(ChatConnectionError) -> any SessionLink
}

extension ChatConnection: SessionLink where Auth == Authenticated {
    public var transport: any RPCTransport<Authenticated> { self }

    public func probe() async { await probe(requestPath: ChatServer.keepalivePath) }

    /// Ends only when the connection is completely over (its push handler returned), so the
    /// session never reconnects while an old handler still runs.
    public func waitUntilEnded() async -> ChatConnectionError { await waitUntilFinished() }

    public func end() async {
        await close()
        _ = await waitUntilFinished()
    }
}

/// The real connector: a `ChatConnector` whose connections leave heartbeats to the session.
public struct ChatSessionConnector: SessionConnector {
    /// The connector that opens each link, with keepalive turned off.
    public let connector: ChatConnector

    /// Connects to `url`; the session, not the connection, runs the heartbeat.
    public init(url: URL, options: ChatConnectionOptions = .init()) {
        var options = options
        options.keepalive = nil
        connector = ChatConnector(url: url, options: options)
    }

    public func connect(credentials: ChatClient.Credentials, onPush: @escaping ChatConnection<Authenticated>.PushHandler) async throws(ChatConnectionError) -> any SessionLink {
        try await connector.connectAuthenticated(credentials: credentials, onPush: onPush)
    }
}
