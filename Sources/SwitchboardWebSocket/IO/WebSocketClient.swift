import Foundation

/// Opens client connections: DNS, TCP, the opening handshake, then a ``WebSocketConnection``.
public enum WebSocketClient {
    /// Client options.
    public struct Options: Sendable {
        /// Extra upgrade headers: `Authorization`, `User-Agent` and so on.
        public var headers: [HTTPHeaderField]
        public var subprotocols: [String]
        public var connectTimeout: Duration
        public var connection: WebSocketConnection.Options
        /// How `wss://` verifies the server.
        public var tls: TLSOptions

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
    public static func connect(to url: URL, options: Options = .init()) async throws(WebSocketError) -> WebSocketConnection {
        guard let scheme = url.scheme?.lowercased(), scheme == "ws" || scheme == "wss", let host = url.host else {
            throw .invalidUpgradeResponse("not a ws:// URL: \(url)")
        }
        let port = url.port ?? (scheme == "wss" ? 443 : 80)
        var requestPath = url.path.isEmpty ? "/" : url.path
        if let query = url.query { requestPath += "?" + query }
        let path = requestPath
        let request = WebSocketHandshake.ClientRequest(host: host, port: port, path: path, isSecure: scheme == "wss", headers: options.headers, subprotocols: options.subprotocols)
        let result: Result<WebSocketConnection, WebSocketError> = await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                do throws(WebSocketError) {
                    let deadline = ContinuousClock.now.advanced(by: options.connectTimeout)
                    let socket = try TCPSocket.connect(host: host, port: port, timeout: options.connectTimeout)
                    do throws(WebSocketError) {
                        let stream = try secure(socket, scheme: scheme, host: host, options: options, deadline: deadline)
                        continuation.resume(returning: .success(try handshake(stream, request: request, deadline: deadline, options: options, path: path)))
                    } catch {
                        socket.close()
                        throw error
                    }
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        }
        return try result.get()
    }

    /// Wraps the socket in TLS for `wss://`.
    static func secure(_ socket: TCPSocket, scheme: String, host: String, options: Options, deadline: ContinuousClock.Instant) throws(WebSocketError) -> any ByteStream {
        guard scheme == "wss" else { return socket }
        #if canImport(CSwitchboardOpenSSL)
        return try TLSStream(clientOver: socket, host: host, options: options.tls, deadline: deadline)
        #else
        throw .io("wss:// needs Network.framework support, which this build lacks")
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
                let length = min(Int(head.value("Content-Length") ?? "") ?? 0, 64 * 1024)
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
