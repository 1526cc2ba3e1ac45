import Foundation
import SwitchboardIO

/// A WebSocket server on the same engine: listen, accept, upgrade, hand each connection to a handler.
public final class WebSocketServer: @unchecked Sendable {
    /// How to answer an upgrade request.
    public enum UpgradeDecision: Sendable {
        /// Accept, adding these headers (Signal sends `X-Signal-Timestamp`) and choosing a
        /// subprotocol. `context` (what the upgrade decided, such as who authenticated) travels
        /// with this connection to the handler as ``WebSocketConnection/upgradeContext``.
        case accept(headers: [HTTPHeaderField] = [], subprotocol: String? = nil, context: (any Sendable)? = nil)
        /// Refuse with an HTTP status (403 for bad credentials, 499 for an expired app...).
        case reject(status: Int, reason: String, headers: [HTTPHeaderField] = [], body: [UInt8] = [])
    }

    /// What one server holds at most, and for how long.
    public struct Limits: Sendable {
        /// The most connections served at once, handshakes included, each counted until its
        /// socket is released (a closed connection lingers up to a few seconds reading what its
        /// peer still sends). Past it, a new connection is answered `503 Service Unavailable`
        /// with `Retry-After` (over TLS on a `tls` server, after the TLS handshake), and closed.
        public var maximumConnections: Int
        /// How long a connection may take to send its upgrade request.
        public var handshakeTimeout: Duration
        /// How long an upgraded connection may send nothing at all (no message, ping or
        /// pong) before the server closes it with 1001 (going away); `nil` for never. A
        /// client that sends keepalives (Signal's every 30 s) stays.
        public var idleTimeout: Duration?
        /// How long an upgraded connection may take over one message (or control frame)
        /// once its first byte has arrived, before the server closes it with 1008 (policy
        /// violation); `nil` for no limit. Every byte resets `idleTimeout`, so without this a
        /// client trickling a message a byte at a time would hold its slot and a
        /// half-received message for ever. 30 s lets a client on a 20 KB/s link send a whole
        /// 512 KiB message (the default ``WebSocketConnectionCore/Configuration/maximumMessageSize``).
        public var messageReceiveTimeout: Duration?
        /// The most connections one client IP address may hold at once, handshakes included;
        /// past it, its new connections are answered 503 like those past `maximumConnections`,
        /// so one host cannot take every slot. Raise it for clients behind one NAT.
        public var maximumConnectionsPerAddress: Int
        /// The largest upgrade request read, in bytes and header fields; past either it is
        /// answered 431. Raise it behind a proxy or CDN that adds headers.
        public var handshakeHeadLimits: HTTPHeadLimits
        /// Connections the kernel may hold queued for `accept` (`TCPListener.defaultBacklog`,
        /// 1,024; the system caps it).
        public var listenBacklog = TCPListener.defaultBacklog

        /// Defaults: 1,024 connections, 128 per address, 10 s to upgrade, 120 s of silence,
        /// 30 s for one message, an upgrade request of 16 KiB and 100 header fields.
        public init(maximumConnections: Int = 1024, handshakeTimeout: Duration = .seconds(10), idleTimeout: Duration? = .seconds(120),
                    maximumConnectionsPerAddress: Int = 128, messageReceiveTimeout: Duration? = .seconds(30),
                    handshakeHeadLimits: HTTPHeadLimits = .init()) {
            self.handshakeHeadLimits = handshakeHeadLimits
            self.messageReceiveTimeout = messageReceiveTimeout
            self.maximumConnections = maximumConnections
            self.handshakeTimeout = handshakeTimeout
            self.idleTimeout = idleTimeout
            self.maximumConnectionsPerAddress = maximumConnectionsPerAddress
        }
    }

    /// The port the server listens on.
    public let port: Int
    /// The loops that serve the server's connections.
    public let eventLoopGroup: EventLoopGroup
    private let ownsLoops: Bool
    private let listener: TCPListener
    private var acceptor: Acceptor?
    private let connections = AdaptiveLock()
    private var open: [WebSocketConnection] = []
    /// Connections accepted and not yet ended, handshakes included.
    private var admitted = 0
    /// Connections past the limit being told so; a flood beyond this many is dropped unanswered.
    private var refusing = 0
    private static let maximumRefusing = 64
    /// Running, shutting down gracefully (connections still upgrading are closed politely
    /// when they arrive), or stopped (anything still arriving is aborted).
    private enum Phase { case running, draining, stopped }
    private var phase = Phase.running
    /// Upgrades in flight, so shutdown can wait for them and end those that outlast it.
    private var handshakes: [ObjectIdentifier: ServerHandshake] = [:]
    /// Graceful shutdowns waiting for the last admitted connection to end, by call: resumed
    /// with `true` when it has, `false` at their timeout.
    private var drainWaiters: [Int: CheckedContinuation<Bool, Never>] = [:]
    private var nextDrainWaiter = 0
    private let options: WebSocketConnection.Options
    private let limits: Limits
    private let tls: TLSServerContext?
    private let decide: @Sendable (WebSocketHandshake.ServerRequest) -> UpgradeDecision
    private let connected: (@Sendable (WebSocketConnection) -> Void)?
    private let handler: @Sendable (WebSocketConnection) async -> Void
    /// Handlers still running, by connection, until they return (their connection may have
    /// ended before), so stopping can cancel them.
    private var handlerTasks: [ObjectIdentifier: Task<Void, Never>] = [:]
    private let perAddress: PeerAddressLimit
    /// How long a closed connection's socket lingers, when a test has lengthened it.
    private let lingerOverride = LockedState<Duration?>(nil)

