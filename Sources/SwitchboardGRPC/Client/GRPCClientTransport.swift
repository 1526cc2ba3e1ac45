import Foundation
import SwitchboardHTTP2
import SwitchboardIO
import SwitchboardRuntime

/// The generated clients over gRPC: each call is a unary gRPC call on `/package.Service/Method`
/// (the endpoint's `rpcName`) carrying the whole request message, on one HTTP/2 connection
/// that is opened on the first call and again on the next call after it dies or goes away.
///
/// Answers come back as the WebSocket transport's do, so the same generated code reads
/// them: OK is a 200 with the message (protobuf, whatever the endpoint's own encoding);
/// a status the endpoint declares (`EndpointDescriptor.errorStatusByGRPCCode`, or the exact
/// status a Switchboard server sends along) becomes its typed error; any other status is
/// `TransportError.grpcStatus`.
public final class GRPCClientTransport<Auth: AuthMode>: DeadlineEnforcingTransport, @unchecked Sendable {
    /// The server's host.
    public let host: String
    /// The server's port.
    public let port: Int
    /// How it connects and what it accepts.
    public let options: GRPCClientOptions

    private let head: GRPCRequestHead
    private let lock = AdaptiveLock()
    private var current: GRPCClientConnection?
    private var connecting: Task<Result<GRPCClientConnection, TransportError>, Never>?
    private var opened = 0
    /// Bumped by `close()`: a connect that started before it must not become `current`.
    private var generation = 0
    /// Connects that failed in a row, and when the next may start.
    private let backoff: GRPCConnectBackoff
    /// Shared by this transport's connections: a server's `too_many_pings` slows them all.
    private let keepaliveBackoff = HTTP2KeepaliveBackoff()

    /// How many connections this transport has opened so far.
    package var connectionsOpened: Int { lock.withLock { opened } }
    /// Streams open or waiting to open on the current connection (for tests).
    package var streamsInUse: Int { lock.withLock { current }?.driver.state.activeStreams ?? 0 }
    /// Why `options.metadata` cannot be sent, found once: every call fails with it.
    let metadataProblem: TransportError?

    /// A transport to `host`:`port`; nothing connects until the first call.
    public init(host: String, port: Int, options: GRPCClientOptions = .init()) {
        self.host = host
        self.port = port
        self.options = options
        backoff = GRPCConnectBackoff(policy: options.connectBackoff)
        head = GRPCRequestHead(host: host, port: port, options: options)
        do throws(TransportError) {
            try GRPCMetadata.checkSendable(options.metadata)
            metadataProblem = nil
        } catch {
            metadataProblem = error
        }
    }

    /// The deadline of calls that set none.
    public var defaultRequestTimeout: Duration { options.defaultRequestTimeout }

