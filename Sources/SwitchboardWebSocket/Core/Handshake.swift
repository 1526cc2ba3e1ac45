import Foundation
import SwitchboardHTTPSyntax

/// The opening handshake (RFC 6455 §4), both sides, with no I/O.
public enum WebSocketHandshake {
    static let guid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    /// `Sec-WebSocket-Accept` for a key.
    public static func acceptValue(for key: String) -> String {
        Data(SHA1.hash(Array((key + guid).utf8))).base64EncodedString()
    }

    /// A fresh `Sec-WebSocket-Key`: 16 random bytes from the system's secure generator.
    public static func makeKey() -> String {
        var generator = SystemRandomNumberGenerator()
        return Data((0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }).base64EncodedString()
    }

    /// What a client asks for.
    public struct ClientRequest: Sendable, Hashable {
        /// The server's host name or IP address, for the `Host` header.
        public var host: String
        /// The server's port; left out of `Host` when it is the scheme's default.
        public var port: Int
        /// The request target, path and query; `/` when given empty.
        public var path: String
        /// Whether the connection uses TLS (`wss`), which makes 443 the default port.
        public var isSecure: Bool
        /// Extra headers: `Authorization`, `User-Agent` and the like.
        public var headers: [HTTPHeaderField]
        /// The subprotocols offered in `Sec-WebSocket-Protocol`, most preferred first.
        public var subprotocols: [String]
        /// The `Sec-WebSocket-Key` that the server's `Sec-WebSocket-Accept` must answer.
        public var key: String

        /// Creates a request with a random key.
        public init(host: String, port: Int, path: String, isSecure: Bool, headers: [HTTPHeaderField] = [], subprotocols: [String] = [], key: String = WebSocketHandshake.makeKey()) {
            self.host = host
            self.port = port
            self.path = path.isEmpty ? "/" : path
            self.isSecure = isSecure
            self.headers = headers
            self.subprotocols = subprotocols
            self.key = key
        }

        /// The request bytes.
        public var bytes: [UInt8] {
            let defaultPort = isSecure ? 443 : 80
            let hostHeader = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
            var text = "GET \(path) HTTP/1.1\r\nHost: \(hostHeader)\(port == defaultPort ? "" : ":\(port)")\r\n"
            text += "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\n"
            if !subprotocols.isEmpty { text += "Sec-WebSocket-Protocol: \(subprotocols.joined(separator: ", "))\r\n" }
            for header in headers { text += "\(header.name): \(header.value)\r\n" }
            return Array((text + "\r\n").utf8)
        }

        /// Fields the handshake writes itself, which extra headers may not repeat.
        static let handshakeFields: Set<String> = ["host", "upgrade", "connection", "sec-websocket-key", "sec-websocket-version",
                                                   "sec-websocket-protocol", "sec-websocket-extensions", "content-length", "transfer-encoding"]

        /// Throws `invalidHTTP` if a header, a subprotocol or the path could not be sent
        /// as they are: a line break in a value would end the header and start another; and
        /// if a header repeats one the handshake writes itself; and if the request has more
        /// header fields than `limits` allow (a server with the same limits would refuse it).
        public func checkSendable(limits: HTTPHeadLimits = .init()) throws(WebSocketError) {
            guard HTTPFieldSyntax.isRequestTarget(path) else { throw .invalidHTTP("the path holds a space or control character") }
            guard HTTPFieldSyntax.isFieldValue(host) else { throw .invalidHTTP("the host holds a control character") }
            for subprotocol in subprotocols where !HTTPFieldSyntax.isToken(subprotocol) {
                throw .invalidHTTP("subprotocol \(String(reflecting: subprotocol)) is not an HTTP token")
            }
            try HTTPFieldSyntax.check(headers)
            // The handshake's own fields come from the handshake: a second Host is a 400 at
            // any conforming server, and an extension offered behind this client's back
            // would be accepted by the server and then refused here.
            for header in headers where Self.handshakeFields.contains(header.name.lowercased()) {
                throw .invalidHTTP("\(header.name) is the handshake's own; set it through the URL or options instead")
            }
            // Host, Upgrade, Connection, the key and the version, then the subprotocols' line.
            let fields = 5 + (subprotocols.isEmpty ? 0 : 1) + headers.count
            guard fields <= limits.maximumHeaderCount else {
                throw .invalidHTTP("\(fields) header fields; a server reading as this one does takes at most \(limits.maximumHeaderCount)")
            }
        }

