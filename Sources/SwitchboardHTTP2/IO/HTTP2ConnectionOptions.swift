/// How an HTTP/2 connection over a socket behaves beyond the protocol's own settings.
public struct HTTP2ConnectionOptions: Sendable, Hashable {
    /// The protocol limits this side enforces and advertises.
    public var protocolConfiguration = HTTP2ConnectionConfiguration()
    /// How often to PING a connection with calls or subscriptions open, to prove the peer is
    /// there; nil sends none. Default nil (as grpc-swift: keepalive is opt-in).
    public var keepaliveInterval: Duration?
    /// How long a PING (keepalive, or the one a call sends when it reaches its deadline) may go
    /// unanswered before the connection is dropped. Default 10 s.
    public var keepaliveTimeout: Duration = .seconds(10)
    /// How long after its last PING a call reaching its deadline may PING again when the peer
    /// has sent no HEADERS or DATA since (with data between, it always may). gRPC servers end
    /// a connection pinged more often than this without data (`too_many_pings`; their default
    /// permits one every 5 minutes). Default 5 minutes.
    public var minimumPingIntervalWithoutData: Duration = .seconds(300)
    /// How long the peer may take to acknowledge this side's SETTINGS before the connection
    /// ends with SETTINGS_TIMEOUT. Default 10 s.
    public var settingsTimeout: Duration = .seconds(10)
    /// Written bytes that may wait for the peer to read before this side stops reading
    /// (so a peer that sends but never reads cannot make it queue answers forever).
    /// Default 4 MiB; reading resumes under half of it. What a connection holds for such a
    /// peer is at most this plus the answers to the streams one read had already opened (at
    /// most MAX_CONCURRENT_STREAMS of them). It counts only bytes handed to the socket:
    /// answers held back by the peer's flow-control windows are capped apart, by
    /// ``HTTP2ConnectionConfiguration/maxPendingConnectionBytes`` (16 MiB).
    public var maxQueuedOutputBytes = 4 << 20
    /// Written bytes that may wait for the peer before the connection is closed: what a
    /// peer that stops reading is sent without asking (pushes on an event stream) does not
    /// pause with reading, so this is the hard cap. One write on its own is always queued,
    /// however large. Default 16 MiB.
    public var outputQueueLimit = 16 << 20
    /// Streams this side may have waiting for the peer's MAX_CONCURRENT_STREAMS to let them
    /// open; past it, opening one fails at once (``HTTP2StreamError/tooManyWaiting(limit:)``)
    /// instead of queueing it and its request behind a peer that may allow none. Default 1,024.
    public var maximumWaitingStreams = 1024
    /// How long the connection may go without any stream before it closes gracefully
    /// (GOAWAY, no error), so idle connections cannot hold a server's connection slots for
    /// ever; nil keeps them. Checked every so often: a connection closes between this and
    /// twice this after its last stream. Default nil; `GRPCServerOptions` sets 5 minutes.
    public var idleTimeout: Duration?
    /// How long a graceful close waits for open streams before closing anyway. Default 5 s.
    public var gracefulCloseTimeout: Duration = .seconds(5)
    /// How long a connection that ended after a protocol error or its own GOAWAY keeps
    /// reading (and dropping) the peer's bytes before it closes, so its GOAWAY is not lost to
    /// a TCP reset; a peer that closes first ends it at once. Not when the peer has gone away
    /// too and the socket lingers itself on close (TCP and OpenSSL TLS: it reads after its
    /// FIN until the peer closes). Default 500 ms.
    public var lingerAfterError: Duration = .milliseconds(500)

    /// The defaults.
    public init() {}
}
