import Foundation
import PeerSupport
import SignalChat
@testable import SwitchboardGRPC
@testable import SwitchboardHTTP2
import SwitchboardRuntime
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The server stops a handler that nobody waits for any more. GRPCServerCall runs each
/// call's handler in a task and cancels it when the client resets the stream or when the
/// call's deadline (`grpc-timeout`) passes; these tests watch a generated handler that
/// sleeps until cancelled, so they fail if either cancellation stops reaching it. Found by
/// an audit: removing the call's `task?.cancel()` left every other test passing.
@Suite(.timeLimit(.minutes(4)))
struct GRPCHandlerCancellationTests {
    /// What the waiting handler saw, counted across threads.
    final class Probe: Sendable {
        /// Calls that began to wait.
        let waiting = Locked(0)
        /// Waits that ended because the task running the call was cancelled.
        let cancelled = Locked(0)
        /// Waits that ran their whole 60 s: nothing cancelled them.
        let sleptThrough = Locked(0)
    }

    /// `Usernames` as the generated protocol declares it: a request whose hash starts with
    /// `quick` is answered at once, any other waits 60 s unless its task is cancelled.
    struct WaitingUsernames: UsernamesHandler {
        static let quick: UInt8 = 0x01
        static let waits: UInt8 = 0x0A
        let probe: Probe

        func lookUpUsernameHash(_ request: LookUpUsernameHashRequest, context: ServerContext) async throws(Usernames.LookUpUsernameHashError) -> LookUpUsernameHashResponse {
            if request.hash.first == Self.quick { return LookUpUsernameHashResponse(uuid: "quick") }
            probe.waiting.withLock { $0 += 1 }
            do {
                try await Task.sleep(for: .seconds(60))
                probe.sleptThrough.withLock { $0 += 1 }
            } catch {
                // `Task.sleep` throws only when its task is cancelled.
                if Task.isCancelled { probe.cancelled.withLock { $0 += 1 } }
            }
            return LookUpUsernameHashResponse(uuid: "late")
        }
    }

    /// A raw call to LookUpUsernameHash on `stream`: its headers with `grpc-timeout`, then
    /// its whole request message with END_STREAM.
    static func call(_ stream: UInt32, hash: UInt8, timeout: String, encoder: inout HPACKEncoder) -> [UInt8] {
        let framed = GRPCMessageFramer.frame(LookUpUsernameHashRequest(hash: Data([hash])).serializedBytes())
        return GRPCStalledCallTests.headers(stream, path: GRPCStalledCallTests.lookUp, extra: [HPACKHeader("grpc-timeout", timeout)], encoder: &encoder)
            + GRPCHostilePeerTests.frame(stream, .data(framed[...], endStream: true, flowControlledLength: framed.count))
    }

    /// Each HEADERS frame the server sent on `stream`, decoded in the connection's order
    /// (HPACK's table is the connection's), with whether it ended the stream.
    static func headerBlocks(of stream: UInt32, in frames: [HTTP2Frame]) -> [(headers: [HPACKHeader], endStream: Bool)] {
        var decoder = HPACKDecoder()
        var blocks: [(headers: [HPACKHeader], endStream: Bool)] = []
        for frame in frames {
            guard case let .headers(fragment, endStream, _) = frame.payload, let block = try? decoder.decode(fragment) else { continue }
            if frame.streamID == stream { blocks.append((block.headers, endStream)) }
        }
        return blocks
    }

    /// Polls (blocking, on a raw client's reader thread) until the handler has seen
    /// cancellation, 10 s at most, and says how many times it has.
    static func awaitCancellationBlocking(_ probe: Probe) -> Int {
        for _ in 0..<1000 where probe.cancelled.current == 0 { usleep(10_000) }
        return probe.cancelled.current
    }