    /// Sends one unary call and waits for its answer, its deadline or its cancellation.
    public func send(_ request: RPCRequest) async throws(TransportError) -> RPCResponse {
        // A retried call's earlier attempt left its metadata here: this attempt's replaces it.
        request.responseCapture?.reset()
        if let metadataProblem { throw metadataProblem }
        // A list every generated call shares was checked once, its metadata made once.
        let sharedMetadata = GRPCSharedHeaderLists.requestMetadata(of: request.headers)
        if sharedMetadata == nil, !request.headers.fields.isEmpty { try GRPCMetadata.checkSendable(request.headers) }
        // JSON only when asked for, and only from a generated message (the dynamic codec's
        // requests arrive as protobuf bytes).
        let json = options.usesJSONForJSONEndpoints && request.endpoint.encoding == .json && request.message != nil
        let framed: [UInt8]
        if json, let typed = request.message {
            let message: [UInt8]
            do throws(JSONEncodingError) {
                message = try typed.jsonUTF8Bytes()
            } catch {
                throw .invalidRequest("\(request.endpoint.rpcName)'s request cannot be written as JSON: \(error)")
            }
            try checkSendSize(message.count)
            framed = GRPCMessageFramer.frame(message)
        } else if let typed = request.message {
            // Encoded behind its prefix: the message is not copied into a framed buffer.
            let size = typed.serializedSize()
            try checkSendSize(size)
            framed = GRPCMessageFramer.frame(typed, size: size)
        } else {
            let message = request.messageBytes.map { Array($0) } ?? []
            try checkSendSize(message.count)
            framed = GRPCMessageFramer.frame(message)
        }
        // A stream the server never processed (GOAWAY, REFUSED_STREAM) is retried once, on a
        // new connection if this one is going away, whatever the method: it cannot have had
        // an effect.
        for attempt in 0..<2 {
            if Task.isCancelled { throw .cancelled }
            if let deadline = request.deadline, deadline <= .now { throw .timeout }
            // The usual case, the open connection, without an async call's frame.
            let picked = if let ready = usableConnection { ready } else { try await connection(deadline: request.deadline) }
            let outcome = await GRPCUnaryCall(connection: picked, request: request, framedMessage: framed, options: options, head: head,
                                                   sharedMetadata: sharedMetadata, json: json).run()
            switch outcome {
            case let .finished(response):
                return try GRPCResponseMapping.response(for: response, endpoint: request.endpoint, sentJSON: json, capture: request.responseCapture)
            case .notProcessed where attempt == 0:
                continue
            case let .notProcessed(reason):
                throw .disconnected(reason: reason)
            case let .failed(error):
                throw error
            }
        }
        throw .disconnected(reason: "the server did not process the call")
    }

    private func checkSendSize(_ size: Int) throws(TransportError) {
        guard size <= options.maximumSendMessageSize else {
            throw .invalidRequest("a request message of \(size) bytes exceeds the maximum of \(options.maximumSendMessageSize)")
        }
    }

    /// A transport let go without ``close()`` closes its connection too (no call is on it:
    /// each holds the transport while it runs); the socket otherwise stayed open until the
    /// server closed it (found by review).
    deinit {
        connecting?.cancel()
        current?.close()
    }

    /// Closes the connection gracefully; later calls open a new one. A connect under way is
    /// closed as it completes, so nothing opened before this call outlives it.
    public func close() {
        let connection = lock.withLock {
            generation += 1
            defer { current = nil }
            return current
        }
        connection?.close()
    }

    private var authority: String { head.authority }

    /// A usable connection, or the connect attempt to wait for.
    private enum ConnectionPick {
        case ready(GRPCClientConnection)
        case failed(TransportError)
        case attempt(Task<Result<GRPCClientConnection, TransportError>, Never>)
    }

    /// The open connection, or a new one: concurrent callers share one attempt, and each
    /// waits for it no longer than its own deadline.
    private func connection(deadline: ContinuousClock.Instant?) async throws(TransportError) -> GRPCClientConnection {
        let pick: ConnectionPick = lock.withLock {
            // Checked again under the lock: a connect that finished since the caller looked
            // is used, not raced by a second one that would orphan it.
            if let current, current.driver.isAvailable { return .ready(current) }
            if let connecting { return .attempt(connecting) }
            // Backing off after failed connects: fail at once with the last one's error.
            if let refusal = backoff.refusal() { return .failed(refusal) }
            let started = generation
            let attempt = Task { () -> Result<GRPCClientConnection, TransportError> in
                let result = await self.connect()
                let (kept, retired): (Result<GRPCClientConnection, TransportError>, GRPCClientConnection?) = self.lock.withLock {
                    self.connecting = nil
                    guard case let .success(connection) = result else {
                        if case let .failure(error) = result { self.backoff.failed(error) }
                        return (result, nil)
                    }
                    // Not a success yet: the server's SETTINGS make it one (`GRPCConnectBackoff`).
                    // Closed while connecting: this connection is nobody's.
                    guard self.generation == started else { return (.failure(.disconnected(reason: DisconnectReason(.closedLocally, "the transport was closed"))), connection) }
                    defer { self.current = connection }
                    return (result, self.current)
                }
                // The connection this one replaces (going away, or dead) ends: calls still on
                // it finish, and its socket does not stay open for ever.
                retired?.retire()
                return kept
            }
            connecting = attempt
            return .attempt(attempt)
        }
        let task: Task<Result<GRPCClientConnection, TransportError>, Never>
        switch pick {
        case let .ready(connection): return connection
        case let .failed(error): throw error
        case let .attempt(attempt): task = attempt
        }
        // The attempt is shared by every caller waiting for it, so a caller whose deadline
        // passes or who is cancelled leaves at once and the attempt goes on for the others.
        // (A task group would wait for the attempt before it returned.)
        let first = FirstValue<Result<GRPCClientConnection, TransportError>>()
        Task { first.offer(await task.value) }
        let timer = deadline.map { deadline in
            Task {
                guard (try? await Task.sleep(until: deadline)) != nil else { return }
                first.offer(.failure(.timeout))
            }
        }
        let result = await withTaskCancellationHandler {
            await first.value
        } onCancel: {
            first.offer(.failure(.cancelled))
        }
        timer?.cancel()
        if Task.isCancelled { throw .cancelled }
        return try result.get()
    }

