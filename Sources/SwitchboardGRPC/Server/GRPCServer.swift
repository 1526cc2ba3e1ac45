import Foundation
import SwitchboardHTTP2
import SwitchboardIO
import SwitchboardRuntime

/// Serves an `RPCRouter`'s routes over gRPC: each generated route that carries a
/// whole-message handler is the unary method its endpoint's `rpcName` names, on the same
/// HTTP/2 and event loops as the client. A declared error goes out as its gRPC code, with
/// the exact status and error body in `switchboard-*` trailers for Switchboard clients.
public final class GRPCServer: @unchecked Sendable {
    /// The port it listens on (the one the system chose for port 0).
    public let port: Int
    /// What it serves.
    public let router: RPCRouter
    /// How it listens and what it accepts.
    public let options: GRPCServerOptions

    private let listener: TCPListener
    private var acceptor: Acceptor?
    private let lock = AdaptiveLock()
    private var connections: [ObjectIdentifier: HTTP2ChannelDriver] = [:]
    private var isStopped = false
    /// Accepted sockets whose descriptor is not closed yet, lingering ones included: what
    /// ``GRPCServerOptions/maximumConnections`` bounds.
    private var heldDescriptors = 0
    let events = GRPCEventHub()
    /// Counted by ``shutdownPauses``.
    private let pauses = Locked(0)
    private let perAddress: PeerAddressLimit
    /// Bytes of requests (header lists and messages) held across every connection.
    private let requestBytes: ByteBudget

    /// Listens on `host`:`port` (0 picks a free port) and serves `router`'s routes.
    public init(router: RPCRouter, host: String = "127.0.0.1", port: Int = 0, options: GRPCServerOptions = .init()) throws(NetworkError) {
        self.router = router
        self.options = options
        perAddress = PeerAddressLimit(limit: options.maximumConnectionsPerAddress)
        requestBytes = ByteBudget(limit: options.maximumRequestBytesInFlight)
        listener = try TCPListener(host: host, port: port, backlog: options.listenBacklog)
        self.port = listener.port
        let acceptor = Acceptor(listener: listener, loop: options.eventLoops.next()) { [weak self] descriptor in
            // Accepted as the server went away: closed, not leaked.
            guard let self else {
                _ = SocketDescriptor.systemClose(descriptor)
                return
            }
            self.accepted(descriptor)
        }
        self.acceptor = acceptor
        acceptor.start()
    }

    /// Connections open now (an ended connection whose socket still lingers is not one, but
    /// it still counts against ``GRPCServerOptions/maximumConnections`` until released).
    public var connectionCount: Int { lock.withLock { connections.count } }

    /// Bytes of requests the calls in progress hold now, across every connection, as counted
    /// against ``GRPCServerOptions/maximumRequestBytesInFlight``: their header lists and
    /// message bytes, and 1 KiB each.
    public var requestBytesInFlight: Int { requestBytes.inUse }

    /// Answer bytes written but still waiting for their peers to read them, over every connection.
    package var queuedOutputBytes: Int {
        lock.withLock { Array(connections.values) }.reduce(0) { $0 + $1.channel.queuedByteCount }
    }

    /// Clients as they subscribe to a service's events (its `SwitchboardEvents` method), in
    /// order; push to each as it arrives. Ends when the server shuts down. At most 1,024 wait
    /// to be taken: a subscription arriving past that is ended at once (with OK), so an
    /// application that does not take them cannot make them pile up. With
    /// ``GRPCServerOptions/eventServices`` set, only subscriptions to the services it names
    /// arrive here (others are answered UNIMPLEMENTED); without it, any service's do.
    public func arrivingSubscribers() -> AsyncStream<GRPCEventSubscriber> { events.arrivingSubscribers() }

