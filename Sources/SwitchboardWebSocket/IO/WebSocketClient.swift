import Foundation

/// Opens client connections: DNS, TCP, the opening handshake, then a ``WebSocketConnection``.
public enum WebSocketClient {
    /// Client options.
    public struct Options: Sendable {
        /// Extra upgrade headers: `Authorization`, `User-Agent` and so on.
        public var headers: [HTTPHeaderField]
        /// The subprotocols to offer, most preferred first.
        public var subprotocols: [String]
        /// How long DNS, TCP, TLS and the upgrade may take together.
        public var connectTimeout: Duration
        /// How the connection behaves once open.
        public var connection: WebSocketConnection.Options
        /// How `wss://` verifies the server.
        public var tls: TLSOptions
        /// The largest message accepted, as ``WebSocketConnection/Options/maximumMessageSize``.
        public var maximumMessageSize: Int {
            get { connection.maximumMessageSize }
            set { connection.maximumMessageSize = newValue }
        }

        /// Creates options; connecting may take 10 seconds by default.
        public init(headers: [HTTPHeaderField] = [], subprotocols: [String] = [], connectTimeout: Duration = .seconds(10),
                    connection: WebSocketConnection.Options = .init(), tls: TLSOptions = .init()) {
            self.headers = headers
            self.subprotocols = subprotocols
            self.connectTimeout = connectTimeout
            self.connection = connection
            self.tls = tls
        }
    }

    /// Connects to a `ws://` or `wss://` URL within `connectTimeout` (DNS, TCP, TLS and the upgrade).
    ///
    /// Cancelling the calling task before the socket is open stops the connect before it
    /// sends the upgrade request.
    public static func connect(to url: URL, options: Options = .init()) async throws(WebSocketError) -> WebSocketConnection {
        let endpoint = try WebSocketEndpoint(url)
        let request = try upgradeRequest(for: endpoint, options: options)
        let cancelled = LockedState(false)
        // All steps run back to back on one thread, so the deadline covers network time only:
        // no wait for a busy cooperative pool sits between opening the socket (which starts
        // the server's handshake timer) and sending the upgrade.
        let result: Result<WebSocketConnection, WebSocketError> = await withTaskCancellationHandler {
            await onOwnThread { () throws(WebSocketError) -> WebSocketConnection in
                let deadline = ContinuousClock.now.advanced(by: options.connectTimeout)
                let stream = try openStream(endpoint, options: options, deadline: deadline)
                do throws(WebSocketError) {
                    // An upgrade would tell a chat server this is the device's newest connection.
                    guard !cancelled.value else { throw .io("connect cancelled") }
                    return try handshake(stream, request: request, deadline: deadline, options: options, path: endpoint.requestPath)
                } catch {
                    stream.close()
                    throw error
                }
            }
        } onCancel: {
            _ = cancelled.transition(from: false, to: true)
        }
        return try result.get()
    }

    /// Does DNS, TCP and TLS for `url` within `connectTimeout`, but not the upgrade; finish
    /// with ``upgrade(_:url:options:)``, or close the transport. Used to preconnect.
    public static func openTransport(to url: URL, options: Options = .init()) async throws(WebSocketError) -> WebSocketTransport {
        let endpoint = try WebSocketEndpoint(url)
        return try await onOwnThread { () throws(WebSocketError) -> WebSocketTransport in
            let deadline = ContinuousClock.now.advanced(by: options.connectTimeout)
            return WebSocketTransport(endpoint: endpoint, stream: try openStream(endpoint, options: options, deadline: deadline))
        }.get()
    }

    /// Runs the opening handshake for `url` over an open transport, within `connectTimeout`.
    /// The transport must have been opened for the same scheme, host and port; on failure
    /// it is closed.
    public static func upgrade(_ transport: WebSocketTransport, url: URL, options: Options = .init()) async throws(WebSocketError) -> WebSocketConnection {
        let endpoint: WebSocketEndpoint
        do throws(WebSocketError) {
            endpoint = try WebSocketEndpoint(url)
            guard endpoint == transport.endpoint else {
                throw .io("transport was opened for \(transport.endpoint), not \(endpoint)")
            }
        } catch {
            transport.close()
            throw error
        }
        let request: WebSocketHandshake.ClientRequest
        do throws(WebSocketError) {
            request = try upgradeRequest(for: endpoint, options: options)
        } catch {
            transport.close()
            throw error
        }
        guard transport.claim() else { throw .io("transport already closed or upgraded") }
        return try await onOwnThread { () throws(WebSocketError) -> WebSocketConnection in
            let deadline = ContinuousClock.now.advanced(by: options.connectTimeout)
            do throws(WebSocketError) {
                return try handshake(transport.stream, request: request, deadline: deadline, options: options, path: endpoint.requestPath)
            } catch {
                transport.stream.close()
                throw error
            }
        }.get()
    }

