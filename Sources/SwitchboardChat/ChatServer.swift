import Foundation
import SwitchboardIO
import SwitchboardRuntime
import SwitchboardWebSocket

/// A mock chat server on our WebSocket server: it checks credentials at the upgrade,
/// routes enveloped requests to generated handlers by verb and path, and can push
/// requests to connected clients and await their acknowledgement. It reads envelopes as
/// Signal's server does: a request without verb or path closes the connection (1007), and a
/// header line whose value holds a colon is dropped.
///
/// Handlers run as tasks on their connection's reader thread (its event loop), so a request
/// and its answer wake no other thread. A handler may await anything, including a push on
/// the same connection, but must not block the thread (a semaphore, synchronous I/O, long
/// computation): while it does, that connection reads nothing.
///
/// ``shutdown(timeout:)`` stops it gracefully (requests in handlers answer, clients are told
/// 1001, going away); ``stop()`` drops everything at once.
public final class ChatServer: @unchecked Sendable {
    /// What the authenticator decides for an upgrade's `Authorization` header.
    public enum AuthDecision: Sendable {
        /// Credentials accepted: an authenticated connection.
        case account
        /// No credentials: an unauthenticated connection.
        case anonymous
        /// Refuse the upgrade (403 for bad credentials, 499 for an expired app, 429 with
        /// `Retry-After`...).
        case reject(status: Int, reason: String, headers: [HTTPHeaderField] = [])
    }

    private let server: WebSocketServer
    private let registry = Registry()
    /// Requests in handlers, so a graceful shutdown can wait for them.
    private let drain = RequestDrain()
    /// Bytes that requests in handlers hold once decoded, across all clients.
    private let requestBytes: ByteBudget

    /// Clients by arrival, and tasks waiting for one to connect. A client leaves when its
    /// connection ends; only the newest few that left stay findable by index, so a server
    /// that runs for days holds what is connected now, not everyone who ever was.
    final class Registry: @unchecked Sendable {
        /// How many ended clients `client(at:)` can still return.
        static let endedClientsKept = 64
        private let lock = AdaptiveLock()
        private var arrivals = 0
        private var live: [Int: Client] = [:]
        /// Live clients' indexes by their socket.
        private var liveBySocket: [ObjectIdentifier: Int] = [:]
        /// The newest ended clients, oldest first, at most `endedClientsKept`.
        private var ended: [(index: Int, client: Client)] = []
        private var waiters: [UInt64: (index: Int, continuation: CheckedContinuation<Client?, Never>)] = [:]
        private var subscribers: [UInt64: AsyncStream<Client>.Continuation] = [:]
        private var nextKey: UInt64 = 0
        private var isStopped = false

        /// Adds a client that just connected and returns its index.
        func register(_ client: Client) -> Int {
            let (index, ready) = lock.withLock { () -> (Int, [CheckedContinuation<Client?, Never>]) in
                let index = arrivals
                arrivals += 1
                live[index] = client
                liveBySocket[ObjectIdentifier(client.socket)] = index
                let due = waiters.filter { $0.value.index == index }
                for key in due.keys { waiters.removeValue(forKey: key) }
                // Under the lock, so `stop()` finishes the streams either before this client
                // is registered or after every subscriber has it: a client someone can already
                // see is never missing from an arrival stream.
                for subscriber in subscribers.values { subscriber.yield(client) }
                return (index, due.values.map(\.continuation))
            }
            for waiter in ready { waiter.resume(returning: client) }
            return index
        }

        /// Moves a client whose connection ended out of the live set.
        func unregister(_ index: Int) {
            lock.withLock {
                guard let client = live.removeValue(forKey: index) else { return }
                liveBySocket[ObjectIdentifier(client.socket)] = nil
                ended.append((index, client))
                if ended.count > Self.endedClientsKept { ended.removeFirst(ended.count - Self.endedClientsKept) }
            }
        }

        /// The client of `socket`, live or ended.
        func client(for socket: WebSocketConnection) -> Client? {
            lock.withLock {
                liveBySocket[ObjectIdentifier(socket)].flatMap { live[$0] } ?? ended.first { $0.client.socket === socket }?.client
            }
        }

        var connected: [Client] {
            lock.withLock { live.sorted { $0.key < $1.key }.map(\.value) }
        }

        /// Clients as they connect from now on, until the server stops.
        func arrivingClients() -> AsyncStream<Client> {
            let (stream, continuation) = AsyncStream.makeStream(of: Client.self)
            let key: UInt64? = lock.withLock {
                guard !isStopped else { return nil }
                defer { nextKey += 1 }
                subscribers[nextKey] = continuation
                return nextKey
            }
            guard let key else {
                continuation.finish()
                return stream
            }
            continuation.onTermination = { [weak self] _ in
                self?.lock.withLock { _ = self?.subscribers.removeValue(forKey: key) }
            }
            return stream
        }

