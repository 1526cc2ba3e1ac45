import Foundation
import PeerSupport
import SignalChat
@testable import SwitchboardGRPC
import SwitchboardRuntime
import SwitchboardWebSocket
import Testing

/// The generated SignalChat clients over our gRPC transport, against a server nobody here
/// wrote: Python's grpcio serving the `.proto` that `export-proto` writes. In the clear and
/// over TLS (ALPN h2).
@Suite(.timeLimit(.minutes(5)))
struct GRPCInteropTests {
    static func transport<Auth: AuthMode>(_ peer: GRPCPeer, _ security: GRPCPeer.Security, as _: Auth.Type = Auth.self,
                                          metadata: RPCHeaders = [:]) async throws -> GRPCClientTransport<Auth> {
        var options = GRPCClientOptions()
        options.metadata = metadata
        if security == .tls {
            let ca = try String(contentsOfFile: await TestCertificates.file("ca.pem"), encoding: .utf8)
            options.tls = TLSOptions(trustedCertificatesPEM: ca, serverName: "localhost")
        }
        return GRPCClientTransport(host: "127.0.0.1", port: peer.port, options: options)
    }

    static func test(_ behaviour: String, timeout: Duration? = nil) -> CallOptions {
        CallOptions(timeout: timeout, headers: ["x-test": behaviour])
    }

