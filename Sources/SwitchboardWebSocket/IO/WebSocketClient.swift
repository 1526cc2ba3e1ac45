import Foundation
import SwitchboardIO

/// Opens client connections: DNS, TCP, the opening handshake, then a ``WebSocketConnection``.
public enum WebSocketClient {
    /// Client options.
    public struct Options: Sendable {
        /// Extra upgrade headers: `Authorization`, `User-Agent` and so on.
        public var headers: [HTTPHeaderField]
        /// The subprotocols to offer, most preferred first.
        public var subprotocols: [String]
        /// How long DNS, TCP, TLS and the upgrade may take together.
        public var connectTimeout: Duration
        /// How the connection behaves once open.
        public var connection: WebSocketConnection.Options
        /// How `wss://` verifies the server.
        public var tls: TLSOptions
        /// Which event loops serve the connection: the shared ones by default; a dedicated
        /// loop keeps one busy connection's reads off the threads others share.
        public var eventLoops: EventLoopGroupProvider
        /// The largest message accepted, as ``WebSocketConnection/Options/maximumMessageSize``.
        public var maximumMessageSize: Int {
            get { connection.maximumMessageSize }
            set { connection.maximumMessageSize = newValue }
        }

        /// Creates options; connecting may take 10 seconds by default.
        public init(headers: [HTTPHeaderField] = [], subprotocols: [String] = [], connectTimeout: Duration = .seconds(10),
                    connection: WebSocketConnection.Options = .init(), tls: TLSOptions = .init(), eventLoops: EventLoopGroupProvider = .shared) {
            self.eventLoops = eventLoops
            self.headers = headers
            self.subprotocols = subprotocols
            self.connectTimeout = connectTimeout
            self.connection = connection
            self.tls = tls
        }
    }

    /// Connects to a `ws://` or `wss://` URL within `connectTimeout` (DNS, TCP, TLS and the upgrade).
    ///
    /// Cancelling the calling task before the socket is open stops the connect before it
    /// sends the upgrade request; cancelling it later, during TLS or the upgrade, ends the
    /// connect at once with `io` "connect cancelled", and the socket is closed.
    public static func connect(to url: URL, options: Options = .init()) async throws(WebSocketError) -> WebSocketConnection {
        let endpoint = try WebSocketEndpoint(url)
        let request = try upgradeRequest(for: endpoint, options: options)
        let deadline = ContinuousClock.now.advanced(by: options.connectTimeout)
        let (loop, ownsLoop) = options.eventLoops.connectionLoop()
        do throws(WebSocketError) {
            let channel = try await openChannel(endpoint, options: options, loop: loop, deadline: deadline)
            // An upgrade would tell a chat server this is the device's newest connection.
            guard !Task.isCancelled else {
                channel.close(reason: nil)
                throw .io("connect cancelled")
            }
            let connection = try await handshake(channel, parked: nil, request: request, deadline: deadline, options: options, path: endpoint.requestPath)
            // A loop of its own ends with the connection, once its socket is released.
            if ownsLoop { connection.whenClosed { _ in loop.execute { Task { await loop.shutdown() } } } }
            return connection
        } catch {
            if ownsLoop { await loop.shutdown() }
            throw error
        }
    }

    /// Does DNS, TCP and TLS for `url` within `connectTimeout`, but not the upgrade; finish
    /// with ``upgrade(_:url:options:)``, or close the transport. Used to preconnect.
    public static func openTransport(to url: URL, options: Options = .init()) async throws(WebSocketError) -> WebSocketTransport {
        let endpoint = try WebSocketEndpoint(url)
        let deadline = ContinuousClock.now.advanced(by: options.connectTimeout)
        // A preconnected socket waits on a shared loop: a dedicated one would have no owner
        // until the upgrade.
        let loop: EventLoop
        if case let .group(group) = options.eventLoops { loop = group.next() } else { loop = EventLoopGroup.shared.next() }
        let channel = try await openChannel(endpoint, options: options, loop: loop, deadline: deadline)
        let parked = ParkedReader(limit: options.connection.handshakeHeadLimits.maximumSize, peerClosed: "the server closed the connection before the upgrade")
        parked.hold(channel)
        return WebSocketTransport(endpoint: endpoint, channel: channel, parked: parked)
    }

