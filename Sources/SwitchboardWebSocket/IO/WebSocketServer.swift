import Foundation

/// A WebSocket server on the same engine: listen, accept, upgrade, hand each connection to a handler.
public final class WebSocketServer: @unchecked Sendable {
    /// How to answer an upgrade request.
    public enum UpgradeDecision: Sendable {
        /// Accept, adding these headers (Signal sends `X-Signal-Timestamp`) and choosing a
        /// subprotocol. `context` (what the upgrade decided, such as who authenticated) travels
        /// with this connection to the handler as ``WebSocketConnection/upgradeContext``.
        case accept(headers: [HTTPHeaderField] = [], subprotocol: String? = nil, context: (any Sendable)? = nil)
        /// Refuse with an HTTP status (403 for bad credentials, 499 for an expired app...).
        case reject(status: Int, reason: String, headers: [HTTPHeaderField] = [], body: [UInt8] = [])
    }

    /// What one server holds at most, and for how long.
    public struct Limits: Sendable {
        /// The most connections served at once, handshakes included. Past it, a new
        /// connection is answered `503 Service Unavailable` with `Retry-After`, and closed.
        public var maximumConnections: Int
        /// How long a connection may take to send its upgrade request.
        public var handshakeTimeout: Duration
        /// How long an upgraded connection may send nothing at all (no message, ping or
        /// pong) before the server closes it with 1001 (going away); `nil` for never. A
        /// client that sends keepalives (Signal's every 30 s) stays.
        public var idleTimeout: Duration?

        /// Defaults: 1,024 connections, 10 s to upgrade, 120 s of silence.
        public init(maximumConnections: Int = 1024, handshakeTimeout: Duration = .seconds(10), idleTimeout: Duration? = .seconds(120)) {
            self.maximumConnections = maximumConnections
            self.handshakeTimeout = handshakeTimeout
            self.idleTimeout = idleTimeout
        }
    }

    /// The port the server listens on.
    public let port: Int
    private let listener: TCPListener
    private let connections = NSLock()
    private var open: [WebSocketConnection] = []
    /// Connections accepted and not yet ended, handshakes included.
    private var admitted = 0
    /// Connections past the limit being told so; a flood beyond this many is dropped unanswered.
    private var refusing = 0
    private static let maximumRefusing = 64

    /// How many connections the server holds now, handshakes included.
    public var connectionCount: Int { connections.withLock { admitted } }

    /// Starts listening on `host:port` (0 picks a free port) and serving in the background.
    /// Each upgraded connection goes to `handler`; when the handler returns, the connection closes.
    public init(
        host: String = "127.0.0.1", port: Int = 0, options: WebSocketConnection.Options = .init(),
        limits: Limits = .init(),
        tls: TLSServerContext? = nil,
        upgrade: @escaping @Sendable (WebSocketHandshake.ServerRequest) -> UpgradeDecision = { _ in .accept() },
        handler: @escaping @Sendable (WebSocketConnection) async -> Void
    ) throws(WebSocketError) {
        listener = try TCPListener(host: host, port: port)
        self.port = listener.port
        var options = options
        options.idleTimeout = limits.idleTimeout
        Thread.detachNewThread { [listener, self, options] in
            while let socket = listener.accept() {
                switch admit(limit: limits.maximumConnections) {
                case .serve:
                    Thread.detachNewThread {
                        guard let connection = self.upgrade(socket, tls: tls, options: options, timeout: limits.handshakeTimeout, decide: upgrade) else {
                            self.connections.withLock { self.admitted -= 1 }
                            return
                        }
                        self.connections.withLock { self.open.append(connection) }
                        Task {
                            await handler(connection)
                            // A handler that returns is done with the connection: answer a peer's
                            // close now rather than after the grace period, or start our own.
                            _ = await connection.close()
                        }
                        Task {
                            _ = await connection.waitUntilClosed()
                            self.connections.withLock {
                                self.open.removeAll { $0 === connection }
                                self.admitted -= 1
                            }
                        }
                    }
                case .refuse:
                    Thread.detachNewThread {
                        Self.refuse(socket, timeout: min(limits.handshakeTimeout, .seconds(2)))
                        self.connections.withLock { self.refusing -= 1 }
                    }
                case .drop:
                    socket.close()
                }
            }
        }
    }

    private enum Admission { case serve, refuse, drop }

    private func admit(limit: Int) -> Admission {
        connections.withLock {
            if admitted < limit {
                admitted += 1
                return .serve
            }
            guard refusing < Self.maximumRefusing else { return .drop }
            refusing += 1
            return .refuse
        }
    }

