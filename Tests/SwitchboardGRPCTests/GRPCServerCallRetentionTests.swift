import Foundation
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
}
