import SwitchboardHTTP2
import SwitchboardIO
import SwitchboardRuntime

/// How a ``GRPCClientTransport`` connects and what it accepts.
public struct GRPCClientOptions: Sendable {
    /// TLS, with ALPN `h2`; nil speaks HTTP/2 in the clear with prior knowledge (h2c).
    public var tls: TLSOptions?
    /// How long DNS, TCP and TLS may take together (the server's HTTP/2 SETTINGS then have
    /// `HTTP2ConnectionOptions.settingsTimeout`). Default 10 s.
    public var connectTimeout: Duration = .seconds(10)
    /// How long after a failed connect the next one may start: (2^n − 1) s for the n-th
    /// failure in a row, jittered, at most 2 minutes (as gRPC's connection backoff caps it).
    /// Calls in between fail at once with the last connect's error, so a server that
    /// refuses every connection is not dialled once per call. A connection ended before the
    /// server's SETTINGS arrived counts as a failed connect; one whose SETTINGS arrived resets it.
    public var connectBackoff = RetryBackoff(maximum: .seconds(120))
    /// The largest response message accepted; larger ones fail with RESOURCE_EXHAUSTED.
    /// Default 4 MiB, as gRPC's.
    public var maximumReceiveMessageSize = 4 << 20
    /// The largest request message sent; larger ones fail before they go out. Default 4 MiB.
    public var maximumSendMessageSize = 4 << 20
    /// The HTTP/2 limits, keepalive and timeouts of the connection.
    public var http2 = HTTP2ConnectionOptions()
    /// The `:authority` sent; default `host:port`.
    public var authority: String?
    /// Metadata sent with every call (credentials, for instance), before the call's own. A
    /// name gRPC cannot spell (letters, digits, `-`, `_` and `.` only) or a value with NUL, CR
    /// or LF makes every call and subscription fail with `invalidRequest`.
    public var metadata: RPCHeaders = [:]
    /// The `user-agent` sent.
    public var userAgent = "switchboard-grpc-swift/0.1"
    /// The deadline of calls that set none, as the WebSocket transport's. Default 30 s.
    /// An event subscription waits this long for the server to accept it.
    public var defaultRequestTimeout: Duration = RPCCall.defaultRequestTimeout
    /// Pushes an event subscription holds for its handler. Pushes beyond it are dropped
    /// unacknowledged, so the server delivers them again, and a server that pushes faster
    /// than the handler runs cannot grow the queue without end. Default 256.
    public var maximumQueuedPushes = 256
    /// Bytes of pushes an event subscription holds for its handler, each push counting what
    /// it holds once decoded: its message's size (which may be as large as
    /// `maximumReceiveMessageSize`), plus about 100 bytes for each of its headers, plus 1 KiB
    /// for its bookkeeping (so a server cannot fill a message with 2-byte empty headers that
    /// decode to 50 times as much). Past it, pushes are dropped unacknowledged as past
    /// `maximumQueuedPushes`. Without it, 256 pushes of 4 MiB would hold a gigabyte.
    /// Default 16 MiB (three pushes of the largest size).
    public var maximumQueuedPushBytes = 16 << 20
    /// How long an open event subscription may hear nothing from the server before the
    /// client PINGs the connection; unanswered within `http2.keepaliveTimeout`, the connection
    /// ends and so does the subscription (a half-open connection, after a NAT forgot it or
    /// the network changed, would otherwise hold it silent for ever). nil never asks. Default
    /// 5.5 minutes: gRPC servers allow a PING without data every 5 minutes, and counting from
    /// when each arrives, a PING paced at exactly 5 minutes and delayed less on the way than
    /// the last one looks early (grpc-go counts a strike, and sends GOAWAY `too_many_pings` on
    /// the third); the PING also follows `http2.minimumPingIntervalWithoutData` like a deadline's.
    public var subscriptionLivenessInterval: Duration? = .seconds(330)
    /// What every push of an event subscription passes through before its handler, in
    /// order, as `ChatConnectionOptions.pushInterceptors` on the WebSocket: logging or
    /// metrics set up once see pushes over either transport. Default: none.
    public var pushInterceptors: [any PushInterceptor] = []
    /// The loops the connection runs on. Default: the process's shared group.
    public var eventLoops: EventLoopGroup = .shared
    /// Whether calls to `encoding json` endpoints carry their messages as canonical protobuf
    /// JSON (`content-type: application/grpc+json`) instead of protobuf. Off by default: a
    /// server must accept the subtype (Switchboard's `GRPCServer` does; a gRPC C-core server
    /// does with JSON (de)serializers of its own).
    public var usesJSONForJSONEndpoints = false

    /// The defaults: h2c, 4 MiB messages, 10 s to connect.
    public init() {}
}
