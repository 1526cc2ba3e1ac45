@testable import SwitchboardIO
import Testing

/// Bytes a channel reads before anyone owns it are kept up to a limit; past it the channel
/// ends with the reason, instead of handing its next owner a stream cut short (from the
/// client review: an HTTP/2 server's 16 KiB and more before the driver started were cut).
struct ParkedReaderTests {
    @Test func keepsBytesUpToTheLimitAndEndsPastIt() {
        let reader = ParkedReader(limit: 8)
        [UInt8](repeating: 1, count: 5).withUnsafeBytes { reader.channelRead($0) }
        [UInt8](repeating: 2, count: 3).withUnsafeBytes { reader.channelRead($0) }
        #expect(reader.endReason == nil)
        #expect(reader.take() == [1, 1, 1, 1, 1, 2, 2, 2])
        [UInt8](repeating: 3, count: 6).withUnsafeBytes { reader.channelRead($0) }
        [UInt8](repeating: 4, count: 6).withUnsafeBytes { reader.channelRead($0) }
        #expect(reader.endReason == "the peer sent more than 8 bytes before they could be read")
        #expect(reader.take().isEmpty, "nothing cut short is handed on")
    }
}
