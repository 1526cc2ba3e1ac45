import Foundation
import PeerSupport
@testable import SwitchboardHTTP2
import SwitchboardIO
import Testing

/// The driver's timers hold it strongly (a weak reference would make every retain of it
/// dearer), so none may be scheduled once its connection has ended, even by the write that
/// ended it.
@Suite(.timeLimit(.minutes(1))) struct HTTP2DriverRetentionTests {
    /// A channel whose every write fails, as a socket the peer has reset does.
    private final class FailingChannel: ByteChannel, @unchecked Sendable {
        let loop = EventLoopGroup.shared.next()
        var queuedByteCount: Int { 0 }
        func activate(delegate: any ChannelDelegate, handshakeDone: (@Sendable (String?) -> Void)?) {}
        func write(_ bytes: [UInt8], completion: (@Sendable (String?) -> Void)?) -> SocketChannel.WriteResult { .failed("reset by peer") }
        func setReading(_ on: Bool) {}
        func closeAfterFlushing(timeout: Duration) {}
        func close(reason: String?) {}
    }

    /// Its first write (the preface and SETTINGS) fails and ends the connection: the
    /// SETTINGS timer that would follow (10 s) must not be scheduled to hold the driver.
    @Test func aConnectionEndedByItsFirstWriteLetsGoOfItsDriver() async throws {
        weak var released: HTTP2ChannelDriver?
        do {
            let driver = HTTP2ChannelDriver(channel: FailingChannel(), role: .client, options: HTTP2ConnectionOptions())
            released = driver
            driver.start()
        }
        _ = await eventually(within: .seconds(60)) { released == nil }
        #expect(released == nil, "an ended connection's driver is held by a timer")
    }
}