        /// Finishes every arrival stream.
        func stop() {
            let watching = lock.withLock { () -> [AsyncStream<Client>.Continuation] in
                isStopped = true
                defer { subscribers = [:] }
                return Array(subscribers.values)
            }
            for subscriber in watching { subscriber.finish() }
        }

        func client(at index: Int, timeout: Duration) async -> Client? {
            let key: UInt64 = lock.withLock {
                defer { nextKey += 1 }
                return nextKey
            }
            var deadline: Task<Void, Never>?
            defer { deadline?.cancel() }
            return await withCheckedContinuation { continuation in
                // `.some(nil)`: that client connected, but left too long ago to be kept.
                let present: Client?? = lock.withLock {
                    if index < arrivals { return .some(live[index] ?? ended.first { $0.index == index }?.client) }
                    waiters[key] = (index, continuation)
                    return nil
                }
                if let present {
                    continuation.resume(returning: present)
                    return
                }
                // Armed only once the waiter is registered, so the timeout cannot be missed.
                deadline = Task { [self] in
                    try? await Task.sleep(for: timeout)
                    lock.withLock { waiters.removeValue(forKey: key) }?.continuation.resume(returning: nil)
                }
            }
        }
    }

    /// The port the server listens on.
    public var port: Int { server.port }

    /// `ws://127.0.0.1:<port>/v1/websocket/`
    public var url: URL { URL(string: "ws://127.0.0.1:\(port)/v1/websocket/")! }

    /// Starts serving `routes` on `port` of the loopback interface (0, the default, picks a
    /// free one), holding at most what `limits` allows (by default 1,024 connections, each
    /// closed after 120 s without a frame from its client). Every request a route serves
    /// passes through `interceptors` first, outermost first. A client may have
    /// `maximumRequestsInFlight` requests in handlers at once, and all clients together at most
    /// `maximumRequestBytesInFlight` bytes of them, each request counting what it holds once
    /// decoded: its envelope's size, plus about 100 bytes for each header line and query
    /// parameter, plus 1 KiB for its task and bookkeeping (so a flood of tiny header lines
    /// cannot hold many times the budget); past either, a request is answered 503 with
    /// `Retry-After: 1`.
    /// `connectionOptions` sets each connection's message size, send queue and close timeout
    /// (by default 512 KiB messages, as `WebSocketConnectionCore.Configuration`); the server
    /// always takes messages on the connection's loop, and its timeouts and handshake limits
    /// come from `limits`.
    public init(
        routes: [RPCRoute], port: Int = 0, limits: WebSocketServer.Limits = .init(),
        connectionOptions: WebSocketConnection.Options = .init(),
        upgradeHeaders: @escaping @Sendable () -> [HTTPHeaderField] = { [] },
        authenticate: @escaping @Sendable (_ authorization: String?) -> AuthDecision = { $0 == nil ? .anonymous : .account },
        interceptors: [any ServerInterceptor] = [],
        maximumRequestsInFlight: Int = ChatServer.defaultMaximumRequestsInFlight,
        maximumRequestBytesInFlight: Int = ChatServer.defaultMaximumRequestBytesInFlight
    ) throws(WebSocketError) {
        let router = RPCRouter(routes: routes, interceptors: interceptors)
        let budget = ByteBudget(limit: maximumRequestBytesInFlight)
        requestBytes = budget
        let registry = self.registry
        let drain = self.drain
        var options = connectionOptions
        options.deliversMessagesDirectly = true
        server = try WebSocketServer(
            port: port, options: options, limits: limits,
            upgrade: { request in
                // Shutting down: no new client, while the listener stays open for the
                // requests still being answered.
                if drain.isClosed {
                    return .reject(status: 503, reason: "Service Unavailable", headers: [HTTPHeaderField(name: "Retry-After", value: "1")])
                }
                let authorization = request.headers.value(named: "Authorization")
                let auth: AuthRequirement
                switch authenticate(authorization) {
                case let .reject(status, reason, headers): return .reject(status: status, reason: reason, headers: headers)
                case .account: auth = .account
                case .anonymous: auth = .none
                }
                // The decision travels with this connection, not by its (client-chosen) key.
                return .accept(headers: upgradeHeaders(), context: auth)
            },
            connected: { socket in
                // In upgrade order, and out again the moment the socket ends, so the registry's
                // order is the clients', whatever order their tasks run in.
                let client = Client(socket: socket, auth: socket.upgradeContext as? AuthRequirement ?? .none,
                                    maximumRequestsInFlight: maximumRequestsInFlight, sharedBudget: budget)
                let index = registry.register(client)
                socket.whenClosed { _ in registry.unregister(index) }
                // Upgraded just as a shutdown began (which refuses pushes to the clients it
                // found): registered before this check, so one of the two refuses them.
                if drain.isClosed { client.refusePushes(.serverShuttingDown) }
            },
            handler: { socket in
                guard let client = registry.client(for: socket) else { return }
                await ChatServer.serve(client, router: router, drain: drain)
            })
    }

