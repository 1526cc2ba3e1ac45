import Foundation
import SignalChat
@testable import SwitchboardGRPC
import SwitchboardHTTP2
import SwitchboardIO
import SwitchboardRuntime
import Testing

/// A request's DATA arrives as a slice of the connection's read buffer: once the call has
/// heard it, the call must not hold that buffer, whatever serves the request (an event
/// subscription lives as long as its client, and would pin the buffer all that time).
@Suite struct GRPCServerCallRetentionTests {
    /// A channel that takes every write and never reads: the call's answers go nowhere.
    private final class SilentChannel: ByteChannel, @unchecked Sendable {
        let loop = EventLoopGroup.shared.next()
        var queuedByteCount: Int { 0 }
        func activate(delegate: any ChannelDelegate, handshakeDone: (@Sendable (String?) -> Void)?) {}
        func write(_ bytes: [UInt8], completion: (@Sendable (String?) -> Void)?) -> SocketChannel.WriteResult { .written }
        func setReading(_ on: Bool) {}
        func closeAfterFlushing(timeout: Duration) {}
        func close(reason: String?) {}
    }

    @Test(arguments: ["/chat.Messages/SwitchboardEvents", "/chat.Messages/SwitchboardAcknowledge", "/chat.Messages/Missing"])
    func theReadBufferIsNotKept(path: String) throws {
        let acceptor = GRPCStreamAcceptor(router: RPCRouter(routes: []), options: GRPCServerOptions(), hub: GRPCEventHub(),
                                          budget: ByteBudget(limit: 1 << 20))
        let driver = HTTP2ChannelDriver(channel: SilentChannel(), role: .server, options: HTTP2ConnectionOptions(), acceptor: acceptor)
        let headers = [HPACKHeader(":method", "POST"), HPACKHeader(":scheme", "http"), HPACKHeader(":path", path),
                       HPACKHeader("content-type", "application/grpc"), HPACKHeader("te", "trailers")]
        let call = GRPCServerCall(streamID: 1, headers: headers, connection: driver, server: acceptor)
        // The read buffer: other bytes, then the request's DATA (an empty message) with END_STREAM.
        var buffer = [UInt8](repeating: 7, count: 16) + GRPCMessageFramer.frame([])
        call.streamReceived(data: buffer[16...], endStream: true)
        let before = buffer.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) }
        buffer[0] = 1
        let after = buffer.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) }
        #expect(before == after, "the call for \(path) still holds the read buffer")
        call.streamClosed(.completed)
    }

    /// A door a handler waits at until the test opens it.
    private final class Gate: @unchecked Sendable {
        private let lock = NSLock()
        private var waiter: CheckedContinuation<Void, Never>?
        private var isOpen = false
        private var hasEntered = false
        var entered: Bool { lock.withLock { hasEntered } }

        func wait() async {
            await withCheckedContinuation { continuation in
                let resumeNow = lock.withLock { () -> Bool in
                    hasEntered = true
                    if isOpen { return true }
                    waiter = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        }

        func open() {
            lock.withLock { () -> CheckedContinuation<Void, Never>? in
                isOpen = true
                defer { waiter = nil }
                return waiter
            }?.resume()
        }
    }

    /// A handler that ignores cancellation keeps running after its stream closed: it must
    /// not keep the call (and through it the connection) alive meanwhile, nor may the call's
    /// cancelled timer.
    @Test func aHandlerThatIgnoresCancellationDoesNotKeepItsCall() async throws {
        let gate = Gate()
        let route = RPCRoute(endpoint: Usernames.lookUpUsernameHash, message: { _, _ in
            await gate.wait()
            return RPCResponse(status: 200)
        }, handler: { _, _ in RPCResponse(status: 500) })
        let acceptor = GRPCStreamAcceptor(router: RPCRouter(routes: [route]), options: GRPCServerOptions(), hub: GRPCEventHub(),
                                          budget: ByteBudget(limit: 1 << 20))
        let driver = HTTP2ChannelDriver(channel: SilentChannel(), role: .server, options: HTTP2ConnectionOptions(), acceptor: acceptor)
        let headers = [HPACKHeader(":method", "POST"), HPACKHeader(":scheme", "http"), HPACKHeader(":path", "/" + Usernames.lookUpUsernameHash.rpcName),
                       HPACKHeader("content-type", "application/grpc"), HPACKHeader("te", "trailers")]
        weak var weakCall: GRPCServerCall?
        do {
            let call = GRPCServerCall(streamID: 1, headers: headers, connection: driver, server: acceptor)
            weakCall = call
            call.begin()
            call.streamReceived(data: ArraySlice(GRPCMessageFramer.frame([])), endStream: true)
            // The handler runs until it waits at the gate.
            for _ in 0..<500 where !gate.entered { try await Task.sleep(for: .milliseconds(10)) }
            try #require(gate.entered)
            call.streamClosed(.resetByPeer(.cancel))
        }
        #expect(weakCall == nil, "a closed stream's call is kept by its stuck handler or its timer")
        gate.open()
    }

    static let lookUpHeaders = [HPACKHeader(":method", "POST"), HPACKHeader(":scheme", "http"), HPACKHeader(":path", "/" + Usernames.lookUpUsernameHash.rpcName),
                                HPACKHeader("content-type", "application/grpc"), HPACKHeader("te", "trailers")]

    private static func acceptor(waitingAt gate: Gate, budget: ByteBudget) -> GRPCStreamAcceptor {
        let route = RPCRoute(endpoint: Usernames.lookUpUsernameHash, message: { _, _ in
            await gate.wait()
            return RPCResponse(status: 200)
        }, handler: { _, _ in RPCResponse(status: 500) })
        return GRPCStreamAcceptor(router: RPCRouter(routes: [route]), options: GRPCServerOptions(), hub: GRPCEventHub(), budget: budget)
    }

    /// A handler still running after its stream closed (reset, or answered at its deadline)
    /// keeps its request's bytes charged until it returns: freed at the close, a client could
    /// start handlers that ignore cancellation without end, each freeing its share for the next.
    @Test func aHandlerOutlivingItsStreamKeepsItsRequestChargedUntilItReturns() async throws {
        let gate = Gate()
        let budget = ByteBudget(limit: 1 << 20)
        let acceptor = Self.acceptor(waitingAt: gate, budget: budget)
        let driver = HTTP2ChannelDriver(channel: SilentChannel(), role: .server, options: HTTP2ConnectionOptions(), acceptor: acceptor)
        let request: [UInt8] = LookUpUsernameHashRequest(hash: Data(repeating: 1, count: 1000)).serializedBytes()
        let call = GRPCServerCall(streamID: 1, headers: Self.lookUpHeaders, connection: driver, server: acceptor)
        call.begin()
        call.streamReceived(data: ArraySlice(GRPCMessageFramer.frame(request)), endStream: true)
        for _ in 0..<500 where !gate.entered { try await Task.sleep(for: .milliseconds(10)) }
        try #require(gate.entered)
        let charged = budget.inUse
        #expect(charged > 1000)
        call.streamClosed(.resetByPeer(.cancel))
        #expect(budget.inUse == charged, "the reset freed the request's bytes while its handler still ran")
        gate.open()
        for _ in 0..<500 where budget.inUse != 0 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(budget.inUse == 0, "the handler returned: its bytes go back")
    }

    /// A call whose deadline passed before its request was in (`grpc-timeout: 1n`) is answered
    /// DEADLINE_EXCEEDED without starting its handler.
    @Test func aCallAlreadyPastItsDeadlineStartsNoHandler() async throws {
        let gate = Gate()
        let budget = ByteBudget(limit: 1 << 20)
        let acceptor = Self.acceptor(waitingAt: gate, budget: budget)
        let driver = HTTP2ChannelDriver(channel: SilentChannel(), role: .server, options: HTTP2ConnectionOptions(), acceptor: acceptor)
        let call = GRPCServerCall(streamID: 1, headers: Self.lookUpHeaders + [HPACKHeader("grpc-timeout", "1n")], connection: driver, server: acceptor)
        call.begin()
        try await Task.sleep(for: .milliseconds(5))
        call.streamReceived(data: ArraySlice(GRPCMessageFramer.frame([])), endStream: true)
        try await Task.sleep(for: .milliseconds(200))
        #expect(!gate.entered, "a handler ran for a call already past its deadline")
        call.streamClosed(.completed)
        #expect(budget.inUse == 0)
        gate.open()
    }
}
