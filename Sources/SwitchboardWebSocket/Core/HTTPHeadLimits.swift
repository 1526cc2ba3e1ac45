/// How much of an HTTP/1.1 head (the opening handshake's request or response) is read from a
/// peer before it is refused: a head past either limit is an error, not buffered or kept.
public struct HTTPHeadLimits: Sendable, Hashable {
    /// The largest head in bytes, start line and headers. Default 16 KiB
    /// (``HTTPHead/maximumSize``); from 64 bytes to 16 MiB.
    public private(set) var maximumSize: Int
    /// The most header fields: they are kept as the connection's handshake headers for its
    /// life, so a head of thousands of tiny fields would cost memory long after it was read.
    /// Default 100 (``HTTPHead/maximumHeaderCount``); from 1 to 100,000.
    public private(set) var maximumHeaderCount: Int

    /// Limits of `maximumSize` bytes and `maximumHeaderCount` fields, each held to its range;
    /// the defaults suit browsers and proxies (a CDN in front of a server adds headers: raise
    /// them there).
    public init(maximumSize: Int = HTTPHead.maximumSize, maximumHeaderCount: Int = HTTPHead.maximumHeaderCount) {
        self.maximumSize = min(max(maximumSize, 64), 16 << 20)
        self.maximumHeaderCount = min(max(maximumHeaderCount, 1), 100_000)
    }
}