    /// The clients connected now, oldest first.
    public var connectedClients: [Client] { registry.connected }

    /// Clients as they connect, from the call on; finishes when the server stops. A server
    /// that serves each client in turn (pushing its queue, say) reads this rather than
    /// counting indexes, which would miss a client that came and went in between.
    public func arrivingClients() -> AsyncStream<Client> { registry.arrivingClients() }

    /// The `index`th client to connect (0 is the first), waiting up to `timeout` for it;
    /// `nil` if it has not connected by then, or if it disconnected and more than 64 others
    /// have disconnected since (the server keeps only the newest ended clients).
    public func client(at index: Int, timeout: Duration = .seconds(10)) async -> Client? {
        await registry.client(at: index, timeout: timeout)
    }

    static func serve(_ client: Client, router: RPCRouter, drain: RequestDrain) async {
        // Frames are routed on the socket's reader thread; only handlers run as tasks.
        let offload = LargeMessageOffload(socket: client.socket) { message in route(message, from: client, router: router, drain: drain) }
        client.socket.deliverReceivedMessages { message in offload.receive(message) }
        for await _ in client.socket.messages {}
        await offload.waitUntilIdle()
        // The client closed: answer its close now rather than after the grace period.
        _ = await client.socket.close()
        client.failAll()
        // Its handlers can answer nobody: stopped, so what they hold (the server's byte
        // budget, the client) goes back now, not when each would have finished.
        if client.hasRequestsInFlight { drain.cancel(ownedBy: ObjectIdentifier(client)) }
    }

    /// Closes the connection as Signal's server does for an envelope it cannot take: 1007
    /// "Badly formatted" (a client that sends one learns so here, not in production).
    /// Once per client: the frames that came in the same read as the first bad one are still
    /// routed, and each close began its own timer and waiter (found by review: a read of
    /// 10,000 empty frames made 10,000 tasks). Frames after it are not served.
    private static func refuseBadlyFormatted(_ client: Client) {
        guard client.refuse() else { return }
        Task { _ = await client.socket.close(code: .invalidPayload, reason: "Badly formatted") }
    }

    private static func route(_ message: ReceivedWebSocketMessage, from client: Client, router: RPCRouter, drain: RequestDrain) {
        // Text frames are ignored, as Signal's server logs and ignores them.
        guard !message.isText, !client.isRefused else { return }
        guard let frame = try? IncomingEnvelope(serializedBytes: message.payload) else {
            refuseBadlyFormatted(client)
            return
        }
        switch frame.type {
        case .request?:
            // A request needs its verb and path (Signal's `ProtobufWebSocketMessage` rule).
            guard let request = frame.request, let verb = request.verb, let path = request.path else {
                refuseBadlyFormatted(client)
                return
            }
            // Without an id it cannot be answered: served by nobody.
            guard let id = request.id else { return }
            if verb == "GET" && path == ChatServer.keepalivePath {
                // Signal's server answers keepalives itself, whatever the routes.
                client.countKeepalive()
                try? client.socket.sendWithoutWaiting(OutgoingEnvelope.response(to: id, RPCResponse(status: 200, message: "OK")))
                return
            }
            // A client that pipelines requests to slow handlers gets 503 past its share,
            // instead of a task and its memory per request without end.
            // A request counts what it holds while its handler runs, not its envelope's size:
            // each header line and query parameter decodes to an entry of two strings (3 bytes
            // on the wire can hold about 100), and its task and bookkeeping are not free.
            let cost = DecodedRequestSize.bytes(envelopeBytes: message.payload.count, headerCount: request.headers.fields.count,
                                                queryParameterCount: DecodedRequestSize.queryParameterCount(inPath: path))
            // A server shutting down takes no new request either, answered the same way.
            guard let token = drain.enter(owner: ObjectIdentifier(client)) else {
                try? client.socket.sendWithoutWaiting(OutgoingEnvelope.response(to: id, RPCResponse(
                    status: 503, headers: ["Retry-After": "1"], message: "Service Unavailable")))
                return
            }
            guard client.beginRequest(cost: cost) else {
                drain.leave(token)
                try? client.socket.sendWithoutWaiting(OutgoingEnvelope.response(to: id, RPCResponse(
                    status: 503, headers: ["Retry-After": "1"], message: "Service Unavailable")))
                return
            }
            // Signal's server splits each line at every colon and keeps only a line of exactly
            // two parts, so a value with a colon (a time, a URL) never reaches its handlers:
            // neither does it here, so tests meet what production does (found by review).
            var headers = request.headers
            if headers.fields.contains(where: { $0.value.utf8.contains(UInt8(ascii: ":")) }) {
                headers = RPCHeaders(headers.fields.filter { !$0.value.utf8.contains(UInt8(ascii: ":")) })
            }
            let wire = ServerRequest(verb: verb, path: path, headers: headers, body: request.body)
            // Requests are served concurrently; responses go back by id in any order. Handlers
            // start right here, on the reader thread, and resume there after any suspension,
            // so a request and its answer wake no other thread.
            let task = client.socket.eventLoop.startTaskHere {
                let response = await router.handle(wire, auth: client.auth)
                client.endRequest(cost: cost)
                try? client.socket.sendWithoutWaiting(OutgoingEnvelope.response(to: id, response))
                // After the answer is queued: a shutdown's close frame goes out behind it.
                drain.leave(token)
            }
            drain.track(token, task)
        case .response?:
            // A response needs its id, status and message.
            guard let response = frame.response, let id = response.id, response.status != nil, response.message != nil else {
                refuseBadlyFormatted(client)
                return
            }
            // No status, or no HTTP one, is no answer: the push stays unacknowledged.
            let answered: RPCResponse? = response.status.flatMap(IncomingEnvelope.httpStatus).map {
                RPCResponse(status: $0, headers: response.headers, body: response.body ?? Data(), message: response.message)
            }
            if let answered {
                client.answer(id, .success(answered))
            } else {
                client.answer(id, .failure(.invalidResponse))
            }
        default:
            // No type, or one this server does not know.
            refuseBadlyFormatted(client)
        }
    }