    /// Runs blocking socket work on a thread of its own, off Swift's small cooperative pool.
    private static func onOwnThread<Value: Sendable>(
        _ work: @escaping @Sendable () throws(WebSocketError) -> Value
    ) async -> Result<Value, WebSocketError> {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: Result(catching: work)) }
        }
    }

    /// Checked before any socket opens, so a bad header costs no connection.
    private static func upgradeRequest(for endpoint: WebSocketEndpoint, options: Options) throws(WebSocketError) -> WebSocketHandshake.ClientRequest {
        let request = WebSocketHandshake.ClientRequest(host: endpoint.host, port: endpoint.port, path: endpoint.requestPath, isSecure: endpoint.isSecure,
                                                       headers: options.headers, subprotocols: options.subprotocols)
        try request.checkSendable()
        return request
    }

    /// DNS and TCP, then TLS for `wss://`; the socket is closed if TLS fails.
    private static func openStream(_ endpoint: WebSocketEndpoint, options: Options, deadline: ContinuousClock.Instant) throws(WebSocketError) -> any ByteStream {
        #if canImport(Network) && !canImport(CSwitchboardOpenSSL)
        if endpoint.isSecure {
            // Network.framework resolves, connects and secures in one connection.
            return try NetworkTLSStream(host: endpoint.host, port: endpoint.port, options: options.tls, deadline: deadline)
        }
        #endif
        let socket: TCPSocket
        do throws(WebSocketError) {
            socket = try TCPSocket.connect(host: endpoint.host, port: endpoint.port, deadline: deadline)
        } catch {
            throw naming(endpoint, in: error)
        }
        do throws(WebSocketError) {
            return try secure(socket, endpoint: endpoint, options: options, deadline: deadline)
        } catch {
            socket.close()
            throw naming(endpoint, in: error)
        }
    }

    /// `error` with the host and port it concerns, so "connection refused" or a TLS failure
    /// says where.
    static func naming(_ endpoint: WebSocketEndpoint, in error: WebSocketError) -> WebSocketError {
        let place = endpoint.host.contains(":") ? "[\(endpoint.host)]:\(endpoint.port)" : "\(endpoint.host):\(endpoint.port)"
        switch error {
        case let .io(reason): return .io("\(place): \(reason)")
        case let .timeout(what): return .timeout("\(what) to \(place)")
        default: return error
        }
    }

    /// Wraps the socket in TLS for `wss://`.
    static func secure(_ socket: TCPSocket, endpoint: WebSocketEndpoint, options: Options, deadline: ContinuousClock.Instant) throws(WebSocketError) -> any ByteStream {
        guard endpoint.isSecure else { return socket }
        #if canImport(CSwitchboardOpenSSL)
        return try TLSStream(clientOver: socket, host: endpoint.host, options: options.tls, deadline: deadline)
        #else
        throw .io("wss:// needs the system OpenSSL (Linux) or Network.framework (Apple platforms)")
        #endif
    }

    static func handshake(_ stream: any ByteStream, request: WebSocketHandshake.ClientRequest, deadline: ContinuousClock.Instant, options: Options, path: String) throws(WebSocketError) -> WebSocketConnection {
        try stream.write(request.bytes)
        var received: [UInt8] = []
        while true {
            try stream.setReadDeadline(deadline)
            let chunk = try stream.read(maximum: 4096)
            guard !chunk.isEmpty else { throw .invalidUpgradeResponse("connection closed during the handshake") }
            received += chunk
            guard let (head, consumed) = try HTTPHead.parse(received) else { continue }
            var rest = Array(received[consumed...])
            let status = head.startLine.count > 1 ? Int(head.startLine[1]) ?? 0 : 0
            if status != 101 {
                // Read a bounded body so the typed error can carry it (Signal's 499/429 bodies).
                // Clamped both ways: a hostile server may send a negative or huge length.
                let length = max(0, min(Int(head.value("Content-Length") ?? "") ?? 0, 64 * 1024))
                while rest.count < length {
                    try stream.setReadDeadline(deadline)
                    let more = try stream.read(maximum: length - rest.count)
                    if more.isEmpty { break }
                    rest += more
                }
                _ = try request.validate(head, body: Array(rest.prefix(length)))
            }
            let subprotocol = try request.validate(head)
            try stream.setReadDeadline(nil)
            return WebSocketConnection(stream: stream, role: .client, options: options.connection, initialBytes: rest,
                                       handshakeHeaders: head.headers, path: path, subprotocol: subprotocol)
        }
    }
}
