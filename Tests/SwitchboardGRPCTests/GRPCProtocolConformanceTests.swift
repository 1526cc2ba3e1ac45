import Foundation
import SignalChat
@testable import SwitchboardGRPC
@testable import SwitchboardHTTP2
import SwitchboardIO
import SwitchboardRuntime
import Testing

/// gRPC's rules as other gRPC peers apply them (from the protocol review): a proxy's error
/// page, compression the server does not offer, requests that are not gRPC, malformed
/// timeouts, unknown status codes and oversized error details.
@Suite(.timeLimit(.minutes(2)))
struct GRPCProtocolConformanceTests {
    /// One exchange with our server as a raw HTTP/2 client: the headers blocks it answered
    /// stream 1 with, decoded.
    static func exchange(port: Int, headers: [HPACKHeader], message: [UInt8]?, maxHeaderListSize: UInt32? = nil) async throws -> [[HPACKHeader]] {
        var encoder = HPACKEncoder()
        var block: [UInt8] = []
        encoder.encode(headers, into: &block)
        var bytes = HTTP2ConnectionPreface.bytes
        HTTP2FrameEncoder.write(HTTP2Frame(streamID: 0, payload: .settings(maxHeaderListSize.map { [HTTP2Setting(.maxHeaderListSize, $0)] } ?? [], ack: false)),
                                into: &bytes)
        HTTP2FrameEncoder.write(HTTP2Frame(streamID: 1, payload: .headers(fragment: block[...], endStream: message == nil, endHeaders: true)), into: &bytes)
        if let message { HTTP2FrameEncoder.writeData(message[...], streamID: 1, endStream: true, into: &bytes) }
        let request = bytes
        return try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                guard let socket = try? TCPSocket.connect(host: "127.0.0.1", port: port, timeout: .seconds(5)) else {
                    continuation.resume(throwing: CocoaError(.fileReadUnknown))
                    return
                }
                defer { socket.close() }
                try? socket.write(request)
                var decoder = HTTP2FrameDecoder(maxFrameSize: HTTP2FrameLimits.maximumMaxFrameSize, expectsPreface: false)
                var hpack = HPACKDecoder(maximumHeaderListSize: 1 << 20)
                var blocks: [[HPACKHeader]] = []
                var fragment: [UInt8] = [], ending = false
                let deadline = Date().addingTimeInterval(10)
                reading: while Date() < deadline, let read = try? socket.read(maximum: 65_536), !read.isEmpty {
                    decoder.append(read)
                    while let frame = try? decoder.nextFrame() {
                        guard frame.streamID == 1 else { continue }
                        // A block may go on in CONTINUATION frames.
                        switch frame.payload {
                        case let .headers(part, endStream, endHeaders):
                            fragment = Array(part)
                            ending = endStream
                            if !endHeaders { continue }
                        case let .continuation(part, endHeaders):
                            fragment += part
                            if !endHeaders { continue }
                        default:
                            break
                        }
                        if case .data = frame.payload {} else if case .rstStream = frame.payload {} else {
                            blocks.append((try? hpack.decode(fragment).headers) ?? [])
                            if ending { break reading }
                        }
                        if case let .data(_, endStream, _) = frame.payload, endStream { break reading }
                        if case .rstStream = frame.payload { break reading }
                    }
                }
                continuation.resume(returning: blocks)
            }
        }
    }

    static func value(_ name: String, in blocks: [[HPACKHeader]]) -> String? {
        blocks.lazy.flatMap { $0 }.first { $0.name == name }?.value
    }

    static func request(path: String = "/signal.chat.Usernames/LookUpUsernameHash", contentType: String = "application/grpc",
                        extra: [HPACKHeader] = []) -> [HPACKHeader] {
        [HPACKHeader(":method", "POST"), HPACKHeader(":scheme", "http"), HPACKHeader(":authority", "x"), HPACKHeader(":path", path),
         HPACKHeader("content-type", contentType), HPACKHeader("te", "trailers")] + extra
    }

    static let lookUp: [UInt8] = GRPCMessageFramer.frame(LookUpUsernameHashRequest(hash: Data([1])).serializedBytes())

    @Test func aCompressedMessageInAnEncodingNotOfferedIsUnimplemented() async throws {
        let server = try GRPCServer(router: RPCRouter(routes: SampleHandlers().allRoutes))
        defer { Task { await server.shutdown() } }
        var compressed = Self.lookUp
        compressed[0] = 1
        let blocks = try await Self.exchange(port: server.port, headers: Self.request(extra: [HPACKHeader("grpc-encoding", "gzip")]), message: compressed)
        #expect(Self.value("grpc-status", in: blocks) == "12")
        #expect(Self.value("grpc-accept-encoding", in: blocks) == "identity")
        // The same encoding named, but the message not compressed: served.
        let plain = try await Self.exchange(port: server.port, headers: Self.request(extra: [HPACKHeader("grpc-encoding", "gzip")]), message: Self.lookUp)
        #expect(Self.value("grpc-status", in: plain) == "0")
    }

    @Test func aRequestThatIsNotGRPCGetsAnHTTPStatus() async throws {
        let server = try GRPCServer(router: RPCRouter(routes: SampleHandlers().allRoutes))
        defer { Task { await server.shutdown() } }
        let json = try await Self.exchange(port: server.port, headers: Self.request(contentType: "application/json"), message: Array("{}".utf8))
        #expect(Self.value(":status", in: json) == "415")
        #expect(Self.value("grpc-status", in: json) == "12")
        var get = Self.request()
        get[0] = HPACKHeader(":method", "GET")
        let wrongMethod = try await Self.exchange(port: server.port, headers: get, message: nil)
        #expect(Self.value(":status", in: wrongMethod) == "405")
    }

    /// A combining mark after the leading "/" stays part of the method's name: it does not
    /// reach the method whose name follows (a character-wise drop swallowed the mark, and a
    /// proxy's path rules could be passed by).
    @Test func aPathWithACombiningMarkIsNotAnotherMethod() async throws {
        let server = try GRPCServer(router: RPCRouter(routes: SampleHandlers().allRoutes))
        defer { Task { await server.shutdown() } }
        let blocks = try await Self.exchange(port: server.port, headers: Self.request(path: "/\u{301}signal.chat.Usernames/LookUpUsernameHash"),
                                             message: Self.lookUp)
        #expect(Self.value("grpc-status", in: blocks) == "12", "UNIMPLEMENTED, not the method")
        #expect(Self.value(GRPCResponseMapping.statusTrailer, in: blocks) == "404", "a missing route's status, as over the WebSocket")
        // The same answer when only the headers came (the call begins before any message).
        let headersOnly = try await Self.exchange(port: server.port, headers: Self.request(path: "/signal.chat.Usernames/Nothing"), message: nil)
        #expect(Self.value("grpc-status", in: headersOnly) == "12")
        #expect(Self.value(GRPCResponseMapping.statusTrailer, in: headersOnly) == "404")
        let plain = try await Self.exchange(port: server.port, headers: Self.request(), message: Self.lookUp)
        #expect(Self.value("grpc-status", in: plain) == "0")
    }

    @Test func aMalformedTimeoutIsRefused() async throws {
        let server = try GRPCServer(router: RPCRouter(routes: SampleHandlers().allRoutes))
        defer { Task { await server.shutdown() } }
        let blocks = try await Self.exchange(port: server.port, headers: Self.request(extra: [HPACKHeader("grpc-timeout", "12x")]), message: Self.lookUp)
        #expect(Self.value("grpc-status", in: blocks) == "13")
        #expect(Self.value("grpc-message", in: blocks).map(GRPCMetadata.decodeMessage)?.contains("grpc-timeout") == true)
    }

    @Test func errorDetailsPastThePeersHeaderLimitLeaveTheStatus() async throws {
        // A 400 whose body (the message's source) is 50 kB of text.
        let route = RPCRoute(endpoint: Usernames.lookUpUsernameHash, message: { _, _ in
            RPCResponse(status: 400, headers: ["Content-Type": "text/plain"], body: Data(String(repeating: "x", count: 50_000).utf8))
        }, handler: { _, _ in RPCResponse(status: 400) })
        let server = try GRPCServer(router: RPCRouter(routes: [route]))
        defer { Task { await server.shutdown() } }
        // A client that takes at most 8 KiB of headers, as grpc-java.
        let blocks = try await Self.exchange(port: server.port, headers: Self.request(), message: Self.lookUp, maxHeaderListSize: 8192)
        #expect(Self.value("grpc-status", in: blocks) == "3", "INVALID_ARGUMENT, not an HTTP/2 reset")
        let message = try #require(Self.value("grpc-message", in: blocks))
        #expect(message.utf8.count <= 1024 * 3 + 3, "cut to a kilobyte before encoding")
    }

    @Test func metadataFollowsGRPCsRules() {
        #expect(GRPCMetadata.isReserved("grpc-anything"))
        #expect(!GRPCMetadata.isReserved("x-trace"))
        for name in GRPCMetadata.reservedNames { #expect(GRPCMetadata.isReserved(name), "\(name)") }
        for name in ["t", "tee", "hosts", "acceptx", "content-typ", "switchboard", "x-grpc-a", ""] {
            #expect(!GRPCMetadata.isReserved(name), "\(name)")
        }
        // Names go lowercase; one already lowercase is the same string (not a copy).
        #expect(GRPCMetadata.lowercasedName("X-Signal-Key_1.a") == "x-signal-key_1.a")
        #expect(GRPCMetadata.lowercasedName("accept") == "accept")
        #expect(GRPCMetadata.lowercasedName("") == "")
        #expect(GRPCMetadata.lowercasedName("ÉTÉ-X") == "été-x", "beyond ASCII, the standard library's case mapping")
        #expect(GRPCMetadata.lowercasedName(String(repeating: "AbC", count: 50)) == String(repeating: "abc", count: 50))
        #expect(GRPCMetadata.isValidValue("abc é", name: "x"))
        #expect(!GRPCMetadata.isValidValue("a\r\nb", name: "x"))
        #expect(GRPCMetadata.sendable(" padded\t") == "padded", "no whitespace at either end")
        #expect(GRPCMetadata.sendable("in side") == "in side")
        #expect(GRPCMetadata.encodeBinary(Data([1])) == "AQ", "unpadded base64")
        #expect(GRPCMetadata.decodeBinary("AQ") == Data([1]))
        #expect(GRPCMetadata.encodeMessage(" a b ") == "%20a b%20", "no space at either end")
        #expect(GRPCMetadata.decodeMessage("%20a b%20") == " a b ")
        #expect(GRPCMetadata.decodeMessage("%+F") == "%+F", "a sign is not a hex digit")
        #expect(GRPCResponseMapping.isGRPCContentType("application/grpc+proto"))
        #expect(!GRPCResponseMapping.isGRPCContentType("application/grpc-web"))
    }

    /// What a call gets when a proxy in front of the server answers `status` with `headers`
    /// and an HTML page, never reaching a gRPC server.
    static func proxied(status: Int, headers: [HPACKHeader] = []) async throws -> RequestResult<LookUpUsernameHashResponse, Usernames.LookUpUsernameHashError> {
        try await answered { bytes in
            var encoder = HPACKEncoder()
            var block: [UInt8] = []
            encoder.encode([HPACKHeader(":status", "\(status)"), HPACKHeader("content-type", "text/html")] + headers, into: &block)
            HTTP2FrameEncoder.write(HTTP2Frame(streamID: 1, payload: .headers(fragment: block[...], endStream: false, endHeaders: true)), into: &bytes)
            HTTP2FrameEncoder.writeData(Array("<html>\(status)</html>".utf8)[...], streamID: 1, endStream: true, into: &bytes)
        }
    }

    /// What a call gets from a peer that reads the request and answers with the frames
    /// `respond` writes for stream 1 (after its SETTINGS and their acknowledgement).
    static func answered(_ respond: @escaping @Sendable (inout [UInt8]) -> Void) async throws -> RequestResult<LookUpUsernameHashResponse, Usernames.LookUpUsernameHashError> {
        let listener = try TCPListener()
        defer { listener.close() }
        Thread.detachNewThread {
            guard let socket = listener.accept() else { return }
            defer { socket.close() }
            var decoder = HTTP2FrameDecoder(maxFrameSize: HTTP2FrameLimits.maximumMaxFrameSize, expectsPreface: true)
            var sawRequest = false
            while !sawRequest, let read = try? socket.read(maximum: 65_536), !read.isEmpty {
                decoder.append(read)
                while let frame = try? decoder.nextFrame() { if frame.streamID == 1 { sawRequest = true } }
            }
            var bytes = GRPCSubscribeDeadlineTests.settingsAndAcknowledgement
            respond(&bytes)
            try? socket.write(bytes)
            while let read = try? socket.read(maximum: 65_536), !read.isEmpty {}
        }
        let transport = GRPCClientTransport<Unauthenticated>(host: "127.0.0.1", port: listener.port)
        defer { transport.close() }
        return await UsernamesClient(transport: transport).lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([1])))
    }

    /// A message cut short before the trailers is an error, whatever the trailers say (only
    /// an END_STREAM on DATA was checked: the stray bytes were dropped and the call succeeded).
    /// Found by review.
    @Test func aMessageCutShortBeforeTheTrailersIsInternal() async throws {
        let result = try await Self.answered { bytes in
            var encoder = HPACKEncoder()
            var block: [UInt8] = []
            encoder.encode([HPACKHeader(":status", "200"), HPACKHeader("content-type", "application/grpc")], into: &block)
            HTTP2FrameEncoder.write(HTTP2Frame(streamID: 1, payload: .headers(fragment: block[...], endStream: false, endHeaders: true)), into: &bytes)
            // One whole (empty) message, then the start of a second that never ends.
            HTTP2FrameEncoder.writeData([0, 0, 0, 0, 0, 0, 0, 0, 0, 100, 0xAA][...], streamID: 1, endStream: false, into: &bytes)
            var trailers: [UInt8] = []
            encoder.encode([HPACKHeader("grpc-status", "0")], into: &trailers)
            HTTP2FrameEncoder.write(HTTP2Frame(streamID: 1, payload: .headers(fragment: trailers[...], endStream: true, endHeaders: true)), into: &bytes)
        }
        guard case let .grpcStatus(code, _, _)? = result.transportError else {
            Issue.record("expected INTERNAL, got \(result)")
            return
        }
        #expect(code == GRPCStatusCode.internal.rawValue)
    }

    /// A proxy's page is a transport failure with gRPC's code for its HTTP status, never the
    /// endpoint's declared error for that status (a load balancer's 404 read as the endpoint's
    /// `notFound` said the username did not exist), and never INTERNAL from reading HTML as
    /// gRPC messages; 429 and 503 with Retry-After are `retryLater`, as on the WebSocket path.
    @Test func aProxysErrorPageIsATransportFailureWithGRPCsCode() async throws {
        func code(_ result: RequestResult<LookUpUsernameHashResponse, Usernames.LookUpUsernameHashError>) -> Int? {
            if case let .grpcStatus(code, _, _)? = result.transportError { return code }
            return nil
        }
        #expect(code(try await Self.proxied(status: 404)) == GRPCStatusCode.unimplemented.rawValue, "not the endpoint's notFound")
        #expect(code(try await Self.proxied(status: 502)) == GRPCStatusCode.unavailable.rawValue)
        #expect(code(try await Self.proxied(status: 401)) == GRPCStatusCode.unauthenticated.rawValue)
        #expect(code(try await Self.proxied(status: 429)) == GRPCStatusCode.unavailable.rawValue)
        #expect(code(try await Self.proxied(status: 500)) == GRPCStatusCode.unknown.rawValue)
        #expect(try await Self.proxied(status: 429, headers: [HPACKHeader("retry-after", "7")]).transportError
                == .retryLater(retryAfter: .seconds(7)))
        #expect(try await Self.proxied(status: 503, headers: [HPACKHeader("retry-after", "3")]).transportError
                == .retryLater(retryAfter: .seconds(3)))
    }
}
