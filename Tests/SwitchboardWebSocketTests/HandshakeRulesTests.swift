import Foundation
import SwitchboardIO
@testable import SwitchboardWebSocket
import Testing

/// RFC 6455 and HTTP/1.1 rules the handshake and close path follow (from the conformance
/// review), without sockets where none is needed.
@Suite struct HandshakeRulesTests {
    static let key = WebSocketHandshake.makeKey()

    static func upgrade(host: [String] = ["Host: x"], extra: [String] = [], target: String = "/chat", key: [String]? = nil) -> [UInt8] {
        let lines = ["GET \(target) HTTP/1.1"] + host + ["Upgrade: websocket", "Connection: Upgrade", "Sec-WebSocket-Version: 13"]
            + (key ?? ["Sec-WebSocket-Key: \(Self.key)"]) + extra
        return Array((lines.joined(separator: "\r\n") + "\r\n\r\n").utf8)
    }

    static func parse(_ bytes: [UInt8]) throws -> WebSocketHandshake.ServerRequest {
        try WebSocketHandshake.parseUpgrade(try #require(try HTTPHead.parse(bytes)?.head))
    }

    static func status(_ bytes: [UInt8]) -> Int? {
        do {
            _ = try parse(bytes)
            return nil
        } catch let error as WebSocketError {
            if case let .upgradeRejected(status, _, _) = error { return status }
            return -1
        } catch {
            return -1
        }
    }

    @Test func controlCharactersAndNonTokenNamesAreRefused() {
        for bad in ["X: a\nInjected: b", "X: a\rb", "X: a\u{0}b", "Name\t: v", "Bad Name: v", " folded: v"] {
            #expect(throws: WebSocketError.self, "\(bad.debugDescription)") { try HTTPHead.parse(Self.upgrade(extra: [bad])) }
        }
        #expect(throws: Never.self) { try HTTPHead.parse(Self.upgrade(extra: ["X-Tab: a\tb"])) }
    }

    @Test func hostAndKeyMustAppearExactlyOnce() {
        #expect(Self.status(Self.upgrade()) == nil)
        #expect(Self.status(Self.upgrade(host: [])) == 400)
        #expect(Self.status(Self.upgrade(host: ["Host: a", "Host: b"])) == 400)
        #expect(Self.status(Self.upgrade(key: ["Sec-WebSocket-Key: \(Self.key)", "Sec-WebSocket-Key: \(WebSocketHandshake.makeKey())"])) == 400)
        #expect(Self.status(Self.upgrade(target: "*")) == 400)
    }

    /// From the parser review: what a byte-comparing proxy and this server must agree on.
    @Test func aRequestIsReadAsAProxyComparingBytesReadsIt() {
        // A Kelvin sign (U+212A) folds to 'k' in Unicode, not in ASCII: not an upgrade.
        let kelvin = Self.upgrade().replacing(Array("Upgrade: websocket".utf8), with: Array("Upgrade: websoc\u{212A}et".utf8))
        #expect(Self.status(kelvin) == 426)
        #expect(Self.status(Self.upgrade().replacing(Array("Upgrade: websocket".utf8), with: Array("Upgrade: WebSocket".utf8))) == nil)
        // A body: a proxy would frame it as one, this server would read it as frames.
        #expect(Self.status(Self.upgrade(extra: ["Content-Length: 6"])) == 400)
        #expect(Self.status(Self.upgrade(extra: ["Transfer-Encoding: chunked"])) == 400)
        #expect(Self.status(Self.upgrade(extra: ["Content-Length: 0"])) == nil)
        // An invalid Host gets 400 (RFC 9112 §3.2).
        for bad in ["Host:", "Host: a b", "Host: x/y@z", "Host: a:b", "Host: [::1", "Host: a:123456"] {
            #expect(Self.status(Self.upgrade(host: [bad])) == 400, "\(bad)")
        }
        for good in ["Host: chat.example.org", "Host: chat.example.org:8443", "Host: [::1]:443", "Host: 127.0.0.1", "Host: xn--bcher-kva.example"] {
            #expect(Self.status(Self.upgrade(host: [good])) == nil, "\(good)")
        }
        // Absolute-form only with an http(s) scheme.
        #expect(Self.status(Self.upgrade(target: "httpfoo")) == 400)
        #expect(Self.status(Self.upgrade(target: "http://x/chat")) == nil)
        // The version once.
        #expect(Self.status(Self.upgrade(extra: ["Sec-WebSocket-Version: 13"])) == 426)
    }

    /// RFC 9112 §2.2: a server ignores an empty line before the request line (up to two here).
    @Test func anEmptyLineBeforeTheRequestIsIgnored() async throws {
        let server = try WebSocketServer { _ in }
        defer { server.stop() }
        let accepted = try await Self.headOnly(port: server.port, Array("\r\n".utf8) + Self.upgrade())
        #expect(accepted.hasPrefix("HTTP/1.1 101 "), "\(accepted.prefix(80))")
        let refused = try await Self.exchange(port: server.port, Array("\r\n\r\n\r\n".utf8) + Self.upgrade())
        #expect(refused.hasPrefix("HTTP/1.1 400 "), "\(refused.prefix(80))")
    }

    /// Sends `request` and reads the answer's head (through its blank line).
    static func headOnly(port: Int, _ request: [UInt8]) async throws -> String {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                do {
                    let socket = try TCPSocket.connect(host: "127.0.0.1", port: port, timeout: .seconds(5))
                    defer { socket.close() }
                    try socket.setReadDeadline(.now + .seconds(10))
                    try socket.write(request)
                    var answer: [UInt8] = []
                    while answer.count < 4096, answer.firstRange(of: Array("\r\n\r\n".utf8)) == nil,
                          let read = try? socket.read(maximum: 1), !read.isEmpty { answer += read }
                    continuation.resume(returning: String(decoding: answer, as: UTF8.self))
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
    }

    @Test func upgradeIsATokenListAndProtocolLinesAreOneList() throws {
        let withList = Self.upgrade(extra: ["Sec-WebSocket-Protocol: a", "Sec-WebSocket-Protocol: b, c"])
            .replacing(Array("Upgrade: websocket".utf8), with: Array("Upgrade: websocket, foo".utf8))
        let request = try Self.parse(withList)
        #expect(request.subprotocols == ["a", "b", "c"])
    }

    @Test func a426OffersTheUpgradeInConnectionToo() {
        let response = String(decoding: WebSocketHandshake.rejectResponse(status: 426, reason: WebSocketHandshake.reasonPhrase(for: 426),
                                                                          headers: [HTTPHeaderField(name: "Upgrade", value: "websocket")]), as: UTF8.self)
        #expect(response.hasPrefix("HTTP/1.1 426 Upgrade Required\r\n"))
        #expect(response.contains("Connection: Upgrade, close\r\n"))
        #expect(response.contains("Upgrade: websocket\r\n"))
        let plain = String(decoding: WebSocketHandshake.rejectResponse(status: 400, reason: "Bad Request"), as: UTF8.self)
        #expect(plain.contains("Connection: close\r\n"))
    }

    @Test func aPingAfterOurCloseIsStillAnswered() {
        var core = WebSocketConnectionCore(role: .client)
        _ = core.close(code: .normalClosure)
        let actions = core.receive(FrameWriter.frame(opcode: .ping, payload: [4, 2], mask: false))
        #expect(actions.contains { if case let .send(bytes) = $0 { bytes.count > 2 && bytes[0] == 0x8A } else { false } }, "a pong")
    }

    /// The server answers a head it cannot parse with a status, not a dropped connection.
    @Test func aMalformedRequestGetsAnHTTPStatus() async throws {
        let server = try WebSocketServer { _ in }
        defer { server.stop() }
        for (request, status) in [(Self.upgrade(extra: ["X: a\rb"]), "400"), (Array("GET / HTTP/1.1\r\n".utf8) + Array(repeating: UInt8(ascii: "a"), count: 17_000), "431")] {
            let answer = try await Self.exchange(port: server.port, request)
            #expect(answer.hasPrefix("HTTP/1.1 \(status) "), "\(answer.prefix(80))")
        }
    }

    /// The head limits are options: a server behind a proxy that adds headers raises them,
    /// and a client with the same options sends and reads such heads; a server that lowers
    /// them answers 431 to what the defaults take.
    @Test func handshakeHeadLimitsAreOptions() async throws {
        let many = (0..<150).map { HTTPHeaderField(name: "X-Hop-\($0)", value: "v") }
        let raised = HTTPHeadLimits(maximumSize: 32 * 1024, maximumHeaderCount: 200)
        let roomy = try WebSocketServer(limits: .init(handshakeHeadLimits: raised)) { connection in
            for await _ in connection.messages {}
        }
        defer { roomy.stop() }
        let strict = try WebSocketServer(limits: .init(handshakeHeadLimits: HTTPHeadLimits(maximumSize: 300, maximumHeaderCount: 4))) { _ in }
        defer { strict.stop() }
        guard let roomyURL = URL(string: "ws://127.0.0.1:\(roomy.port)/"), let strictURL = URL(string: "ws://127.0.0.1:\(strict.port)/") else { return }
        // The defaults refuse 150 fields before sending them.
        await #expect(throws: WebSocketError.self) { _ = try await WebSocketClient.connect(to: roomyURL, options: .init(headers: many)) }
        let connection = try await WebSocketClient.connect(to: roomyURL, options: .init(headers: many, connection: .init(handshakeHeadLimits: raised)))
        #expect(connection.handshakeHeaders.count >= 3)
        await connection.close()
        // Over the raised server's own limits: 431, and a plain request's head is over 300 bytes.
        let tooMany = Self.upgrade(extra: (0..<200).map { "X-\($0): v" })
        #expect(try await Self.exchange(port: roomy.port, tooMany).hasPrefix("HTTP/1.1 431 "))
        let plain = Self.upgrade(extra: ["User-Agent: " + String(repeating: "a", count: 300)])
        #expect(try await Self.exchange(port: strict.port, plain).hasPrefix("HTTP/1.1 431 "))
        // A plain client upgrade has five fields: one too many there.
        do {
            _ = try await WebSocketClient.connect(to: strictURL)
            Issue.record("the strict server took five fields")
        } catch {
            guard case let .upgradeRejected(status, _, _) = error else { Issue.record("\(error)"); return }
            #expect(status == 431)
        }
        // The client's own limit on the 101 it reads: a server's answer is over 100 bytes.
        let tight = WebSocketConnection.Options(handshakeHeadLimits: HTTPHeadLimits(maximumSize: 100, maximumHeaderCount: 100))
        do {
            _ = try await WebSocketClient.connect(to: roomyURL, options: .init(connection: tight))
            Issue.record("a 101 past the client's limit was read")
        } catch {
            guard case let .invalidHTTP(reason) = error else { Issue.record("\(error)"); return }
            #expect(reason.contains("larger than 100 bytes"), "\(reason)")
        }
        // Values past a limit's range are held to it, so no setting can overflow the reads.
        #expect(HTTPHeadLimits(maximumSize: .max, maximumHeaderCount: .max) == HTTPHeadLimits(maximumSize: 16 << 20, maximumHeaderCount: 100_000))
        #expect(HTTPHeadLimits(maximumSize: -1, maximumHeaderCount: 0).maximumSize == 64)
    }

    @Test func headsParseWithinTheGivenLimits() throws {
        let fields = (0..<150).map { "X-\($0): v\r\n" }.joined()
        let head = Array("GET / HTTP/1.1\r\n\(fields)\r\n".utf8)
        #expect(throws: WebSocketError.self) { _ = try HTTPHead.parse(head) }
        #expect(try HTTPHead.parse(head, limits: HTTPHeadLimits(maximumHeaderCount: 150))?.head.headers.count == 150)
        let large = Array("GET / HTTP/1.1\r\nX: \(String(repeating: "a", count: 20_000))\r\n\r\n".utf8)
        #expect(throws: WebSocketError.self) { _ = try HTTPHead.parse(large) }
        #expect(try HTTPHead.parse(large, limits: HTTPHeadLimits(maximumSize: 32 * 1024))?.consumed == large.count)
        // Without its end yet, a head already past the size is refused, not buffered on.
        #expect(throws: WebSocketError.self) { _ = try HTTPHead.parse(Array(large.prefix(2_000)), limits: HTTPHeadLimits(maximumSize: 1_000)) }
    }

    static func exchange(port: Int, _ request: [UInt8]) async throws -> String {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                do {
                    let socket = try TCPSocket.connect(host: "127.0.0.1", port: port, timeout: .seconds(5))
                    defer { socket.close() }
                    try socket.write(request)
                    var answer: [UInt8] = []
                    while answer.count < 4096, let read = try? socket.read(maximum: 4096), !read.isEmpty { answer += read }
                    continuation.resume(returning: String(decoding: answer, as: UTF8.self))
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
    }
}

/// The client side of the same rules.
@Suite(.timeLimit(.minutes(2))) struct ClientHandshakeRulesTests {
    @Test func extraHeadersMayNotRepeatTheHandshakesOwn() throws {
        for name in ["Host", "connection", "Sec-WebSocket-Extensions", "Sec-WebSocket-Key"] {
            let request = WebSocketHandshake.ClientRequest(host: "x", port: 80, path: "/", isSecure: false, headers: [HTTPHeaderField(name: name, value: "v")])
            #expect(throws: WebSocketError.self, "\(name)") { try request.checkSendable() }
        }
        try WebSocketHandshake.ClientRequest(host: "x", port: 80, path: "/", isSecure: false, headers: [HTTPHeaderField(name: "User-Agent", value: "v")]).checkSendable()
    }

    /// A CDN's 103 Early Hints before the 101 is skipped, not taken for a refusal.
    @Test func interimResponsesBeforeThe101AreSkipped() async throws {
        let listener = try Self.upgradeServer { accept in
            Array("HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n".utf8) + accept
        }
        defer { listener.close() }
        let connection = try await WebSocketClient.connect(to: URL(string: "ws://127.0.0.1:\(listener.port)/")!)
        connection.abort()
    }

    /// A server that reads one upgrade request and writes what `answer` makes of the 101 that
    /// accepts it, then reads until the client leaves.
    static func upgradeServer(answer: @escaping @Sendable ([UInt8]) -> [UInt8]) throws -> TCPListener {
        let listener = try TCPListener()
        Thread.detachNewThread {
            guard let socket = listener.accept() else { return }
            defer { socket.close() }
            var received: [UInt8] = []
            while let read = try? socket.read(maximum: 4096), !read.isEmpty {
                received += read
                guard let (head, _) = try? HTTPHead.parse(received), let request = try? WebSocketHandshake.parseUpgrade(head) else { continue }
                try? socket.write(answer(WebSocketHandshake.acceptResponse(for: request)))
                break
            }
            while let read = try? socket.read(maximum: 4096), !read.isEmpty {}
        }
        return listener
    }

    /// A response may fold a header (obs-fold) and carry a reason phrase that is not UTF-8:
    /// a user agent joins the one with a space and ignores the other (RFC 9112 §5.2, §4). Both
    /// failed the upgrade; a request with either is still refused.
    @Test func aResponseMayFoldHeadersAndCarryAnyReasonPhrase() throws {
        let folded = Array("HTTP/1.1 101 Switching Protocols\r\nX-Long: a\r\n  b\r\n\tc\r\nUpgrade: websocket\r\n\r\n".utf8)
        let head = try #require(try HTTPHead.parse(folded, isResponse: true)?.head)
        #expect(head.headers == [HTTPHeaderField(name: "X-Long", value: "a b c"), HTTPHeaderField(name: "Upgrade", value: "websocket")])
        var latin1: [UInt8] = Array("HTTP/1.1 101 Sw".utf8)
        latin1.append(0xE9)
        latin1 += Array("tching\r\nUpgrade: websocket\r\n\r\n".utf8)
        let latin1Head = try #require(try HTTPHead.parse(latin1, isResponse: true)?.head)
        #expect(Array(latin1Head.startLine.prefix(2)) == ["HTTP/1.1", "101"])
        // Still refused: in a request; a fold before any field; a header value that is not UTF-8.
        #expect(throws: WebSocketError.self) { try HTTPHead.parse(folded) }
        #expect(throws: WebSocketError.self) { try HTTPHead.parse(latin1) }
        #expect(throws: WebSocketError.self) { try HTTPHead.parse(Array("HTTP/1.1 101 OK\r\n x\r\n\r\n".utf8), isResponse: true) }
        var latin1Value: [UInt8] = Array("HTTP/1.1 101 OK\r\nX: ".utf8)
        latin1Value.append(0xE9)
        latin1Value += Array("\r\n\r\n".utf8)
        #expect(throws: WebSocketError.self) { try HTTPHead.parse(latin1Value, isResponse: true) }
    }

    /// The client takes a 101 with a folded header and a Latin-1 reason phrase.
    @Test func theClientTakesA101WithAFoldAndALatin1Reason() async throws {
        // The accept response with its start line replaced, and a folded field first.
        let listener = try Self.upgradeServer { accept in
            guard let lineEnd = accept.firstIndex(of: 13) else { return [] }
            var answer: [UInt8] = Array("HTTP/1.1 101 Sw".utf8)
            answer.append(0xE9)
            answer += Array("tching\r\nX-Folded: a\r\n b".utf8)
            return answer + accept[lineEnd...]
        }
        defer { listener.close() }
        let connection = try await WebSocketClient.connect(to: URL(string: "ws://127.0.0.1:\(listener.port)/")!)
        #expect(connection.handshakeHeaders.value(named: "X-Folded") == "a b")
        connection.abort()
    }
}
