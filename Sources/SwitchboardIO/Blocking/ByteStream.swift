/// A blocking bidirectional byte stream: ``TCPSocket`` for tests and tools, and
/// Network.framework's TLS on Apple platforms, which a `PumpedChannel` carries on an event
/// loop. Connections themselves run on non-blocking channels. Writes return once the bytes
/// are handed to the kernel, which is what backpressures a fast sender.
public protocol ByteStream: AnyObject, Sendable {
    /// Reads up to `buffer.count` bytes into `buffer` and returns how many; 0 means the
    /// peer closed. The connection reads this way, into a buffer it keeps, so a read
    /// allocates nothing.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(NetworkError) -> Int
    /// Reads up to `maximum` bytes; an empty result means the peer closed.
    func read(maximum: Int) throws(NetworkError) -> [UInt8]
    /// Writes every byte or throws.
    func write(_ bytes: [UInt8]) throws(NetworkError)
    /// Closes both directions; a blocked `read` returns.
    func close()
    /// Bounds later reads by `deadline` (reads then throw `timeout`); `nil` removes the bound.
    func setReadDeadline(_ deadline: ContinuousClock.Instant?) throws(NetworkError)
    /// Writes what fits without blocking and returns how many bytes that was; 0 when the
    /// stream cannot tell (the caller then writes on a thread that may block).
    func writeWithoutBlocking(_ bytes: [UInt8], from offset: Int) throws(NetworkError) -> Int
    /// The protocol TLS's ALPN settled on, or nil (no TLS, no ALPN, or not known).
    var negotiatedProtocol: String? { get }
}

extension ByteStream {
    public var negotiatedProtocol: String? { nil }

    public func read(maximum: Int) throws(NetworkError) -> [UInt8] {
        var failure: NetworkError?
        let bytes = [UInt8](unsafeUninitializedCapacity: maximum) { buffer, count in
            do throws(NetworkError) {
                count = try read(into: UnsafeMutableRawBufferPointer(buffer))
            } catch {
                failure = error
                count = 0
            }
        }
        if let failure { throw failure }
        return bytes
    }

    public func writeWithoutBlocking(_ bytes: [UInt8], from offset: Int) throws(NetworkError) -> Int { 0 }
}
