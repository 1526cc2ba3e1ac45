/// The limits one side of an HTTP/2 connection enforces and advertises. Every default is
/// safe against a hostile peer; raise them knowingly.
public struct HTTP2ConnectionConfiguration: Sendable, Hashable {
    /// MAX_CONCURRENT_STREAMS advertised: streams the peer may have open towards this side.
    /// Streams past it are refused with REFUSED_STREAM, which clients retry. Default 100.
    public var maxConcurrentStreams: UInt32 = 100
    /// INITIAL_WINDOW_SIZE advertised: how much one stream may send before this side
    /// refills its window. Default 1 MiB; at least 1. Under 65,535, a peer that sends before
    /// it has read this side's SETTINGS may overrun it (the RFC starts every window there).
    public var initialStreamWindowSize: UInt32 = 1 << 20
    /// The connection's receive window, opened with a WINDOW_UPDATE right after the
    /// preface: bytes in flight across all streams. Default 4 MiB.
    public var connectionWindowSize: UInt32 = 4 << 20
    /// MAX_FRAME_SIZE advertised: the largest frame payload accepted. Default 16,384 (the
    /// RFC's minimum, and the least honoured), so one frame buffers at most that much.
    public var maxFrameSize: UInt32 = HTTP2FrameLimits.minimumMaxFrameSize
    /// MAX_HEADER_LIST_SIZE advertised and enforced on every header block received
    /// (HPACK's size: name + value + 32 per field). Default 16 KiB.
    public var maxHeaderListSize: Int = 16 * 1024
    /// HEADER_TABLE_SIZE advertised: the HPACK table the peer's encoder may use. Default 4,096.
    public var headerTableSize: UInt32 = 4096
    /// The largest HPACK table this side's encoder uses, whatever the peer allows. Default 4,096.
    public var encoderTableSizeCap: Int = 4096
    /// The most compressed bytes one header block may span across HEADERS and
    /// CONTINUATION frames. Default 64 KiB.
    public var maxHeaderBlockSize: Int = 64 * 1024
    /// The most CONTINUATION frames one header block may use: bounds a flood of empty ones.
    /// Default 32.
    public var maxContinuationFrames: Int = 32
    /// Streams the peer may reset, as a burst and a sustained rate, before the connection
    /// ends with ENHANCE_YOUR_CALM (the "rapid reset" attack). Streams of the peer's that
    /// this side resets for the peer's stream errors count too ("made you reset"). Default
    /// 1,000 then 50 a second.
    public var resetLimit = HTTP2RateLimit(burst: 1000, perSecond: 50)
    /// Frames that cost work but carry nothing (PING, SETTINGS, PRIORITY, empty DATA and
    /// CONTINUATION, resets of closed streams) the peer may send, as a burst and a rate,
    /// before the connection ends with ENHANCE_YOUR_CALM. Default 10,000 then 1,000 a second.
    public var controlFrameLimit = HTTP2RateLimit(burst: 10_000, perSecond: 1000)
    /// Streams reset here whose late frames are still ignored instead of treated as errors.
    /// Default 1,024.
    public var recentlyResetStreamMemory: Int = 1024
    /// Bytes one stream may hold queued for the peer's flow-control window. A write that
    /// would take a stream that already has a backlog past it fails the stream (the driver
    /// resets it with ENHANCE_YOUR_CALM), so a peer that withholds its window (a push
    /// subscriber, say) cannot make this side queue without end. A stream's first write is
    /// always queued, however large: nothing here bounds its size (a gRPC server sends
    /// answers of any size), so what all streams hold is capped by
    /// ``maxPendingConnectionBytes``. Default 8 MiB.
    public var maxPendingStreamBytes: Int = 8 << 20
    /// Bytes all streams of the connection together may hold queued for the peer's
    /// flow-control windows (a peer that advertises INITIAL_WINDOW_SIZE 0, or withholds its
    /// connection WINDOW_UPDATEs, and opens many streams). A write that would leave bytes
    /// waiting and take the connection's total past it fails its stream (the driver resets
    /// it with ENHANCE_YOUR_CALM, which gRPC clients report as RESOURCE_EXHAUSTED); one write
    /// is always accepted when nothing else on the connection waits. Default 16 MiB.
    public var maxPendingConnectionBytes: Int = 16 << 20

    /// The defaults.
    public init() {}
}

/// A token bucket: `burst` events at once, then `perSecond` on average.
public struct HTTP2RateLimit: Sendable, Hashable {
    /// Events allowed at once.
    public var burst: Int
    /// Events allowed per second once the burst is spent.
    public var perSecond: Int

    /// A limit of `burst` at once and `perSecond` after.
    public init(burst: Int, perSecond: Int) {
        self.burst = burst
        self.perSecond = perSecond
    }
}

/// A ``HTTP2RateLimit`` being spent, on a clock the caller passes in (no timers, so it is
/// tested without waiting).
struct HTTP2TokenBucket: Sendable {
    let limit: HTTP2RateLimit
    private var tokens: Double
    private var refilledAt: ContinuousClock.Instant?

    init(_ limit: HTTP2RateLimit) {
        self.limit = limit
        tokens = Double(limit.burst)
    }

    /// Takes one token at `now`; false once the limit is exceeded.
    mutating func take(at now: ContinuousClock.Instant) -> Bool {
        if let refilledAt, now > refilledAt {
            let elapsed = Double((now - refilledAt).components.attoseconds) / 1e18 + Double((now - refilledAt).components.seconds)
            tokens = min(Double(limit.burst), tokens + elapsed * Double(limit.perSecond))
        }
        refilledAt = now
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }
}