    /// Cancelling the Swift task that makes a call ends the call at once with
    /// `TransportError.cancelled`, and the reset that sends reaches the server's handler,
    /// which is cancelled rather than left sleeping; only the stream ends, so the next call
    /// goes out on the same connection. Fails without the server call's `task?.cancel()` on
    /// a reset stream.
    @Test func cancellingTheCallerCancelsTheHandler() async throws {
        let probe = Probe()
        let server = try GRPCServer(router: RPCRouter(routes: Usernames.routes(WaitingUsernames(probe: probe))))
        let transport = GRPCClientTransport<Unauthenticated>(host: "127.0.0.1", port: server.port)
        let client = UsernamesClient(transport: transport)
        // A deadline far past the test's waits: only the cancellation can end the call.
        let patient = CallOptions(timeout: .seconds(120))
        let call = Task {
            await client.lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([WaitingUsernames.waits])), options: patient)
        }
        let entered = await eventually(within: .seconds(30)) { probe.waiting.current == 1 }
        guard entered else {
            call.cancel()
            _ = await call.value
            transport.close()
            await server.shutdown(timeout: .seconds(1))
            Issue.record("the call never reached its handler")
            return
        }
        let cancelledAt = ContinuousClock.now
        call.cancel()
        let result = await call.value
        #expect(result == .failure(.cancelled), "\(result)")
        #expect(ContinuousClock.now - cancelledAt < .seconds(10), "the caller waited for the handler")
        #expect(await eventually(within: .seconds(10)) { probe.cancelled.current == 1 }, "the handler was not cancelled")
        #expect(probe.sleptThrough.current == 0)
        // The reset ended the stream, not the connection: the next call is served on it.
        #expect(server.connectionCount == 1)
        let next = await client.lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([WaitingUsernames.quick])), options: patient)
        #expect(next == .success(LookUpUsernameHashResponse(uuid: "quick")), "\(next)")
        #expect(transport.connectionsOpened == 1)
        transport.close()
        await server.shutdown(timeout: .seconds(1))
    }

    /// A call whose deadline passes fails with `TransportError.timeout` when its deadline
    /// passes, not when the handler would have finished, and its handler is cancelled
    /// (whichever side ends the stream first: the client's own deadline resets it, the
    /// server's `grpc-timeout` answers DEADLINE_EXCEEDED).
    @Test func aCallPastItsDeadlineCancelsTheHandler() async throws {
        let probe = Probe()
        let server = try GRPCServer(router: RPCRouter(routes: Usernames.routes(WaitingUsernames(probe: probe))))
        let transport = GRPCClientTransport<Unauthenticated>(host: "127.0.0.1", port: server.port)
        let client = UsernamesClient(transport: transport)
        // Connected first, so the short deadline is spent on the call alone.
        let warm = await client.lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([WaitingUsernames.quick])), options: CallOptions(timeout: .seconds(120)))
        #expect(warm == .success(LookUpUsernameHashResponse(uuid: "quick")), "\(warm)")
        let started = ContinuousClock.now
        let result = await client.lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([WaitingUsernames.waits])),
                                                     options: CallOptions(timeout: .seconds(3)))
        #expect(result == .failure(.timeout), "\(result)")
        #expect(ContinuousClock.now - started < .seconds(10), "the caller waited for the handler")
        #expect(probe.waiting.current == 1, "the call reached its handler before its deadline")
        #expect(await eventually(within: .seconds(10)) { probe.cancelled.current == 1 }, "the handler was not cancelled")
        #expect(probe.sleptThrough.current == 0)
        #expect(transport.connectionsOpened == 1)
        transport.close()
        await server.shutdown(timeout: .seconds(1))
    }

    /// The server enforces `grpc-timeout` itself: a raw client sends a whole call with
    /// `grpc-timeout: 200m` and then nothing (no reset, no close), and at the deadline the
    /// server cancels the handler and answers trailers-only DEADLINE_EXCEEDED (grpc-message "the
    /// deadline passed", no response message; a reset of its own, if any, is NO_ERROR); the handler's
    /// cancellation is seen while the connection is still open, so nothing but the server's
    /// deadline can have caused it.
    @Test func theServersDeadlineCancelsTheHandlerOfASilentClient() async throws {
        let probe = Probe()
        let server = try GRPCServer(router: RPCRouter(routes: Usernames.routes(WaitingUsernames(probe: probe))))
        var encoder = HPACKEncoder()
        // The server's SETTINGS acknowledged blind: this client never reads them.
        let bytes = GRPCHostilePeerTests.frame(0, .settings([], ack: true))
            + Self.call(1, hash: WaitingUsernames.waits, timeout: "200m", encoder: &encoder)
        let cancelledWhileOpen = Locked<Int?>(nil)
        let started = ContinuousClock.now
        let frames = await GRPCStalledCallTests.exchange(port: server.port, bytes) { frames in
            guard GRPCStalledCallTests.statuses(frames)[1] != nil else { return false }
            // Before this client closes its socket (which would end the call too).
            let seen = Self.awaitCancellationBlocking(probe)
            cancelledWhileOpen.withLock { $0 = seen }
            return true
        }
        let answered = ContinuousClock.now - started
        #expect(probe.waiting.current == 1, "the call reached its handler")
        #expect(cancelledWhileOpen.current == 1, "the handler was not cancelled at the server's deadline")
        #expect(probe.sleptThrough.current == 0)
        let blocks = Self.headerBlocks(of: 1, in: frames)
        #expect(blocks.count == 1, "one trailers-only answer: \(blocks.map { $0.headers })")
        let answer = blocks.first
        #expect(answer?.endStream == true)
        let fields = answer?.headers ?? []
        #expect(fields.first(where: { $0.name == "grpc-status" })?.value == "\(GRPCStatusCode.deadlineExceeded.rawValue)", "\(fields)")
        #expect(fields.first(where: { $0.name == "grpc-message" }).map { GRPCMetadata.decodeMessage($0.value) } == "the deadline passed", "\(fields)")
        #expect(!frames.contains { frame in
            if case .data = frame.payload { frame.streamID == 1 } else { false }
        }, "the cancelled handler's answer was sent")
        let resets = frames.compactMap { frame -> HTTP2ErrorCode? in
            if frame.streamID == 1, case let .rstStream(code) = frame.payload { code } else { nil }
        }
        #expect(resets.allSatisfy { $0 == .noError }, "\(resets)")
        // Measured from before the connection opened, so never shorter than the 200 ms the
        // server counts from the request's headers.
        #expect(answered >= .milliseconds(150), "answered after \(answered), before the deadline")
        await server.shutdown(timeout: .seconds(1))
    }

    /// A raw client resets one open call with RST_STREAM(CANCEL) and, in the same write, sends
    /// a second call on the same connection: the first handler is cancelled (seen while the
    /// connection is open, its deadline a minute away, so the reset alone did it), nothing
    /// is answered on the reset stream, and the second call is served, OK with its message.
    @Test func aResetStreamCancelsItsHandlerAndTheConnectionServesOn() async throws {
        let probe = Probe()
        let server = try GRPCServer(router: RPCRouter(routes: Usernames.routes(WaitingUsernames(probe: probe))))
        var encoder = HPACKEncoder()
        let first = GRPCHostilePeerTests.frame(0, .settings([], ack: true))
            + Self.call(1, hash: WaitingUsernames.waits, timeout: "60S", encoder: &encoder)
        // Encoded after the first call, and sent after it: the HPACK tables stay in step.
        let later = GRPCHostilePeerTests.frame(1, .rstStream(.cancel))
            + Self.call(3, hash: WaitingUsernames.quick, timeout: "60S", encoder: &encoder)
        let cancelledWhileOpen = Locked<Int?>(nil)
        let frames = await GRPCStalledCallTests.exchange(port: server.port, first, then: later,
                                                         laterWhen: { _ in probe.waiting.current == 1 }) { frames in
            guard GRPCStalledCallTests.statuses(frames)[3] != nil else { return false }
            let seen = Self.awaitCancellationBlocking(probe)
            cancelledWhileOpen.withLock { $0 = seen }
            return true
        }
        #expect(probe.waiting.current == 1, "the first call reached its handler")
        #expect(cancelledWhileOpen.current == 1, "the reset stream's handler was not cancelled")
        #expect(probe.sleptThrough.current == 0)
        #expect(GRPCStalledCallTests.statuses(frames) == [3: "0"], "only the second call is answered: \(GRPCStalledCallTests.statuses(frames))")
        #expect(!frames.contains { frame in
            if case .data = frame.payload { frame.streamID == 1 } else { false }
        }, "the reset stream was answered")
        var body: [UInt8] = []
        for frame in frames where frame.streamID == 3 {
            if case let .data(bytes, _, _) = frame.payload { body += bytes }
        }
        #expect(body.count > 5, "the second call's message")
        #expect(try LookUpUsernameHashResponse(serializedBytes: Array(body.dropFirst(5))).uuid == "quick")
        #expect(!frames.contains { if case .goAway = $0.payload { true } else { false } }, "the reset cost the connection")
        await server.shutdown(timeout: .seconds(1))
    }
}