    /// Reads the request (so closing sends no reset that could destroy the answer), answers
    /// 503 and closes.
    private static func refuse(_ socket: TCPSocket, timeout: Duration) {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        var received: [UInt8] = []
        while (try? HTTPHead.parse(received)) == nil, received.count < 16 * 1024 {
            guard (try? socket.setReadDeadline(deadline)) != nil,
                  let chunk = try? socket.read(maximum: 4096), !chunk.isEmpty else { break }
            received += chunk
        }
        try? socket.write(WebSocketHandshake.rejectResponse(status: 503, reason: "Service Unavailable",
                                                            headers: [HTTPHeaderField(name: "Retry-After", value: "1")]))
        socket.close()
    }

    private func upgrade(_ tcp: TCPSocket, tls: TLSServerContext?, options: WebSocketConnection.Options, timeout: Duration, decide: @Sendable (WebSocketHandshake.ServerRequest) -> UpgradeDecision) -> WebSocketConnection? {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        var received: [UInt8] = []
        var stream: (any ByteStream)?
        do throws(WebSocketError) {
            let socket: any ByteStream
            #if canImport(CSwitchboardOpenSSL)
            socket = try tls.map { context throws(WebSocketError) in try TLSStream(serverOver: tcp, context: context, deadline: deadline) } ?? tcp
            #else
            socket = tcp
            #endif
            stream = socket
            while true {
                try socket.setReadDeadline(deadline)
                let chunk = try socket.read(maximum: 4096)
                guard !chunk.isEmpty else { throw .invalidHTTP("closed during the handshake") }
                received += chunk
                // A request starts with a method's capital letters; anything else (a TLS
                // ClientHello sent to a plain port, say) is answered at once, not after the
                // handshake timeout, so the client can tell what went wrong.
                if let first = received.first, !(UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(first) {
                    try? socket.write(WebSocketHandshake.rejectResponse(status: 400, reason: "Bad Request", body: Array("not an HTTP request".utf8)))
                    throw .invalidHTTP("not an HTTP request")
                }
                guard let (head, consumed) = try HTTPHead.parse(received) else { continue }
                let request: WebSocketHandshake.ServerRequest
                do throws(WebSocketError) {
                    request = try WebSocketHandshake.parseUpgrade(head)
                } catch {
                    if case let .upgradeRejected(status, headers, body) = error {
                        try? socket.write(WebSocketHandshake.rejectResponse(status: status, reason: "Bad Request", headers: headers, body: body))
                    }
                    throw error
                }
                let decision = decide(request)
                // Headers from the application go on the wire only if they are valid HTTP, and
                // a subprotocol only if the client offered it (RFC 6455 §4.2.2); otherwise the
                // client gets a plain 500 rather than a smuggled header or a doomed upgrade.
                guard Self.isSendable(decision, for: request) else {
                    try socket.write(WebSocketHandshake.rejectResponse(status: 500, reason: "Internal Server Error"))
                    socket.close()
                    return nil
                }
                switch decision {
                case let .reject(status, reason, headers, body):
                    try socket.write(WebSocketHandshake.rejectResponse(status: status, reason: reason, headers: headers, body: body))
                    socket.close()
                    return nil
                case let .accept(headers, subprotocol, context):
                    try socket.write(WebSocketHandshake.acceptResponse(for: request, subprotocol: subprotocol, headers: headers))
                    try socket.setReadDeadline(nil)
                    return WebSocketConnection(stream: socket, role: .server, options: options, initialBytes: Array(received[consumed...]),
                                               handshakeHeaders: request.headers, path: request.path, subprotocol: subprotocol,
                                               upgradeContext: context)
                }
            }
        } catch {
            (stream ?? tcp).close()
            return nil
        }
    }

    /// Whether a decision's status, reason and headers can be written as they are, and its
    /// subprotocol is one `request` offered.
    private static func isSendable(_ decision: UpgradeDecision, for request: WebSocketHandshake.ServerRequest) -> Bool {
        switch decision {
        case let .reject(status, reason, headers, _):
            return (100...999).contains(status) && HTTPFieldSyntax.isFieldValue(reason) && (try? HTTPFieldSyntax.check(headers)) != nil
        case let .accept(headers, subprotocol, _):
            let offered = subprotocol.map { HTTPFieldSyntax.isToken($0) && request.subprotocols.contains($0) } ?? true
            return offered && (try? HTTPFieldSyntax.check(headers)) != nil
        }
    }

    /// Stops accepting and drops every open connection.
    public func stop() {
        listener.close()
        let all = connections.withLock { () -> [WebSocketConnection] in
            defer { open = [] }
            return open
        }
        for connection in all { connection.abort() }
    }

    deinit { listener.close() }
}
