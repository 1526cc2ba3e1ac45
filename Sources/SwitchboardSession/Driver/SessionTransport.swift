import SwitchboardRuntime

/// The session's connection as a transport: generated clients built on it once keep
/// working across reconnects. While the session is not CONNECTED, requests fail at once
/// with `notConnected` rather than waiting; queueing them is the app's decision.
public struct SessionTransport: RPCTransport {
    /// The account's connection: a session connects only with the account's credentials.
    public typealias Auth = Authenticated
    let currentLink: @Sendable () -> (any SessionLink)?

    public func send(_ request: RPCRequest) async throws(TransportError) -> RPCResponse {
        guard let link = currentLink() else { throw .notConnected }
        return try await link.transport.send(request)
    }

    /// The current connection's default, so its options hold through the session.
    public var defaultRequestTimeout: Duration { currentLink()?.transport.defaultRequestTimeout ?? RPCCall.defaultRequestTimeout }
}