    /// How many connections the server holds now: handshakes, open connections, and closed
    /// ones whose sockets are not released yet.
    public var connectionCount: Int { connections.withLock { admitted } }

    /// Starts listening on `host:port` (0 picks a free port) and serving in the background,
    /// on `eventLoops` (by default the process's shared loops). Each upgraded connection goes
    /// to `connected` at once, in the order upgrades complete (on the connection's loop; it
    /// must return quickly), then to `handler` in a task of its own; when the handler returns,
    /// the connection closes. A handler may run on after its connection has ended; ``stop()``
    /// cancels every handler still running, and ``shutdown(timeout:)`` those still running
    /// when its timeout forces the end.
    public init(
        host: String = "127.0.0.1", port: Int = 0, options: WebSocketConnection.Options = .init(),
        limits: Limits = .init(),
        tls: TLSServerContext? = nil,
        eventLoops: EventLoopGroupProvider = .shared,
        upgrade: @escaping @Sendable (WebSocketHandshake.ServerRequest) -> UpgradeDecision = { _ in .accept() },
        connected: (@Sendable (WebSocketConnection) -> Void)? = nil,
        handler: @escaping @Sendable (WebSocketConnection) async -> Void
    ) throws(WebSocketError) {
        do throws(NetworkError) {
            listener = try TCPListener(host: host, port: port, backlog: limits.listenBacklog)
        } catch {
            throw WebSocketError(error)
        }
        self.port = listener.port
        var options = options
        options.idleTimeout = limits.idleTimeout
        options.messageReceiveTimeout = limits.messageReceiveTimeout
        options.handshakeHeadLimits = limits.handshakeHeadLimits
        self.options = options
        self.limits = limits
        perAddress = PeerAddressLimit(limit: limits.maximumConnectionsPerAddress)
        self.tls = tls
        decide = upgrade
        self.connected = connected
        self.handler = handler
        do throws(IOError) {
            (eventLoopGroup, ownsLoops) = try eventLoops.resolve(name: "switchboard.server")
        } catch {
            listener.close()
            throw .io("cannot start event loops: \(error)")
        }
        let acceptor = Acceptor(listener: listener, loop: eventLoopGroup.next()) { [weak self] descriptor in
            guard let self else {
                _ = SocketDescriptor.systemClose(descriptor)
                return
            }
            accepted(descriptor)
        }
        self.acceptor = acceptor
        acceptor.start()
    }

    private enum Admission { case serve, refuse, drop }

    private func admit(limit: Int) -> Admission {
        connections.withLock {
            if phase != .running { return .drop }
            if admitted < limit {
                admitted += 1
                return .serve
            }
            guard refusing < Self.maximumRefusing else { return .drop }
            refusing += 1
            return .refuse
        }
    }

