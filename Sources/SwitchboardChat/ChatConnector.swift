import Foundation
import SwitchboardIO
import SwitchboardRuntime
import SwitchboardWebSocket

/// Opens chat connections to one server, and can open the socket early.
///
/// ``preconnect()`` does DNS, TCP and TLS while the app is still loading credentials; the
/// next connect upgrades that socket if it is ready within `preconnectWait` and younger
/// than `preconnectMaxAge`. Otherwise it opens its own, and the preconnected socket is
/// closed whenever it arrives, so none is leaked.
public final class ChatConnector: @unchecked Sendable {
    /// Opens DNS, TCP and TLS for a preconnect; swappable so tests can watch what happens to it.
    typealias TransportOpener = @Sendable (URL, WebSocketClient.Options) async throws(WebSocketError) -> WebSocketTransport

    /// The server's chat URL, such as `wss://chat.example.org/v1/websocket/`.
    public let url: URL
    /// How each connection is opened and kept alive; preconnects use it too.
    public let options: ChatConnectionOptions
    private let openTransport: TransportOpener
    private let lock = AdaptiveLock()
    private var preconnecting: Task<WebSocketTransport?, Never>?

    /// A connector for `url`.
    public convenience init(url: URL, options: ChatConnectionOptions = .init()) {
        self.init(url: url, options: options) { url, options async throws(WebSocketError) in
            try await WebSocketClient.openTransport(to: url, options: options)
        }
    }

    init(url: URL, options: ChatConnectionOptions, openTransport: @escaping TransportOpener) {
        self.url = url
        self.options = options
        self.openTransport = openTransport
    }

    deinit { discardPreconnect() }

    /// Starts DNS, TCP and TLS now, unless a preconnect is already under way. Failures are
    /// silent: the connect that follows opens its own socket and reports its own error.
    public func preconnect() {
        let (url, options, open) = (url, options.webSocketOptions(extraHeaders: [], sessionScope: nil), openTransport)
        lock.withLock {
            guard preconnecting == nil else { return }
            preconnecting = Task { try? await open(url, options) }
        }
    }

    /// Drops a preconnect that no connect will use; its socket is closed when it arrives.
    public func discardPreconnect() {
        guard let task = lock.withLock({ () -> Task<WebSocketTransport?, Never>? in
            defer { preconnecting = nil }
            return preconnecting
        }) else { return }
        Task { await task.value?.close() }
    }

    /// Connects with the account's credentials (Basic `user.device:password`).
    public func connectAuthenticated(
        credentials: ChatClient.Credentials,
        onPush: @escaping ChatConnection<Authenticated>.PushHandler = { _ in .unknown }
    ) async throws(ChatConnectionError) -> ChatConnection<Authenticated> {
        let socket = try await open(extraHeaders: [HTTPHeaderField(name: "Authorization", value: credentials.authorization)],
                                    sessionScope: "account \(credentials.username).\(credentials.deviceID)")
        return ChatConnection(socket: socket, keepalive: options.keepalive, diagnostics: options.diagnostics, diagnosticsLimit: options.diagnosticsLimit,
                              pushBudget: options.pushBudget, defaultRequestTimeout: options.defaultRequestTimeout,
                              pushHandlerGrace: options.pushHandlerGrace, maximumRequestSize: options.maximumRequestSize,
                              onPush: InterceptorChain.push(options.pushInterceptors, around: onPush))
    }

    /// Connects without credentials.
    public func connectUnauthenticated(
        onPush: @escaping ChatConnection<Unauthenticated>.PushHandler = { _ in .unknown }
    ) async throws(ChatConnectionError) -> ChatConnection<Unauthenticated> {
        let socket = try await open(extraHeaders: [], sessionScope: "unauthenticated")
        return ChatConnection(socket: socket, keepalive: options.keepalive, diagnostics: options.diagnostics, diagnosticsLimit: options.diagnosticsLimit,
                              pushBudget: options.pushBudget, defaultRequestTimeout: options.defaultRequestTimeout,
                              pushHandlerGrace: options.pushHandlerGrace, maximumRequestSize: options.maximumRequestSize,
                              onPush: InterceptorChain.push(options.pushInterceptors, around: onPush))
    }

    private func open(extraHeaders: [HTTPHeaderField], sessionScope: String) async throws(ChatConnectionError) -> WebSocketConnection {
        // One deadline for the whole connect, however it is split between the steps.
        let deadline = ContinuousClock.now.advanced(by: options.connectTimeout)
        var webSocketOptions = options.webSocketOptions(extraHeaders: extraHeaders, sessionScope: sessionScope)
        func remaining() -> Duration { max(.zero, ContinuousClock.now.duration(to: deadline)) }
        if let early = await takePreconnected() {
            if Task.isCancelled {
                early.close()
                throw ChatConnectionError(connectFailure: .io("connect cancelled"))
            }
            webSocketOptions.connectTimeout = remaining()
            do throws(WebSocketError) {
                return try await WebSocketClient.upgrade(early, url: url, options: webSocketOptions)
            } catch {
                // The server may have dropped the idle socket; a refusal, though, is the answer.
                if case .upgradeRejected = error { throw ChatConnectionError(connectFailure: error) }
            }
        }
        do throws(WebSocketError) {
            webSocketOptions.connectTimeout = remaining()
            // One step, so that no wait for the task pool sits between the socket and the
            // upgrade. A connect cancelled while its socket opens (its session logged out)
            // does not upgrade: the server would take it for this device's newest connection.
            return try await WebSocketClient.connect(to: url, options: webSocketOptions)
        } catch {
            throw ChatConnectionError(connectFailure: error)
        }
    }

    /// The preconnected socket if it is ready within `preconnectWait` and not too old.
    private func takePreconnected() async -> WebSocketTransport? {
        guard let task = lock.withLock({ () -> Task<WebSocketTransport?, Never>? in
            defer { preconnecting = nil }
            return preconnecting
        }) else { return nil }
        let race = FirstAnswer<WebSocketTransport?>()
        Task {
            let transport = await task.value
            // Too late: the connect moved on, so nobody else will close it.
            if !race.offer(transport) { transport?.close() }
        }
        let timer = Task { [wait = options.preconnectWait] in
            try? await Task.sleep(for: wait)
            _ = race.offer(nil)
        }
        let transport = await race.value
        timer.cancel()
        guard let transport else { return nil }
        if transport.openedAt.duration(to: .now) > options.preconnectMaxAge {
            transport.close()
            return nil
        }
        return transport
    }
}
