import Foundation
import SwitchboardRuntime
import SwitchboardWebSocket

/// How chat connections are opened and kept alive. The defaults follow Signal's clients.
public struct ChatConnectionOptions: Sendable {
    /// Headers on every upgrade request: `User-Agent`, `X-Signal-Agent` and the like.
    public var headers: [HTTPHeaderField]
    /// The limit for the whole connect: DNS, TCP, TLS and the upgrade together (Signal: 10 s).
    public var connectTimeout: Duration
    /// Pings and keepalive requests while open; `nil` turns them off.
    public var keepalive: KeepalivePolicy?
    /// How `wss://` verifies the server.
    public var tls: TLSOptions
    /// WebSocket limits (message size cap, close timeout).
    public var webSocket: WebSocketConnection.Options
    /// The largest message accepted (512 KiB, as Signal's server allows), as
    /// `WebSocketConnection.Options.maximumMessageSize`.
    public var maximumMessageSize: Int {
        get { webSocket.maximumMessageSize }
        set { webSocket.maximumMessageSize = newValue }
    }
    /// How long a connect waits for a preconnect still in flight before opening its own socket.
    public var preconnectWait: Duration
    /// How old a finished preconnect may be and still be used; servers drop idle sockets.
    public var preconnectMaxAge: Duration
    /// The deadline of a request whose call and endpoint set none (30 s): a server that
    /// answers keepalives but never a request cannot hold its caller for ever.
    public var defaultRequestTimeout: Duration
    /// Receives what the connection dropped or ignored (unknown response ids, bad frames),
    /// for the app's logs, once for each, as it happens: on the connection's event loop, or
    /// on the task that handles pushes, or the queue that decodes large messages, so possibly
    /// from two threads at once. A hostile server can make many: hand them to a logger's
    /// queue and return.
    public var diagnostics: (@Sendable (ChatDiagnostic) -> Void)?
    /// At most this many diagnostics per window reach ``diagnostics`` (100 every 10 s); the
    /// rest are counted and reported as one `.suppressed(count:)` (the last such count, as the
    /// connection ends, comes from the task that ends it rather than the event loop).
    public var diagnosticsLimit: DiagnosticsLimit
    /// How many pushed requests may wait for the push handler. Signal's server keeps at most
    /// 256 unanswered; one that pushes past this is cut off with 1008 (`protocolError`), and
    /// the pushes the handler never saw stay unacknowledged, so the next connection gets them.
    public var maximumQueuedPushes: Int
    /// How much memory the pushes waiting for the handler may hold together; past it the
    /// server is cut off as past ``maximumQueuedPushes``. A push counts what it holds once
    /// decoded: its envelope's bytes plus about 100 bytes per header line and 1 KiB of
    /// bookkeeping, so a server cannot multiply the budget with many tiny headers. The
    /// default, 160 MiB, holds Signal's 256 unacknowledged pushes at the default 512 KiB
    /// message cap.
    public var maximumQueuedPushBytes: Int
    /// Which event loops serve the connection: the process's shared ones (the default), a
    /// group of the app's, or a loop of its own that ends with the connection.
    public var eventLoops: EventLoopGroupProvider
    /// How long closing waits for a push handler still running so its answer goes out (5 s);
    /// past it the handler is cancelled and left behind, so a hung handler cannot hold a
    /// logout or reconnect for ever.
    public var pushHandlerGrace: Duration
    /// The default ``pushHandlerGrace``.
    public static let defaultPushHandlerGrace: Duration = .seconds(5)
    /// The largest request envelope sent (512 KiB, what Signal's server takes): a larger one
    /// fails with `invalidRequest` before it goes out, alone. Sent, the server would close the
    /// connection with 1009, failing every call on it, and a retry would do the same on the
    /// next. Raise it with the server's limit.
    public var maximumRequestSize = 512 * 1024
    /// Wrap the handling of every push, outermost first: they see each push and how it was
    /// answered, pushes whose payload did not decode included (a `LoggingInterceptor`, say).
    public var pushInterceptors: [any PushInterceptor]

    /// Creates options; the defaults follow Signal's clients.
    public init(
        headers: [HTTPHeaderField] = [], connectTimeout: Duration = .seconds(10), keepalive: KeepalivePolicy? = KeepalivePolicy(),
        tls: TLSOptions = .init(), webSocket: WebSocketConnection.Options = .init(),
        preconnectWait: Duration = .seconds(1), preconnectMaxAge: Duration = .seconds(15),
        diagnostics: (@Sendable (ChatDiagnostic) -> Void)? = nil, diagnosticsLimit: DiagnosticsLimit = .init(),
        maximumQueuedPushes: Int = 1024, maximumQueuedPushBytes: Int = 160 * 1024 * 1024,
        defaultRequestTimeout: Duration = RPCCall.defaultRequestTimeout, pushInterceptors: [any PushInterceptor] = [],
        eventLoops: EventLoopGroupProvider = .shared, pushHandlerGrace: Duration = ChatConnectionOptions.defaultPushHandlerGrace
    ) {
        self.pushHandlerGrace = pushHandlerGrace
        self.pushInterceptors = pushInterceptors
        self.eventLoops = eventLoops
        self.defaultRequestTimeout = defaultRequestTimeout
        self.maximumQueuedPushes = maximumQueuedPushes
        self.maximumQueuedPushBytes = maximumQueuedPushBytes
        self.diagnostics = diagnostics
        self.diagnosticsLimit = diagnosticsLimit
        self.headers = headers
        self.connectTimeout = connectTimeout
        self.keepalive = keepalive
        self.tls = tls
        self.webSocket = webSocket
        self.preconnectWait = preconnectWait
        self.preconnectMaxAge = preconnectMaxAge
    }

    var pushBudget: PushBudget { PushBudget(maximumCount: maximumQueuedPushes, maximumBytes: maximumQueuedPushBytes) }

    /// The WebSocket options of one connection. `sessionScope` keeps TLS session resumption
    /// within connections of the same kind (``TLSOptions/sessionScope``); nil turns it off
    /// (a preconnect, which does not know yet whose connection it will be).
    func webSocketOptions(extraHeaders: [HTTPHeaderField], sessionScope: String?) -> WebSocketClient.Options {
        var connection = webSocket
        // The chat connection routes each frame on the socket's event loop.
        connection.deliversMessagesDirectly = true
        var sessionTLS = sessionScope.map { tls.scoped($0) } ?? tls
        if sessionScope == nil { sessionTLS.resumesSessions = false }
        return WebSocketClient.Options(headers: headers + extraHeaders, connectTimeout: connectTimeout, connection: connection, tls: sessionTLS,
                                       eventLoops: eventLoops)
    }
}