    private func accepted(_ descriptor: Int32) {
        let admitted = lock.withLock { () -> Bool in
            guard !isStopped, heldDescriptors < options.maximumConnections else { return false }
            heldDescriptors += 1
            return true
        }
        guard admitted else {
            _ = SocketDescriptor.systemClose(descriptor)
            return
        }
        guard let address = perAddress.admit(descriptor) else {
            _ = SocketDescriptor.systemClose(descriptor)
            descriptorReleased()
            return
        }
        let loop = options.eventLoops.next()
        let channel: SocketChannel
        if let tls = options.tls {
            guard let session = tls.makeSession(allowHTTP2: true) else {
                _ = SocketDescriptor.systemClose(descriptor)
                perAddress.release(address)
                descriptorReleased()
                return
            }
            channel = SocketChannel(descriptor: descriptor, loop: loop, tls: session)
        } else {
            channel = SocketChannel(descriptor: descriptor, loop: loop)
        }
        // The slots are the descriptor's: freed when it is closed, not when the connection
        // ends (a closing socket lingers for seconds, reading what its peer still sends).
        let perAddress = self.perAddress
        channel.whenReleased { [weak self] in
            perAddress.release(address)
            self?.descriptorReleased()
        }
        let driver = HTTP2ChannelDriver(channel: channel, role: .server, options: options.http2,
                                        acceptor: GRPCStreamAcceptor(router: router, options: options, hub: events, budget: requestBytes))
        let key = ObjectIdentifier(driver)
        // Checked again with the insertion: a shutdown that took its list of connections
        // since the first check would never send this one GOAWAY.
        let kept = lock.withLock { () -> Bool in
            guard !isStopped else { return false }
            connections[key] = driver
            return true
        }
        guard kept else {
            channel.close(reason: nil)
            return
        }
        driver.whenClosed { [weak self] _ in
            _ = self?.lock.withLock { self?.connections.removeValue(forKey: key) }
        }
        driver.start()
    }

    private func descriptorReleased() {
        lock.withLock { heldDescriptors -= 1 }
    }

    /// Stops accepting, sends GOAWAY on every connection and waits (at most `timeout`) for
    /// their calls to finish, then for their sockets to be released (a second more at most);
    /// the port is free when it returns. A caller whose task is cancelled waits the same.
    public func shutdown(timeout: Duration = .seconds(5)) async {
        let open: [HTTP2ChannelDriver] = lock.withLock {
            isStopped = true
            return Array(connections.values)
        }
        acceptor?.stop()
        listener.close()
        events.finishAll()
        for driver in open { driver.close() }
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while connectionCount > 0, ContinuousClock.now < deadline {
            await pause()
        }
        for driver in lock.withLock({ Array(connections.values) }) {
            driver.abort(HTTP2ProtocolViolation(.noError, "the server shut down"))
        }
        // Sockets still lingering (reading what their peers send after GOAWAY) are released
        // on their loops: wait for that too, a second past the timeout at most.
        let released = deadline.advanced(by: .seconds(1))
        while lock.withLock({ heldDescriptors }) > 0, ContinuousClock.now < released {
            await pause()
        }
    }

    /// How many times ``shutdown(timeout:)`` has paused between its checks: a test's
    /// measure that a cancelled caller waits rather than spins.
    package var shutdownPauses: Int { pauses.current }

    /// Waits 10 ms between shutdown's checks, cancelled or not: `Task.sleep` throws at once
    /// in a cancelled task, and the loops around it would spin a core until the timeout. A
    /// cancelled caller still waits as long (the timeout is what bounds a shutdown).
    private func pause() async {
        pauses.withLock { $0 += 1 }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(10)) { continuation.resume() }
        }
    }

    deinit {
        acceptor?.stop()
        listener.close()
    }
}

/// Makes a call for each stream a client opens.
final class GRPCStreamAcceptor: HTTP2StreamAcceptor, @unchecked Sendable {
    let router: RPCRouter
    let options: GRPCServerOptions
    let hub: GRPCEventHub
    let budget: ByteBudget
    /// The connection's paths resolved (used on its loop, where streams are accepted).
    let methods: GRPCMethodCache
    /// The connection's request header lists read (used on its loop, like `methods`).
    let readings = GRPCRequestReadings()

    init(router: RPCRouter, options: GRPCServerOptions, hub: GRPCEventHub, budget: ByteBudget) {
        self.router = router
        methods = GRPCMethodCache(router: router, eventServices: options.eventServices)
        self.options = options
        self.hub = hub
        self.budget = budget
    }

    func accept(streamID: UInt32, headers: [HPACKHeader], endStream: Bool, on connection: HTTP2ChannelDriver) -> any HTTP2StreamDelegate {
        // The method cache is the connection's and unlocked: only its loop may use it.
        assert(connection.loop.inEventLoop, "streams are accepted on their connection's loop")
        let call = GRPCServerCall(streamID: streamID, headers: headers, connection: connection, server: self)
        // Not from inside the driver's own dispatch: the answer may close the stream.
        connection.loop.execute {
            call.begin()
            if endStream { call.streamReceived(headers: [], endStream: true) }
        }
        return call
    }
}