    /// Runs the opening handshake for `url` over an open transport, within `connectTimeout`.
    /// The transport must have been opened for the same scheme, host and port; on failure
    /// (cancelling the task included, which ends the wait at once) it is closed.
    public static func upgrade(_ transport: WebSocketTransport, url: URL, options: Options = .init()) async throws(WebSocketError) -> WebSocketConnection {
        let endpoint: WebSocketEndpoint
        do throws(WebSocketError) {
            endpoint = try WebSocketEndpoint(url)
            guard endpoint == transport.endpoint else {
                throw .io("transport was opened for \(transport.endpoint), not \(endpoint)")
            }
        } catch {
            transport.close()
            throw error
        }
        let request: WebSocketHandshake.ClientRequest
        do throws(WebSocketError) {
            request = try upgradeRequest(for: endpoint, options: options)
        } catch {
            transport.close()
            throw error
        }
        guard transport.claim() else { throw .io("transport already closed or upgraded") }
        let deadline = ContinuousClock.now.advanced(by: options.connectTimeout)
        return try await handshake(transport.channel, parked: transport.parked, request: request, deadline: deadline, options: options,
                                   path: endpoint.requestPath)
    }

    /// Checked before any socket opens, so a bad header costs no connection.
    private static func upgradeRequest(for endpoint: WebSocketEndpoint, options: Options) throws(WebSocketError) -> WebSocketHandshake.ClientRequest {
        let request = WebSocketHandshake.ClientRequest(host: endpoint.host, port: endpoint.port, path: endpoint.requestPath, isSecure: endpoint.isSecure,
                                                       headers: options.headers, subprotocols: options.subprotocols)
        try request.checkSendable(limits: options.connection.handshakeHeadLimits)
        return request
    }

    /// DNS and TCP, then TLS for `wss://`, on an event loop; the socket is closed if TLS fails.
    private static func openChannel(_ endpoint: WebSocketEndpoint, options: Options, loop: EventLoop,
                                    deadline: ContinuousClock.Instant) async throws(WebSocketError) -> any ByteChannel {
        do throws(NetworkError) {
            return try await ChannelOpener.open(host: endpoint.host, port: endpoint.port, tls: endpoint.isSecure ? options.tls : nil,
                                                applicationProtocols: ["http/1.1"], loop: loop, deadline: deadline).channel
        } catch {
            throw naming(endpoint, in: WebSocketError(error))
        }
    }

    /// `error` with the host and port it concerns, so "connection refused" or a TLS failure
    /// says where.
    static func naming(_ endpoint: WebSocketEndpoint, in error: WebSocketError) -> WebSocketError {
        let place = endpoint.host.contains(":") ? "[\(endpoint.host)]:\(endpoint.port)" : "\(endpoint.host):\(endpoint.port)"
        switch error {
        case let .io(reason): return .io("\(place): \(reason)")
        case let .timeout(what): return .timeout("\(what) to \(place)")
        default: return error
        }
    }

    /// Sends the upgrade request and reads the answer on the channel's loop, before `deadline`.
    static func handshake(_ channel: any ByteChannel, parked: ParkedReader?, request: WebSocketHandshake.ClientRequest, deadline: ContinuousClock.Instant,
                          options: Options, path: String) async throws(WebSocketError) -> WebSocketConnection {
        let reader = ClientHandshake(request: request, channel: channel, headLimits: options.connection.handshakeHeadLimits)
        let outcome = await reader.run(until: deadline, after: parked)
        switch outcome {
        case let .failure(error):
            channel.close(reason: nil)
            throw error
        case let .success((head, subprotocol)):
            return WebSocketConnection(channel: channel, role: .client, options: options.connection, initialBytes: [],
                                       laterInitialBytes: { reader.takeRemainder() },
                                       handshakeHeaders: head.headers, path: path, subprotocol: subprotocol)
        }
    }
}

/// Reads the server's answer to an upgrade request, on the channel's loop: the head, and
/// for a refusal a bounded body, so the typed error can carry it (Signal's 499 and 429).
final class ClientHandshake: ChannelDelegate, @unchecked Sendable {
    private let request: WebSocketHandshake.ClientRequest
    private let channel: any ByteChannel
    private let lock = AdaptiveLock()
    private var received: [UInt8] = []
    /// After a 101: what came behind the head, for the connection.
    private var remainder: [UInt8] = []
    /// A 101 arrived: what is read after it belongs to the WebSocket.
    private var upgraded = false
    private var head: HTTPHead?
    /// Interim (1xx) responses skipped before the final one.
    private var interimResponses = 0
    private var bodyLength = 0
    private let result = FirstResult<(HTTPHead, String?)>()
    private let headLimits: HTTPHeadLimits

    init(request: WebSocketHandshake.ClientRequest, channel: any ByteChannel, headLimits: HTTPHeadLimits) {
        self.request = request
        self.channel = channel
        self.headLimits = headLimits
    }

