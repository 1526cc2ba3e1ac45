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
    /// Waits until the link can no longer carry anything (its socket closed), though a push
    /// handler may still be running, and says why. By default, ``waitUntilEnded()``.
    func waitUntilDisconnected() async -> ChatConnectionError
    /// Closes the link and waits until it has ended.
    func end() async
    /// Ends the link at once, without waiting on the server (it stopped answering), and
    /// waits until it has ended; requests in flight fail with `reason`. By default, ``end()``.
    func endAbruptly(reason: ChatConnectionError) async
}

extension SessionLink {
    /// Ends the link as ``end()`` does.
    public func endAbruptly(reason: ChatConnectionError) async { await end() }

    /// Waits as ``waitUntilEnded()`` does.
    public func waitUntilDisconnected() async -> ChatConnectionError { await waitUntilEnded() }
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

    /// Returns once the socket has closed, not waiting for a push handler still running.
    public func waitUntilDisconnected() async -> ChatConnectionError {
        let info = await waitUntilClosed()
        return disconnectReason ?? ChatConnectionError(closeInfo: info)
    }

    public func end() async {
        await close()
        _ = await waitUntilFinished()
    }

    public func endAbruptly(reason: ChatConnectionError) async {
        abort(reason: reason)
        _ = await waitUntilFinished()
    }
}

/// The real connector: a `ChatConnector` whose connections leave heartbeats to the session.
public struct ChatSessionConnector: SessionConnector {
    /// The connector that opens each link, with keepalive turned off.
    public let connector: ChatConnector
    /// The request sent with each heartbeat's ping: `options.keepalive`'s `requestPath`
    /// (Signal's `/v1/keepalive` by default), or none when that policy has none.
    public let keepaliveRequestPath: String?

    /// Connects to `url`; the session, not the connection, runs the heartbeat (at the
    /// session's interval), with `options.keepalive`'s request path.
    public init(url: URL, options: ChatConnectionOptions = .init()) {
        var options = options
        keepaliveRequestPath = options.keepalive.map { $0.requestPath } ?? ChatServer.keepalivePath
        options.keepalive = nil
        connector = ChatConnector(url: url, options: options)
    }

    public func connect(credentials: ChatClient.Credentials, onPush: @escaping ChatConnection<Authenticated>.PushHandler) async throws(ChatConnectionError) -> any SessionLink {
        let connection = try await connector.connectAuthenticated(credentials: credentials, onPush: onPush)
        guard keepaliveRequestPath != ChatServer.keepalivePath else { return connection }
        return ProbingLink(connection: connection, requestPath: keepaliveRequestPath)
    }
}

/// A chat connection whose heartbeat sends another keepalive request, or none.
final class ProbingLink: SessionLink {
    let connection: ChatConnection<Authenticated>
    let requestPath: String?

    init(connection: ChatConnection<Authenticated>, requestPath: String?) {
        self.connection = connection
        self.requestPath = requestPath
    }

    var transport: any RPCTransport<Authenticated> { connection }
    var activity: AsyncStream<Void> { connection.activity }
    func probe() async { await connection.probe(requestPath: requestPath) }
    func waitUntilEnded() async -> ChatConnectionError { await connection.waitUntilEnded() }
    func waitUntilDisconnected() async -> ChatConnectionError { await connection.waitUntilDisconnected() }
    func end() async { await connection.end() }
    func endAbruptly(reason: ChatConnectionError) async { await connection.endAbruptly(reason: reason) }
}