    @Test(arguments: GRPCPeer.Security.allCases)
    func typedCallsGetTypedResults(security: GRPCPeer.Security) async throws {
        let peer = try await GRPCPeer.shared(security)
        let transport: GRPCClientTransport<Unauthenticated> = try await Self.transport(peer, security)
        let usernames = UsernamesClient(transport: transport)
        let found = await usernames.lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([1, 2, 0xfe])))
        #expect(try found.get().uuid == "0102fe")
        // grpcio's initial and trailing metadata: both among the headers, the trailing alone
        // as trailers.
        let capture = ResponseCapture()
        _ = await usernames.lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([1, 2, 0xfe])), options: CallOptions(responseCapture: capture))
        #expect(capture.status == 200)
        #expect(capture.headers["x-server"] == "grpcio" && capture.headers["x-request-size"] == "5", "\(capture.headers)")
        #expect(capture.trailers["x-request-size"] == "5" && capture.trailers["x-server"] == nil, "\(capture.trailers)")
        // A path-bound field travels inside the message: the server saw the whole request.
        let event = await peer.event { $0.method == "/signal.chat.Usernames/LookUpUsernameHash" && $0.size == 5 }
        #expect(event?.size == 5)
        #expect(event?.metadata["user-agent"]?.hasPrefix("switchboard-grpc-swift") == true, "\(event?.metadata ?? [:])")
        // Credentials and call metadata reach the server; an account service works alike.
        let accounts: GRPCClientTransport<Authenticated> = try await Self.transport(peer, security, metadata: ["Authorization": "Basic dXNlcjpwYXNz"])
        let profile = await ProfilesClient(transport: accounts).getProfile(GetProfileRequest(identifier: "abc", version: "v1"),
                                                                           options: Self.test("big:10"))
        #expect(try profile.get().name == Data(repeating: 0x5a, count: 10))
        let seen = await peer.event { $0.method == "/signal.chat.Profiles/GetProfile" && $0.metadata["x-test"] == "big:10" }
        #expect(seen?.metadata["authorization"] == "Basic dXNlcjpwYXNz")
        #expect(seen?.metadata["x-test"] == "big:10")
        transport.close()
        accounts.close()
        await peer.stop()
    }

    @Test(arguments: GRPCPeer.Security.allCases)
    func everyStatusCodeBecomesTheSameResultAsItsHTTPStatusWould(security: GRPCPeer.Security) async throws {
        let peer = try await GRPCPeer.shared(security)
        let transport: GRPCClientTransport<Authenticated> = try await Self.transport(peer, security)
        let messages = MessagesClient(transport: transport)
        let request = SendMessageRequest(destination: "bob")
        for code in 1...16 {
            let capture = ResponseCapture()
            var options = Self.test("status:\(code):no é 100%")
            options.responseCapture = capture
            let result = await messages.sendMessage(request, options: options)
            switch (code, result) {
            // The server's CANCELLED is its status, with its message: `.cancelled` is for a
            // caller that cancelled (and an RST_STREAM CANCEL, too, arrives as status 1).
            case (4, .failure(.timeout)):
                break
            case let (_, .nonSuccess(error)):
                // A declared error: the endpoint maps this code to its status.
                let status = try #require(Messages.sendMessage.errorStatusByGRPCCode[code], "code \(code) gave \(error)")
                switch (status, error) {
                case (401, .unauthorized), (403, .forbidden), (409, .mismatchedDevices), (410, .staleDevices), (429, .rateLimited): break
                default: Issue.record("code \(code) became \(error), not the error of status \(status)")
                }
            case let (_, .failure(.grpcStatus(got, message, _))):
                #expect(Messages.sendMessage.errorStatusByGRPCCode[code] == nil, "code \(code) is declared")
                #expect(got == code)
                #expect(message == "no é 100%")
                // The metadata that came with the status is the caller's still.
                #expect(capture.status == nil)
                #expect(capture.trailers["x-request-size"] != nil, "code \(code): \(capture.trailers)")
            default:
                Issue.record("code \(code) gave \(result)")
            }
        }
        #expect(Messages.sendMessage.errorStatusByGRPCCode[16] == 401, "UNAUTHENTICATED is the declared 401")
        transport.close()
        await peer.stop()
    }

    /// `grpc-status-details-bin` as grpcio sends it (the trailer grpcio-status's
    /// `abort_with_status` fills): an undeclared code keeps it in `TransportError.grpcStatus`'s
    /// details, and a declared one, which becomes the endpoint's typed error, in the caller's
    /// `ResponseCapture`.
    @Test(arguments: GRPCPeer.Security.allCases)
    func statusDetailsReachTheCallerWhetherTheCodeIsDeclaredOrNot(security: GRPCPeer.Security) async throws {
        let peer = try await GRPCPeer.shared(security)
        let transport: GRPCClientTransport<Authenticated> = try await Self.transport(peer, security)
        let profiles = ProfilesClient(transport: transport)
        let request = GetProfileRequest(identifier: "aci-details", version: "v1")
        // A google.rpc.Status: code 5, message "gone", and one Any whose value holds bytes no
        // text encoding would carry.
        var status: [UInt8] = [0x08, 0x05, 0x12, 0x04]
        status += Array("gone".utf8)
        status += [0x1a, 0x05, 0x12, 0x03, 0x00, 0xff, 0xfe]
        let details = Data(status)
        let hex = details.map { String(format: "%02x", $0) }.joined()
        #expect(Profiles.getProfile.errorStatusByGRPCCode[GRPCStatusCode.unimplemented.rawValue] == nil, "UNIMPLEMENTED is undeclared")
        #expect(Profiles.getProfile.errorStatusByGRPCCode[GRPCStatusCode.notFound.rawValue] == 404, "NOT_FOUND is the declared 404")

        // Undeclared: a transport failure carrying the details, which the capture keeps too.
        let undeclaredCapture = ResponseCapture()
        let undeclared = await profiles.getProfile(request, options: CallOptions(headers: ["x-test": "details:12:\(hex):not here"],
                                                                                 responseCapture: undeclaredCapture))
        if case let .failure(.grpcStatus(code, message, got)) = undeclared {
            #expect(code == GRPCStatusCode.unimplemented.rawValue)
            #expect(message == "not here")
            #expect(got == details, "\(String(describing: got))")
        } else {
            Issue.record("expected UNIMPLEMENTED as .grpcStatus, got \(undeclared)")
        }
        #expect(undeclaredCapture.status == nil)
        #expect(undeclaredCapture.grpcStatusDetails == details, "\(undeclaredCapture.trailers)")
        #expect(undeclaredCapture.trailers["x-request-size"] != nil, "\(undeclaredCapture.trailers)")

        // Declared: the endpoint's typed error, and the details in the capture.
        let capture = ResponseCapture()
        let declared = await profiles.getProfile(request, options: CallOptions(headers: ["x-test": "details:5:\(hex):gone"], responseCapture: capture))
        #expect(declared == .nonSuccess(.notFound), "\(declared)")
        #expect(capture.status == 404)
        #expect(capture.grpcStatusDetails == details, "\(capture.trailers)")
        #expect(capture.trailers["x-request-size"] != nil, "\(capture.trailers)")
        // gRPC's other fields stay the transport's.
        #expect(capture.headers["grpc-status"] == nil && capture.headers["grpc-message"] == nil, "\(capture.headers)")

        // The same status without details: none, and none left over from the call before.
        let plain = await profiles.getProfile(request, options: CallOptions(headers: ["x-test": "status:5:gone"], responseCapture: capture))
        #expect(plain == .nonSuccess(.notFound), "\(plain)")
        #expect(capture.status == 404 && capture.grpcStatusDetails == nil, "\(capture.trailers)")
        transport.close()
        await peer.stop()
    }

    @Test func aCallThatWaitedForAStreamSendsTheTimeItHasLeft() async throws {
        let peer = try await GRPCPeer.oneStream.value
        let transport: GRPCClientTransport<Unauthenticated> = try await Self.transport(peer, .h2c)
        let usernames = UsernamesClient(transport: transport)
        // Connected (and the server's SETTINGS heard) first.
        _ = await usernames.lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([0])))
        // The first call holds the server's only stream for 1.5 s; the second, with 10 s to
        // live, waits for it and then tells the server what is left, not its 10 s.
        let holding = Task {
            let started = ContinuousClock.now
            _ = await usernames.lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([1])), options: Self.test("hold:1500", timeout: .seconds(30)))
            return started
        }
        // Queued only once the first call has the stream (a fixed sleep could lose that race).
        _ = await peer.event { $0.metadata["x-test"] == "hold:1500" && $0.started == true }
        let waitedFrom = ContinuousClock.now
        let waited = await usernames.lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([2])), options: Self.test("queued", timeout: .seconds(10)))
        // The server holds the first call 1.5 s from when it arrived, after `started`.
        let heldUntil = await holding.value + .milliseconds(1500)
        #expect((try? waited.get()) != nil, "\(waited)")
        let seen = await peer.event { $0.metadata["x-test"] == "queued" }
        let remaining = try #require(seen?.remaining)
        // At least about 1.3 s of waiting on a quiet machine; bounded from below by when the
        // first call started rather than assumed, since on a loaded machine that call can reach
        // the stream late (a shorter wait, a looser bound).
        let wait = Double((heldUntil - waitedFrom).components.seconds) + Double((heldUntil - waitedFrom).components.attoseconds) / 1e18
        #expect(remaining < 10 - wait + 0.4, "the server was told \(remaining) s of the 10 s after a wait of about \(wait) s")
        transport.close()
        await peer.stop()
    }

    @Test(arguments: GRPCPeer.Security.allCases)
    func theServerSeesTheDeadlineAndTheCancellation(security: GRPCPeer.Security) async throws {
        let peer = try await GRPCPeer.shared(security)
        let transport: GRPCClientTransport<Unauthenticated> = try await Self.transport(peer, security)
        let usernames = UsernamesClient(transport: transport)
        // Connected first, so the deadline below measures the call alone.
        _ = await usernames.lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([0])))
        // Deadline: the server is told (grpc-timeout) and gives up with the client.
        let started = ContinuousClock.now
        let late = await usernames.lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([1])), options: Self.test("sleep:30000", timeout: .seconds(3)))
        #expect(late == .failure(.timeout))
        #expect(ContinuousClock.now - started < .seconds(20), "well before the server's 30 s")
        let slept = await peer.event { $0.metadata["x-test"] == "sleep:30000" }
        #expect(slept?.cancelled == true)
        #expect((slept?.remaining ?? 99) <= 3.05 && (slept?.remaining ?? 0) > 0)
        // Cancellation: RST_STREAM(CANCEL) reaches the server.
        let call = Task { await usernames.lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([2])), options: Self.test("wait")) }
        // Cancelled once the server has it (a fixed sleep lost the race on a loaded machine).
        let serving = await peer.event { $0.metadata["x-test"] == "wait" && $0.started == true }
        #expect(serving != nil, "the server starts the call")
        call.cancel()
        #expect(await call.value == .failure(.cancelled))
        let waited = await peer.event { $0.metadata["x-test"] == "wait" && $0.started == nil }
        #expect(waited?.cancelled == true)
        transport.close()
        await peer.stop()
    }

    @Test(arguments: GRPCPeer.Security.allCases)
    func fourMebibyteMessagesBothWaysAndTheLimitBeyond(security: GRPCPeer.Security) async throws {
        let peer = try await GRPCPeer.shared(security)
        let transport: GRPCClientTransport<Authenticated> = try await Self.transport(peer, security)
        let content = Data((0..<(4 << 20) - 1024).map { UInt8(truncatingIfNeeded: $0) })
        var request = SendMessageRequest(destination: "bob")
        request.messages = [OutgoingMessage(content: content)]
        let sent = await MessagesClient(transport: transport).sendMessage(request)
        #expect(throws: Never.self) { try sent.get() }
        let event = await peer.event { $0.method == "/signal.chat.Messages/SendMessage" && $0.metadata["x-test"] == nil }
        #expect(event?.size == request.serializedBytes().count)
        let profiles = ProfilesClient(transport: transport)
        let big = await profiles.getProfile(GetProfileRequest(identifier: "a", version: "b"), options: Self.test("big:4000000"))
        #expect(try big.get().name.count == 4_000_000)
        // Past the 4 MiB default: RESOURCE_EXHAUSTED, typed.
        let tooBig = await profiles.getProfile(GetProfileRequest(identifier: "a", version: "b"), options: Self.test("big:5000000"))
        guard case let .failure(.grpcStatus(code, _, _)) = tooBig else {
            Issue.record("expected RESOURCE_EXHAUSTED, got \(tooBig)")
            return
        }
        #expect(code == GRPCStatusCode.resourceExhausted.rawValue)
        // The connection survives for the next call.
        #expect(try await profiles.getProfile(GetProfileRequest(identifier: "a", version: "b"), options: Self.test("big:1")).get().name.count == 1)
        transport.close()
        await peer.stop()
    }

    @Test(arguments: GRPCPeer.Security.allCases)
    func aHundredConcurrentCallsShareOneConnection(security: GRPCPeer.Security) async throws {
        let peer = try await GRPCPeer.shared(security)
        let transport: GRPCClientTransport<Unauthenticated> = try await Self.transport(peer, security)
        let usernames = UsernamesClient(transport: transport)
        let answers = await withTaskGroup(of: (Int, String?).self) { group in
            for n in 0..<100 {
                group.addTask {
                    let result = await usernames.lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([UInt8(n)])))
                    return (n, try? result.get().uuid)
                }
            }
            return await group.reduce(into: [Int: String?]()) { $0[$1.0] = $1.1 }
        }
        #expect(answers.count == 100)
        for (n, uuid) in answers { #expect(uuid == String(format: "%02x", n)) }
        #expect(transport.connectionsOpened == 1)
        transport.close()
        await peer.stop()
    }
}