    /// Sends the request and waits for the answer, at most until `deadline`, or until the
    /// task is cancelled.
    func run(until deadline: ContinuousClock.Instant, after parked: ParkedReader?) async -> Result<(HTTPHead, String?), WebSocketError> {
        let loop = channel.loop
        let timer = loop.schedule(at: deadline) { [self] in
            // A refusal whose body never came in full is still a refusal (its status and
            // Retry-After matter), with what did come; only a missing head is a timeout.
            if head != nil { refuse() } else { result.offer(.failure(.timeout("WebSocket handshake"))) }
        }
        loop.executeHere { [self] in
            if let parked {
                if let early = parked.endReason { result.offer(.failure(.invalidUpgradeResponse(early))); return }
                let bytes = parked.take()
                if !bytes.isEmpty { bytes.withUnsafeBytes { channelRead($0) } }
            }
            channel.activate(delegate: self, handshakeDone: nil)
            channel.setReading(true)
            if case let .failed(reason) = channel.write(request.bytes, completion: nil) {
                result.offer(.failure(.io(reason)))
            }
        }
        // Cancelling the task ends the wait as the deadline does; the caller closes the channel.
        let outcome = await withTaskCancellationHandler {
            await result.value
        } onCancel: { [result] in
            result.offer(.failure(.io("connect cancelled")))
        }
        timer.cancel()
        return outcome
    }

    /// What the server sent behind its 101, taken once by the connection.
    func takeRemainder() -> [UInt8] {
        lock.withLock {
            defer { remainder = [] }
            return remainder
        }
    }

    func channelRead(_ bytes: UnsafeRawBufferPointer) {
        if result.isDone {
            // Behind a 101: the WebSocket's first bytes, until the connection takes over. After
            // a failure nothing more is wanted: reading stops rather than buffer it.
            if lock.withLock({ upgraded }) { lock.withLock { remainder.append(contentsOf: bytes) } } else { channel.setReading(false) }
            return
        }
        var searched = max(0, received.count - 3)
        received.append(contentsOf: bytes)
        while head == nil {
            let parsed: (head: HTTPHead, consumed: Int)?
            do throws(WebSocketError) {
                parsed = try HTTPHead.parse(received, searchingFrom: searched, limits: headLimits, isResponse: true)
            } catch {
                channel.setReading(false)
                result.offer(.failure(error))
                return
            }
            guard let (head, consumed) = parsed else { return }
            received.removeFirst(consumed)
            searched = 0
            let status = head.startLine.count > 1 ? HTTPHead.statusCode(head.startLine[1]) ?? 0 : 0
            // An interim response (100 Continue, 103 Early Hints from a CDN) comes before the
            // final one (RFC 9110 §15.2): skipped, a few at most.
            if (100...199).contains(status), status != 101 {
                interimResponses += 1
                guard interimResponses <= 4 else {
                    channel.setReading(false)
                    result.offer(.failure(.invalidUpgradeResponse("more than 4 interim responses")))
                    return
                }
                continue
            }
            self.head = head
            if status == 101 {
                channel.setReading(false)
                lock.withLock {
                    remainder = received
                    upgraded = true
                }
                do throws(WebSocketError) {
                    let subprotocol = try request.validate(head)
                    result.offer(.success((head, subprotocol)))
                } catch {
                    result.offer(.failure(error))
                }
                return
            }
            // Clamped both ways: a hostile server may send a negative or huge length.
            bodyLength = max(0, min(Int(head.value("Content-Length") ?? "") ?? 0, 64 * 1024))
            break
        }
        if received.count >= bodyLength { refuse() }
    }

    func channelEnded(reason: String?) {
        if head != nil {
            refuse()
        } else {
            result.offer(.failure(.invalidUpgradeResponse("connection closed during the handshake")))
        }
    }

    func channelWriteFailed(_ reason: String) {
        result.offer(.failure(.io(reason)))
    }

    /// A status other than 101: the typed error, with what arrived of the body.
    private func refuse() {
        guard let head else { return }
        do throws(WebSocketError) {
            _ = try request.validate(head, body: Array(received.prefix(bodyLength)))
            result.offer(.failure(.invalidUpgradeResponse("unexpected status")))
        } catch {
            result.offer(.failure(error))
        }
    }
}

/// The first of several results offered, to one waiter.
final class FirstResult<Value: Sendable>: @unchecked Sendable {
    private let lock = AdaptiveLock()
    private var outcome: Result<Value, WebSocketError>?
    private var waiter: CheckedContinuation<Result<Value, WebSocketError>, Never>?

    var isDone: Bool { lock.withLock { outcome != nil } }

    func offer(_ result: Result<Value, WebSocketError>) {
        let waiting: CheckedContinuation<Result<Value, WebSocketError>, Never>? = lock.withLock {
            guard outcome == nil else { return nil }
            outcome = result
            defer { waiter = nil }
            return waiter
        }
        waiting?.resume(returning: result)
    }

    var value: Result<Value, WebSocketError> {
        get async {
            await withCheckedContinuation { continuation in
                let ready: Result<Value, WebSocketError>? = lock.withLock {
                    if let outcome { return outcome }
                    waiter = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        }
    }
}
