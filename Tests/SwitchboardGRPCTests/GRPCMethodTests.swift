import Foundation
import SignalChat
@testable import SwitchboardGRPC
import SwitchboardRuntime
import Testing

/// How a gRPC server resolves a request's path (once per connection and path), and the
/// byte-wise name checks that spare lowering and comparing strings on every call.
@Suite(.timeLimit(.minutes(2))) struct GRPCMethodTests {
    static let router = RPCRouter(routes: SampleHandlers().allRoutes)
    static let lookUpPath = "/" + Usernames.lookUpUsernameHash.rpcName

    @Test func pathsResolveToTheirKind() throws {
        let lookUp = GRPCMethod(path: Self.lookUpPath, router: Self.router)
        #expect(lookUp.rpcName == Usernames.lookUpUsernameHash.rpcName)
        #expect(lookUp.endpoint == Usernames.lookUpUsernameHash)
        let events = GRPCMethod(path: "/signal.chat.Messages/SwitchboardEvents", router: Self.router)
        guard case let .events(service) = events.kind else { throw Failure("\(events.kind)") }
        #expect(service == "signal.chat.Messages")
        guard case .acknowledge = GRPCMethod(path: "/signal.chat.Messages/SwitchboardAcknowledge", router: Self.router).kind else {
            throw Failure("an acknowledgement")
        }
        for unknown in ["/signal.chat.Usernames/Nothing", "/", "//" + Usernames.lookUpUsernameHash.rpcName, Self.lookUpPath + "x"] {
            let method = GRPCMethod(path: unknown, router: Self.router)
            guard case .unknown = method.kind else { throw Failure("\(unknown): \(method.kind)") }
            #expect(method.endpoint == nil)
        }
    }

    @Test func aRepeatedPathIsFoundInTheCacheWhateverStringHoldsIt() {
        let cache = GRPCMethodCache(router: Self.router)
        let first = cache.method(forPath: Self.lookUpPath)
        // The same bytes in another string (built, not the literal's storage).
        let rebuilt = String(decoding: Array(Self.lookUpPath.utf8), as: UTF8.self)
        let again = cache.method(forPath: rebuilt)
        #expect(first.endpoint == Usernames.lookUpUsernameHash && again.endpoint == Usernames.lookUpUsernameHash)
        #expect(cache.cachedPathCount == 1)
        // A path of the same length that differs is another entry, not the first's method.
        let sealed = "/" + SealedSenderMessages.sendSealedMessage.rpcName
        #expect(cache.method(forPath: sealed).endpoint == SealedSenderMessages.sendSealedMessage)
        #expect(cache.cachedPathCount == 2)
    }

    @Test func theCacheIsBoundedAndKeepsNoUnknownOrLongPath() {
        let cache = GRPCMethodCache(router: Self.router)
        // Paths nothing serves (a hostile peer's) take no room.
        for index in 0..<50 { _ = cache.method(forPath: "/made.up/Method\(index)") }
        #expect(cache.cachedPathCount == 0)
        let long = "/" + String(repeating: "s", count: GRPCMethodCache.longestPath) + "/SwitchboardEvents"
        guard case .events = cache.method(forPath: long).kind else {
            Issue.record("a long events path is still served")
            return
        }
        #expect(cache.cachedPathCount == 0, "over \(GRPCMethodCache.longestPath) bytes: resolved, not kept")
        let longest = "/" + String(repeating: "s", count: GRPCMethodCache.longestPath - 1 - GRPCMethod.eventsSuffix.utf8.count) + GRPCMethod.eventsSuffix
        #expect(longest.utf8.count == GRPCMethodCache.longestPath)
        _ = cache.method(forPath: longest)
        #expect(cache.cachedPathCount == 1, "at the limit: kept")
        _ = cache.method(forPath: longest + "x")
        #expect(cache.cachedPathCount == 1)
        // More services than room: every answer stays right, the room stays bounded.
        for round in 0..<2 {
            for index in 0..<(GRPCMethodCache.capacity * 3) {
                let method = cache.method(forPath: "/service\(index)/SwitchboardEvents")
                guard case let .events(service) = method.kind else {
                    Issue.record("round \(round), \(index): \(method.kind)")
                    continue
                }
                #expect(service == "service\(index)")
            }
        }
        #expect(cache.cachedPathCount == GRPCMethodCache.capacity)
    }

    /// A server without the called method: the same typed result over both transports (the
    /// WebSocket's 404 for a path no route serves), whether or not the gRPC server has seen
    /// the path before.
    @Test func aMethodTheServerLacksGivesTheSameResultOnBothTransports() async throws {
        let both = try await BothTransports(routes: ChatRoom.routes(ResponseHeadersTests.TaggingRoom()))
        let request = SendMessageRequest(destination: "x", timestamp: Date(timeIntervalSince1970: 1), messages: [], online: false, urgent: true)
        let overWebSocket = await MessagesClient(transport: both.webSocket).sendMessage(request)
        var overGRPC: [String] = []
        for _ in 0..<2 { overGRPC.append("\(await MessagesClient(transport: both.grpc).sendMessage(request))") }
        await both.close()
        if case .success = overWebSocket { Issue.record("the WebSocket server has no such route: \(overWebSocket)") }
        #expect(overGRPC == ["\(overWebSocket)", "\(overWebSocket)"])
    }

    @Test func aRouteFoundOnceServesAsItsNameDoes() async throws {
        let route = try #require(Self.router.messageRoute(for: Usernames.lookUpUsernameHash.rpcName))
        #expect(route.endpoint == Usernames.lookUpUsernameHash)
        #expect(Self.router.messageRoute(for: "signal.chat.Usernames/Nothing") == nil)
        let body = LookUpUsernameHashRequest(hash: Data([1, 2])).serializedData()
        let byRoute = await Self.router.handleMessage(route, body: body, headers: [:], auth: .none)
        let byName = await Self.router.handleMessage(rpcName: Usernames.lookUpUsernameHash.rpcName, body: body, headers: [:], auth: .none)
        #expect(byRoute.status == 200 && byRoute.body == byName.body)
        #expect(try LookUpUsernameHashResponse(serializedBytes: Array(byRoute.body)).uuid == "0102")
        // The endpoint's auth still decides: this one is for the unauthenticated connection.
        #expect(await Self.router.handleMessage(route, body: body, headers: [:], auth: .account).status == 403)
    }

    /// The default rule: a call with `authorization` metadata is the account's. HTTP/2 names
    /// arrive lowercase (uppercase ones are refused by the connection), so it looks for that
    /// spelling exactly.
    @Test func theDefaultAuthenticationLooksForAuthorization() {
        let authenticate = GRPCServerOptions().authenticate
        #expect(authenticate(["user-agent": "x", "authorization": "Basic YTpi"]) == .account)
        #expect(authenticate(["authorization": ""]) == .account, "present, whatever its value")
        #expect(authenticate(["user-agent": "x", "x-authorization": "y", "authorizatio": "z"]) == .none)
        #expect(authenticate([:]) == .none)
        // HTTP/2 never delivers this spelling (the connection refuses uppercase names).
        #expect(authenticate(["Authorization": "Basic YTpi"]) == .none)
    }

    @Test func namesInAnyCaseAreReservedAsTheirLowercaseIs() {
        var probes = Array(GRPCMetadata.reservedNames) + ["grpc-x", "switchboard-status", "x-trace", "accep", "te", "t", "", "grpc", "switchboar"]
        probes += probes.map { $0.uppercased() } + probes.map { $0.capitalized }
        probes += ["Content-Type", "GRPC-Timeout", "Switchboard-Error-Body", "X-Grpc-A", "caf\u{E9}", "Gr\u{E9}c-x"]
        for name in probes {
            #expect(GRPCMetadata.isReserved(anyCase: name) == GRPCMetadata.isReserved(name.lowercased()), "\(name)")
        }
        // Beyond ASCII the folded check may miss a name that lowercases to a reserved one
        // (the Kelvin sign lowers to "k"); the check of the lowered name after it catches it.
        #expect(!GRPCMetadata.isReserved(anyCase: "\u{212A}eep-alive"))
        #expect(GRPCMetadata.isReserved(GRPCMetadata.lowercasedName("\u{212A}eep-alive")))
        #expect(GRPCMetadata.lowercasedName("\u{C9}t\u{C9}") == "\u{E9}t\u{E9}", "no ASCII capital, still lowered")
    }

    @Test func requestMetadataDropsReservedNamesInAnyCase() {
        let headers: RPCHeaders = ["Accept": "application/x-protobuf", "Content-Type": "application/x-protobuf", "X-Trace": "1",
                                   "GRPC-Timeout": "1S", "Switchboard-Status": "200", "\u{212A}eep-Alive": "x", "TE": "trailers",
                                   "Authorization": "secret"]
        let fields = GRPCMetadata.requestMetadata(headers)
        #expect(fields.map(\.name) == ["x-trace", "authorization"])
        #expect(fields.first { $0.name == "authorization" }?.indexing == .never)
    }

    @Test func byteComparisonsAgreeWithTheStandardLibrarys() {
        let texts = ["application/grpc", "application/grpc+json", "APPLICATION/GRPC", "POST", "post", "", "grpc-", "GRPC-x", "gRpC-timeout",
                     "caf\u{E9}", "cafe\u{301}", "@[`{", String(repeating: "a", count: 40)]
        for text in texts {
            #expect(text.hasBytes("application/grpc") == Array(text.utf8).elementsEqual("application/grpc".utf8), "\(text)")
            #expect(text.hasBytes("POST") == (Array(text.utf8) == Array("POST".utf8)), "\(text)")
            #expect(text.hasBytes("") == text.isEmpty, "\(text)")
            let folded = text.utf8.map { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") ? $0 | 0x20 : $0 }
            #expect(text.hasBytePrefix(ignoringASCIICase: "grpc-") == folded.starts(with: "grpc-".utf8), "\(text)")
        }
        // Canonically equal (combining marks in either order), as long, but not the same bytes.
        #expect("a\u{301}\u{316}" == "a\u{316}\u{301}" && "a\u{301}\u{316}".utf8.count == "a\u{316}\u{301}".utf8.count)
        #expect(!"a\u{301}\u{316}".hasBytes("a\u{316}\u{301}"))
        #expect("a\u{301}\u{316}".hasBytes("a\u{301}\u{316}"))
    }
}

/// A test's failure with a message.
private struct Failure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
