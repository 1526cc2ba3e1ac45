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
    /// Waits until the link ends and says why.
    func waitUntilEnded() async -> ChatConnectionError
    /// Closes the link.
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

    public func waitUntilEnded() async -> ChatConnectionError {
        let info = await waitUntilClosed()
        // The read loop settles the reason just after the socket closes; the close code
        // is the answer until then.
        return disconnectReason ?? ChatConnectionError(closeInfo: info)
    }

    public func end() async { await close() }
}

/// The real connector: a `ChatConnector` whose connections leave heartbeats to the session.
public struct ChatSessionConnector: SessionConnector {
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