        /// Checks the server's head; returns the chosen subprotocol. A non-101 status is
        /// `upgradeRejected`, with the body the caller read after the head.
        public func validate(_ head: HTTPHead, body: [UInt8] = []) throws(WebSocketError) -> String? {
            guard head.startLine.count >= 2, HTTPHead.isHTTP1Version(head.startLine[0]), let status = HTTPHead.statusCode(head.startLine[1]) else {
                throw .invalidUpgradeResponse("malformed status line")
            }
            guard status == 101 else { throw .upgradeRejected(status: status, headers: head.headers, body: body) }
            // Each field once: read together, two values are one other value (RFC 9110 §5.3),
            // which must fail the connection (RFC 6455 §4.1).
            let upgrade = head.headers.values(named: "Upgrade")
            guard upgrade.count == 1, HTTPHead.equalIgnoringASCIICase(upgrade[0], "websocket") else {
                throw .invalidUpgradeResponse("missing 'Upgrade: websocket'")
            }
            guard head.hasToken("Connection", "upgrade") else { throw .invalidUpgradeResponse("missing 'Connection: Upgrade'") }
            // Bytes, not `String` equality, which is canonical equivalence: U+212A (Kelvin) in
            // place of a `K` must not pass for the exact base64 value RFC 6455 §4.1 requires.
            let accept = head.headers.values(named: "Sec-WebSocket-Accept")
            guard accept.count == 1, HTTPSyntax.sameBytes(accept[0], WebSocketHandshake.acceptValue(for: key)) else {
                throw .invalidUpgradeResponse("wrong Sec-WebSocket-Accept")
            }
            // This client offers no extension, so any the server selects must fail the
            // connection (RFC 6455 §4.1): its frames would mean something else.
            let extensions = head.headers.values(named: "Sec-WebSocket-Extensions").filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
            if let selected = extensions.first {
                throw .invalidUpgradeResponse("server selected extension '\(selected)', which was not offered")
            }
            // At most one subprotocol, and one that was offered.
            let chosen = head.headers.values(named: "Sec-WebSocket-Protocol")
            guard chosen.count <= 1 else { throw .invalidUpgradeResponse("server chose \(chosen.count) subprotocols") }
            if let chosen = chosen.first {
                guard subprotocols.contains(where: { HTTPSyntax.sameBytes($0, chosen) }) else { throw .invalidUpgradeResponse("server chose subprotocol '\(chosen)', which was not offered") }
                return chosen
            }
            return nil
        }
    }

    /// What a server learns from an upgrade request.
    public struct ServerRequest: Sendable, Hashable {
        /// The request target, path and query.
        public var path: String
        /// All of the request's header fields, in order.
        public var headers: [HTTPHeaderField]
        /// The client's `Sec-WebSocket-Key`, checked to be 16 bytes in base64.
        public var key: String
        /// The subprotocols the client offers, in its order.
        public var subprotocols: [String]
    }

