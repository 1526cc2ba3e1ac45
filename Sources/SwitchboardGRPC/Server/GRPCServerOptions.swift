import SwitchboardHTTP2
import SwitchboardIO
import SwitchboardRuntime

/// How a ``GRPCServer`` listens and what it accepts.
public struct GRPCServerOptions: Sendable {
    /// The certificate and key for TLS (ALPN `h2`; a client offering only other protocols is
    /// refused); nil serves h2c. The TLS handshake has no timeout of its own: it and the
    /// client's acknowledgement of the server's SETTINGS must finish within
    /// `http2.settingsTimeout` (10 s), so raising that lets a slow handshake hold its slot longer.
    public var tls: TLSServerContext?
    /// The HTTP/2 limits (MAX_CONCURRENT_STREAMS 100 per connection by default; answers a
    /// client's flow-control windows hold back, at most 16 MiB per connection,
    /// `protocolConfiguration.maxPendingConnectionBytes`, past which a call is reset with
    /// ENHANCE_YOUR_CALM, RESOURCE_EXHAUSTED to the client), keepalive and timeouts; a
    /// connection without streams for 5 minutes is closed (`idleTimeout`), so idle clients
    /// cannot hold the `maximumConnections` slots.
    public var http2: HTTP2ConnectionOptions = {
        var options = HTTP2ConnectionOptions()
        options.idleTimeout = .seconds(300)
        return options
    }()
    /// The largest request message accepted; larger ones fail with RESOURCE_EXHAUSTED. Default 4 MiB.
    public var maximumReceiveMessageSize = 4 << 20
    /// Bytes of requests all calls together may hold at once, from their headers until their
    /// stream closes (an event subscription's for as long as it lasts): each call counts 1 KiB,
    /// plus its header list's size as HPACK counts it (names and values, plus 32 a field; the
    /// call holds its metadata), plus its message's bytes as they arrive. A call that would
    /// pass it ends with RESOURCE_EXHAUSTED. Without it, 1,024 connections of 100 streams each
    /// could hold 4 MiB requests to 400 GiB, or 16 KiB header lists to 1.6 GiB. Default 256 MiB
    /// (some 60 requests of the largest size).
    public var maximumRequestBytesInFlight = 256 << 20
    /// Connections served at once, counted until each socket is released (a closed
    /// connection lingers up to a few seconds reading what its peer still sends); later ones
    /// are closed at once. Default 1,024.
    public var maximumConnections = 1024
    /// Connections the kernel may hold queued for `accept` (`TCPListener.defaultBacklog`,
    /// 1,024; the system caps it).
    public var listenBacklog = TCPListener.defaultBacklog
    /// Connections one client IP address may hold at once; more are closed at once, so one
    /// host cannot take every slot. Default 128 (raise it for clients behind one NAT).
    public var maximumConnectionsPerAddress = 128
    /// The longest a call may run when its client sends no `grpc-timeout`. Default 60 s.
    public var defaultCallTimeout: Duration = .seconds(60)
    /// The longest a call may run whatever `grpc-timeout` its client sends: a longer one is
    /// cut to this, so a client cannot hold a stream (and its buffered request) for years.
    /// Default 5 minutes.
    public var maximumCallTimeout: Duration = .seconds(300)
    /// How long a call's request message may take to arrive in full, from its headers, event
    /// subscriptions included (their request is the empty message that opens them); past it
    /// the call ends with DEADLINE_EXCEEDED. Default 30 s.
    public var requestReceiveTimeout: Duration = .seconds(30)
    /// The longest `grpc-message` an error carries, in bytes before percent-encoding (its
    /// start, cut on a character): it says what went wrong, and a whole error page would
    /// take the trailers past a client's header-list limit (grpc-java takes 8 KiB). Default 1,024.
    public var maximumErrorMessageBytes = 1024
    /// Which kind of connection a call counts as, from its metadata: routes for `auth account`
    /// endpoints need `.account`. Default: `.account` when an `authorization` header is present
    /// (spelled lowercase, as HTTP/2 carries every name).
    public var authenticate: @Sendable (RPCHeaders) -> AuthRequirement = { headers in
        // HTTP/2 names are lowercase (the connection refuses others), so an exact comparison
        // finds it; the case-insensitive lookup cost about 280 instructions a field.
        headers.fields.contains { $0.name.utf8.count == 13 && $0.name == "authorization" } ? .account : .none
    }
    /// The loops connections run on. Default: the process's shared group.
    public var eventLoops: EventLoopGroup = .shared
    /// How an `application/grpc+json` request is read into its generated type (which the
    /// handlers take). Default: unknown fields ignored, as a JSON body over the WebSocket
    /// path is read (so a client on a newer schema is still served), nesting at most 100
    /// deep, `Any` resolved through the shared registry.
    public var jsonDecoding = JSONDecodingOptions(ignoreUnknownFields: true)
    /// The services that have events, by full name (`package.Service`, a
    /// `ServiceDescriptor`'s `name`): only theirs are served as `<service>/SwitchboardEvents`
    /// and `<service>/SwitchboardAcknowledge`. A call to either method of any other service
    /// (one the server does not know, or one without events) is answered UNIMPLEMENTED,
    /// trailers-only, saying the server has no events for it, and never reaches
    /// ``GRPCServer/arrivingSubscribers()``. Set it from the generated descriptors with
    /// ``servicesWithEvents(_:)``.
    ///
    /// Default nil: the server does not know which services have events, and accepts a
    /// subscription to any service's (one nothing pushes to simply stays open without pushes).
    public var eventServices: Set<String>?

    /// The defaults: h2c, 4 MiB messages, 1,024 connections.
    public init() {}

    /// The names of those of `services` that declare events: what ``eventServices`` takes,
    /// as in `options.eventServices = GRPCServerOptions.servicesWithEvents([Messages.descriptor, Keys.descriptor])`.
    public static func servicesWithEvents(_ services: [ServiceDescriptor]) -> Set<String> {
        Set(services.filter { !$0.events.isEmpty }.map(\.name))
    }
}