    /// A new socket, on the acceptor's loop: served, refused or dropped by the limits.
    private func accepted(_ descriptor: Int32) {
        var admission = admit(limit: limits.maximumConnections)
        var address: [UInt8] = []
        if admission == .serve {
            if let taken = perAddress.admit(descriptor) {
                address = taken
            } else {
                // Its address holds its share already: refused like one past the limit.
                admission = connections.withLock {
                    admitted -= 1
                    guard refusing < Self.maximumRefusing else { return .drop }
                    refusing += 1
                    return .refuse
                }
            }
        }
        switch admission {
        case .drop:
            _ = SocketDescriptor.systemClose(descriptor)
        case .refuse:
            let loop = eventLoopGroup.next()
            let channel: SocketChannel
            // A TLS client is told in TLS: plaintext would reach it as a record error, and
            // only once the handshake it waits for timed out.
            if let tls {
                guard let session = tls.makeSession() else {
                    _ = SocketDescriptor.systemClose(descriptor)
                    connections.withLock { refusing -= 1 }
                    return
                }
                channel = SocketChannel(descriptor: descriptor, loop: loop, tls: session)
            } else {
                channel = SocketChannel(descriptor: descriptor, loop: loop)
            }
            // Counted until its descriptor goes, linger included, as served ones are.
            channel.whenReleased { [weak self] in
                self?.connections.withLock { self?.refusing -= 1 }
            }
            ServerRefusal(channel: channel, headLimits: limits.handshakeHeadLimits) {}.start(timeout: min(limits.handshakeTimeout, .seconds(2)))
        case .serve:
            let loop = eventLoopGroup.next()
            let channel: SocketChannel
            #if canImport(CSwitchboardOpenSSL)
            if let tls {
                guard let engine = try? TLSEngine(serverContext: tls.context) else {
                    _ = SocketDescriptor.systemClose(descriptor)
                    perAddress.release(address)
                    release()
                    return
                }
                channel = SocketChannel(descriptor: descriptor, loop: loop, tls: TLSSession(engine))
            } else {
                channel = SocketChannel(descriptor: descriptor, loop: loop)
            }
            #else
            channel = SocketChannel(descriptor: descriptor, loop: loop)
            #endif
            if let linger = lingerOverride.value { channel.setLingerTimeout(linger) }
            // The slots are the descriptor's: freed when it is closed, not when the connection
            // ends (a closing socket lingers for seconds, reading what its peer still sends),
            // so a peer closing connections by the hundred cannot hold descriptors nobody counts.
            channel.whenReleased { [weak self, perAddress, address] in
                perAddress.release(address)
                self?.release()
            }
            let handshake = ServerHandshake(channel: channel, options: options, decide: decide) { [weak self] handshake, connection in
                guard let self else {
                    connection?.abort()
                    return
                }
                upgradeEnded(handshake, with: connection)
            }
            connections.withLock { handshakes[ObjectIdentifier(handshake)] = handshake }
            handshake.start(timeout: limits.handshakeTimeout)
        }
    }

    /// An upgrade ended: in a connection for the handler while running, in a polite 1001
    /// while shutting down (the client upgraded but the server is going away), in an abort
    /// once stopped; or in nothing.
    private func upgradeEnded(_ handshake: ServerHandshake, with connection: WebSocketConnection?) {
        let phase = connections.withLock {
            handshakes[ObjectIdentifier(handshake)] = nil
            if let connection, self.phase != .stopped { open.append(connection) }
            return self.phase
        }
        // Its slots are freed when its socket is released.
        guard let connection else { return }
        switch phase {
        case .stopped:
            connection.abort()
        case .draining:
            Task { _ = await connection.close(code: .goingAway, reason: "server shutting down") }
            forgetWhenClosed(connection)
        case .running:
            serve(connection)
        }
    }

    /// Hands an upgraded connection to the handler, and forgets it once it has ended. The
    /// handler's task is kept until the handler returns, so stopping can cancel it.
    private func serve(_ connection: WebSocketConnection) {
        connected?(connection)
        let handler = self.handler
        // The task holds the connection until it ends, so the key is not reused before then.
        let key = ObjectIdentifier(connection)
        let late = connections.withLock { () -> Task<Void, Never>? in
            // Made under the lock: the task cannot remove its entry before it is stored.
            let task = Task { [weak self] in
                await handler(connection)
                // A handler that returns is done with the connection: answer a peer's close now
                // rather than after the grace period, or start our own.
                _ = await connection.close()
                self?.connections.withLock { _ = self?.handlerTasks.removeValue(forKey: key) }
            }
            // Stopped since the upgrade ended (which aborted the connection): cancelled at once.
            guard phase != .stopped else { return task }
            handlerTasks[key] = task
            return nil
        }
        late?.cancel()
        forgetWhenClosed(connection)
    }

    private func forgetWhenClosed(_ connection: WebSocketConnection) {
        Task {
            _ = await connection.waitUntilClosed()
            self.connections.withLock {
                self.open.removeAll { $0 === connection }
            }
        }
    }

    /// Cancels every handler still running and forgets them (each removes itself too when it returns).
    private func cancelHandlers() {
        let running = connections.withLock { () -> [Task<Void, Never>] in
            defer { handlerTasks = [:] }
            return Array(handlerTasks.values)
        }
        for task in running { task.cancel() }
    }

    /// One admitted connection's socket is released; the last one ends a graceful shutdown's wait.
    private func release() {
        let waiters = connections.withLock { () -> [CheckedContinuation<Bool, Never>] in
            admitted -= 1
            guard admitted == 0 else { return [] }
            defer { drainWaiters = [:] }
            return Array(drainWaiters.values)
        }
        for waiter in waiters { waiter.resume(returning: true) }
    }