    /// Validates a client's upgrade request; throws with the status to answer.
    public static func parseUpgrade(_ head: HTTPHead) throws(WebSocketError) -> ServerRequest {
        guard head.startLine.count == 3, head.startLine[0] == "GET", head.startLine[2] == "HTTP/1.1" else {
            throw .upgradeRejected(status: 400, headers: [], body: Array("expected GET ... HTTP/1.1".utf8))
        }
        // The target: origin-form (or absolute-form), visible ASCII only.
        let target = head.startLine[1]
        let absolute = target.lowercased().hasPrefix("http://") || target.lowercased().hasPrefix("https://")
        guard target.hasPrefix("/") || absolute, HTTPFieldSyntax.isRequestTarget(target) else {
            throw .upgradeRejected(status: 400, headers: [], body: Array("malformed request target".utf8))
        }
        // Exactly one Host (RFC 6455 §4.2.1, RFC 9112 §3.2), and a valid one: a server must
        // answer 400 to an invalid Host (RFC 9112 §3.2).
        let hosts = head.headers.values(named: "Host")
        guard hosts.count == 1, HTTPHead.isHostValue(hosts[0]) else {
            throw .upgradeRejected(status: 400, headers: [], body: Array("a request needs exactly one valid Host".utf8))
        }
        // An upgrade request has no body: one declared would be framed one way by a proxy and
        // another here, where its bytes would be read as WebSocket frames.
        let lengths = head.headers.values(named: "Content-Length")
        guard head.headers.values(named: "Transfer-Encoding").isEmpty, lengths.allSatisfy({ $0 == "0" }) else {
            throw .upgradeRejected(status: 400, headers: [], body: Array("an upgrade request has no body".utf8))
        }
        guard head.hasToken("Upgrade", "websocket"), head.hasToken("Connection", "upgrade") else {
            throw .upgradeRejected(status: 426, headers: [HTTPHeaderField(name: "Upgrade", value: "websocket")], body: Array("upgrade to websocket required".utf8))
        }
        guard head.headers.values(named: "Sec-WebSocket-Version") == ["13"] else {
            throw .upgradeRejected(status: 426, headers: [HTTPHeaderField(name: "Upgrade", value: "websocket"), HTTPHeaderField(name: "Sec-WebSocket-Version", value: "13")],
                                   body: [])
        }
        let keys = head.headers.values(named: "Sec-WebSocket-Key")
        guard keys.count == 1, let key = keys.first, Data(base64Encoded: key)?.count == 16 else {
            throw .upgradeRejected(status: 400, headers: [], body: Array("missing, repeated or malformed Sec-WebSocket-Key".utf8))
        }
        // Several lines are one list (RFC 6455 §11.3.4).
        let protocols = head.headers.values(named: "Sec-WebSocket-Protocol").flatMap { $0.split(separator: ",") }
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        return ServerRequest(path: head.startLine[1], headers: head.headers, key: key, subprotocols: protocols)
    }

    /// The 101 response accepting `request`.
    public static func acceptResponse(for request: ServerRequest, subprotocol: String? = nil, headers: [HTTPHeaderField] = []) -> [UInt8] {
        var text = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: \(acceptValue(for: request.key))\r\n"
        if let subprotocol { text += "Sec-WebSocket-Protocol: \(subprotocol)\r\n" }
        for header in headers { text += "\(header.name): \(header.value)\r\n" }
        return Array((text + "\r\n").utf8)
    }

    /// The reason phrase for a refusal's status.
    public static func reasonPhrase(for status: Int) -> String {
        switch status {
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 426: "Upgrade Required"
        case 429: "Too Many Requests"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 503: "Service Unavailable"
        default: "Refused"
        }
    }

    /// A rejection response with a small body. One that offers an upgrade (a 426) names
    /// `upgrade` in `Connection` too, as RFC 9110 §7.8 requires.
    public static func rejectResponse(status: Int, reason: String, headers: [HTTPHeaderField] = [], body: [UInt8] = []) -> [UInt8] {
        let offersUpgrade = headers.contains { $0.name.lowercased() == "upgrade" }
        var text = "HTTP/1.1 \(status) \(reason)\r\nContent-Length: \(body.count)\r\nConnection: \(offersUpgrade ? "Upgrade, close" : "close")\r\n"
        for header in headers { text += "\(header.name): \(header.value)\r\n" }
        return Array((text + "\r\n").utf8) + body
    }
}