    /// Opens the connection now, as the first call would (DNS, TCP and TLS within
    /// `connectTimeout`), so a server that cannot be reached is found before any call; with
    /// a usable connection open already, returns at once. Calls reuse it.
    public func preconnect() async throws(TransportError) {
        _ = try await openConnection(deadline: .now.advanced(by: options.connectTimeout))
    }

    /// The connection in use, or a new one.
    func openConnection(deadline: ContinuousClock.Instant?) async throws(TransportError) -> GRPCClientConnection {
        if let ready = usableConnection { return ready }
        return try await connection(deadline: deadline)
    }

    /// The headers of a call to `rpcName`.
    func requestHeaders(rpcName: String, deadline: ContinuousClock.Instant?, metadata: RPCHeaders) -> [HPACKHeader] {
        head.headers(path: "/" + rpcName, deadline: deadline, metadata: metadata)
    }

    /// The connection calls use now, if it still takes new streams.
    private var usableConnection: GRPCClientConnection? {
        // Read outside the transport's lock: callers do not queue behind each other for it.
        guard let current = lock.withLock({ current }), current.driver.isAvailable else { return nil }
        return current
    }

    /// The TLS options, with resumption kept to transports of the same kind and credentials
    /// (``TLSOptions/sessionScope``): an unauthenticated channel never resumes an account's.
    private var sessionTLS: TLSOptions? {
        // The credential's hash, not the credential: the scope is part of a process-wide key.
        var credential = Hasher()
        credential.combine(options.metadata["authorization"] ?? "")
        return options.tls?.scoped("grpc \(Auth.self) \(credential.finalize())")
    }

    private func connect() async -> Result<GRPCClientConnection, TransportError> {
        let place = authority
        let deadline = ContinuousClock.now.advanced(by: options.connectTimeout)
        let opened: ChannelOpener.Opened
        do throws(NetworkError) {
            opened = try await ChannelOpener.open(host: host, port: port, tls: sessionTLS, applicationProtocols: ["h2"],
                                                  loop: options.eventLoops.next(), deadline: deadline)
        } catch {
            return .failure(.disconnected(reason: "connecting to \(place): \(error)"))
        }
        // RFC 9113 §3.2: over TLS, HTTP/2 only where ALPN agreed on it; a server that chose
        // nothing (an HTTP/1.1 proxy, say) must not be sent the preface.
        if options.tls != nil, opened.channel.negotiatedProtocol != "h2" {
            let agreed = opened.channel.negotiatedProtocol.map { "ALPN chose \($0)" } ?? "no ALPN protocol agreed"
            opened.channel.close(reason: nil)
            return .failure(.disconnected(reason: "\(place) does not speak HTTP/2 over TLS (\(agreed))"))
        }
        lock.withLock { self.opened += 1 }
        let driver = HTTP2ChannelDriver(channel: opened.channel, role: .client, options: options.http2, keepaliveBackoff: keepaliveBackoff)
        let connection = GRPCClientConnection(driver: driver)
        backoff.watch(connection, place: place)
        driver.start(takingEarlyBytes: opened.takeEarlyBytes)
        return .success(connection)
    }
}