    /// Whether a decision's status, reason and headers can be written as they are, and its
    /// subprotocol is one `request` offered.
    static func isSendable(_ decision: UpgradeDecision, for request: WebSocketHandshake.ServerRequest) -> Bool {
        switch decision {
        case let .reject(status, reason, headers, _):
            return (100...999).contains(status) && HTTPFieldSyntax.isFieldValue(reason) && (try? HTTPFieldSyntax.check(headers)) != nil
        case let .accept(headers, subprotocol, _):
            let offered = subprotocol.map { HTTPFieldSyntax.isToken($0) && request.subprotocols.contains($0) } ?? true
            return offered && (try? HTTPFieldSyntax.check(headers)) != nil
        }
    }

    /// Sets how long the sockets of connections accepted from now on linger after a graceful
    /// close (tests that must see a socket still counted; the default is
    /// `SocketChannel.lingerTimeout`).
    package func setLingerTimeout(_ timeout: Duration) {
        lingerOverride.set(timeout)
    }

    /// Stops accepting and drops every open connection, and every upgrade in flight, at once;
    /// cancels every handler still running, whether or not its connection had ended.
    public func stop() {
        let (all, upgrading) = stopAccepting(then: .stopped)
        for connection in all { connection.abort() }
        for handshake in upgrading { handshake.cancel() }
        cancelHandlers()
        if ownsLoops {
            let group = eventLoopGroup
            Task { await group.shutdown() }
        }
    }

    /// Stops gracefully: closes the listener, asks every open connection to close (1001,
    /// going away) and waits for them. An upgrade in flight may finish; its client is then
    /// told 1001 as well. After `timeout`, whatever is still open or upgrading is aborted,
    /// and every handler still running is cancelled (when everything ended in time, handlers
    /// still finishing are left to return). Then the server's own event loops shut down
    /// (never the shared ones, nor a group the caller gave).
    public func shutdown(timeout: Duration = .seconds(10)) async {
        let (all, _) = stopAccepting(then: .draining)
        for connection in all {
            Task { _ = await connection.close(code: .goingAway, reason: "server shutting down") }
        }
        let inTime = await drained(within: timeout)
        let (left, upgrading) = connections.withLock {
            phase = .stopped
            return (open, Array(handshakes.values))
        }
        for connection in left { connection.abort() }
        for handshake in upgrading { handshake.cancel() }
        if !inTime { cancelHandlers() }
        // Aborted sockets are released on their loops at once: wait for that (bounded), so
        // the server holds no descriptor when this returns.
        await drained(within: .seconds(2))
        if ownsLoops { await eventLoopGroup.shutdown() }
    }

    /// Returns once no admitted connection is left (`true`), or after `timeout` (`false`).
    @discardableResult
    private func drained(within timeout: Duration) async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let key = connections.withLock { () -> Int? in
                if admitted == 0 { return nil }
                nextDrainWaiter += 1
                drainWaiters[nextDrainWaiter] = continuation
                return nextDrainWaiter
            }
            guard let key else {
                continuation.resume(returning: true)
                return
            }
            eventLoopGroup.next().schedule(after: timeout) { [weak self] in
                self?.connections.withLock { self?.drainWaiters.removeValue(forKey: key) }?.resume(returning: false)
            }
        }
    }

    /// Closes the listener, enters `phase` and takes what is open and upgrading; new
    /// connections are dropped from now on.
    private func stopAccepting(then phase: Phase) -> ([WebSocketConnection], [ServerHandshake]) {
        acceptor?.stop()
        return connections.withLock {
            // Only forward: a graceful shutdown after stop() does not reopen a drain.
            if phase == .stopped || self.phase == .running { self.phase = phase }
            return (open, Array(handshakes.values))
        }
    }

    deinit {
        acceptor?.stop()
        listener.close()
    }
}

/// Which event loops serve a server or a client.
public enum EventLoopGroupProvider: Sendable {
    /// The process's shared group (`EventLoopGroup.shared`).
    case shared
    /// A group the caller owns and shuts down.
    case group(EventLoopGroup)
    /// A group of this many loops of its own, shut down with its owner. A client connection
    /// takes one loop of its own (the count is ignored), which ends with the connection.
    case dedicated(loopCount: Int)

    func resolve(name: String) throws(IOError) -> (group: EventLoopGroup, owned: Bool) {
        switch self {
        case .shared: return (.shared, false)
        case let .group(group): return (group, false)
        case let .dedicated(count): return (try EventLoopGroup(loopCount: count, name: name), true)
        }
    }

    /// The loop for one client connection: the next of a shared or given group, or a loop
    /// of its own (`owned`, to shut down when the connection ends; the shared group's if no
    /// thread can be started).
    func connectionLoop() -> (loop: EventLoop, owned: Bool) {
        switch self {
        case .shared: return (EventLoopGroup.shared.next(), false)
        case let .group(group): return (group.next(), false)
        case .dedicated:
            guard let loop = try? EventLoop(name: "switchboard.client") else { return (EventLoopGroup.shared.next(), false) }
            return (loop, true)
        }
    }
}