    /// Requests one client may have in handlers at once by default (Signal's clients keep a
    /// handful); past it a request is answered 503 with `Retry-After: 1`.
    public static let defaultMaximumRequestsInFlight = 256

    /// Bytes of requests all clients together may have in handlers at once by default: 64 MiB,
    /// 127 requests of the largest message size, or some 50,000 small ones (each request
    /// counting what it holds once decoded, as `maximumRequestBytesInFlight` says).
    public static let defaultMaximumRequestBytesInFlight = 64 * 1024 * 1024

    /// Bytes of requests in handlers now, across all clients, as counted against
    /// `maximumRequestBytesInFlight`: what the decoded requests hold, not their envelopes' size.
    public var requestBytesInFlight: Int { requestBytes.inUse }

    /// The keepalive path the server answers on its own.
    public static let keepalivePath = "/v1/keepalive"

    /// Stops the server and drops every connection at once, without a close handshake;
    /// pushes still waiting fail with ``PushError/serverShuttingDown``, handlers still running
    /// are cancelled, and a ``shutdown(timeout:)`` under way stops waiting for them.
    /// ``shutdown(timeout:)`` stops gracefully.
    public func stop() {
        drain.close()
        server.stop()
        registry.stop()
        for client in connectedClients { client.failAll(.serverShuttingDown) }
        drain.cancelAll()
        drain.abortWaiters()
    }

    /// Stops gracefully and returns once the server is done, about `timeout` after the call
    /// at most (plus the moment aborted sockets take to be released):
    ///
    /// 1. It takes nothing new: ``arrivingClients()`` streams finish, an upgrade is refused
    ///    with 503 and `Retry-After: 1` (a chat client sees `retryLater`), a request is
    ///    answered 503 with `Retry-After: 1`, and a push fails at once with
    ///    ``PushError/serverShuttingDown``.
    /// 2. Requests already in handlers answer, for as long as `timeout` allows.
    /// 3. Then every push still waiting for its acknowledgement fails with
    ///    ``PushError/serverShuttingDown`` (a ``PushQueue`` keeps it for redelivery), and
    ///    the server closes its listener and every connection with 1001 (going away),
    ///    waiting for each client's close for what is left of `timeout`.
    /// 4. At the timeout, whatever is still open (a peer that never answers the close, a
    ///    connection still upgrading) is aborted and handlers still running are cancelled.
    ///
    /// Handlers that take the whole timeout leave the close handshake no time: their
    /// connections are aborted. The server's event loops are the shared ones, which stay.
    public func shutdown(timeout: Duration = .seconds(10)) async {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        drain.close()
        registry.stop()
        for client in connectedClients { client.refusePushes(.serverShuttingDown) }
        _ = await drain.waitUntilIdle(until: deadline)
        for client in connectedClients { client.failAll(.serverShuttingDown) }
        await server.shutdown(timeout: max(.zero, ContinuousClock.now.duration(to: deadline)))
        // Handlers that outlasted the timeout: their connections are gone, so is their answer.
        drain.cancelAll()
    }
}
