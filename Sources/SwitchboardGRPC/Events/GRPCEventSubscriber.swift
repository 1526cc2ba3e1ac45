import Foundation
import SwitchboardHTTP2
import SwitchboardIO
import SwitchboardRuntime

/// A client listening to one service's events over gRPC: it called the service's
/// `SwitchboardEvents` method and its stream stays open for pushes. Push to it as
/// `ChatServer` pushes to a WebSocket client; the answer is the status the client acknowledged
/// with (through `SwitchboardAcknowledge`), or nil if none came.
public final class GRPCEventSubscriber: @unchecked Sendable {
    /// The service listened to, `package.Service`.
    public let service: String
    /// Which kind of connection the subscription counts as (from its metadata).
    public let auth: AuthRequirement
    /// The subscription's metadata.
    public let headers: RPCHeaders

    let streamID: UInt32
    let connection: HTTP2ChannelDriver
    private let hub: GRPCEventHub
    private let lock = AdaptiveLock()
    private var endReason: String?

    init(service: String, auth: AuthRequirement, headers: RPCHeaders, streamID: UInt32, connection: HTTP2ChannelDriver, hub: GRPCEventHub) {
        self.service = service
        self.auth = auth
        self.headers = headers
        self.streamID = streamID
        self.connection = connection
        self.hub = hub
    }

    /// Whether the stream is still open.
    public var isOpen: Bool { lock.withLock { endReason == nil } }

    /// Pushes `request` and waits (at most `timeout`) for its acknowledgement: its status,
    /// or nil when the client withheld it, left, or took too long, or when the calling task
    /// is cancelled (as `ChatServer.Client.push` answers; a push not yet sent is not sent).
    public func push(_ request: ServerRequest, timeout: Duration = .seconds(30)) async -> Int? {
        guard isOpen, !Task.isCancelled else { return nil }
        let id = hub.nextID()
        let push = GRPCPush(id: id, request: request)
        return await hub.awaitAcknowledgement(of: id, timeout: timeout, subscriber: self) {
            self.connection.sendData(GRPCMessageFramer.frame(push.serializedBytes()), streamID: self.streamID, endStream: false)
        }
    }

    /// Ends the subscription from the server's side with OK; pushes after it get nil, and
    /// finishing again does nothing (a second status would reset the stream, losing pushes
    /// still queued for a slow client, and the OK itself).
    public func finish() {
        let first = lock.withLock { () -> Bool in
            guard endReason == nil else { return false }
            endReason = "the server finished the subscription"
            return true
        }
        guard first else { return }
        connection.sendHeaders([HPACKHeader("grpc-status", "0")], streamID: streamID, endStream: true)
    }

    func ended(_ reason: String) {
        lock.withLock { if endReason == nil { endReason = reason } }
        hub.subscriberEnded(self)
    }
}

/// Push ids, waiting acknowledgements and arriving subscribers, for one server.
final class GRPCEventHub: @unchecked Sendable {
    private let lock = AdaptiveLock()
    private var lastID: UInt64 = 0
    /// Pushes waiting for their acknowledgement, with the subscriber and the connection it
    /// listens on: only that connection may acknowledge (push ids are easy to guess).
    private var waiting: [UInt64: (subscriber: ObjectIdentifier, connection: ObjectIdentifier, continuation: CheckedContinuation<Int?, Never>)] = [:]
    /// The ids in `waiting` by subscriber, so one that ends finds its own at once.
    private var waitingBySubscriber: [ObjectIdentifier: Set<UInt64>] = [:]
    private var arrivals: [UInt64: AsyncStream<GRPCEventSubscriber>.Continuation] = [:]
    private var nextArrivalsID: UInt64 = 0
    /// Subscribers that may wait for the application to take them from
    /// ``arrivingSubscribers()``: an application that does not take them cannot make them
    /// pile up; one past it is ended at once.
    static let maximumWaitingArrivals = 1024
    private var subscribers: [ObjectIdentifier: GRPCEventSubscriber] = [:]
    /// Subscribers that came while no one listened (before the application's first call to
    /// ``arrivingSubscribers()``), oldest first, at most ``maximumWaitingArrivals``: the next
    /// listener gets them, so a subscription is never left unseen.
    private var unheard: [GRPCEventSubscriber] = []
    /// The server shut down: subscriptions arriving from now on end at once.
    private var isFinished = false

    func nextID() -> UInt64 { lock.withLock { lastID += 1; return lastID } }

    func awaitAcknowledgement(of id: UInt64, timeout: Duration, subscriber: GRPCEventSubscriber, send: @escaping @Sendable () -> Void) async -> Int? {
        // The push's timer, cancelled once the wait is over: a long timeout must not keep it
        // (and what it holds) on the loop after the answer. `done` stops one set after that.
        let timer = Locked<(timer: LoopTimer?, done: Bool)>((nil, false))
        let status = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Int?, Never>) in
                lock.withLock {
                    waiting[id] = (ObjectIdentifier(subscriber), ObjectIdentifier(subscriber.connection), continuation)
                    waitingBySubscriber[ObjectIdentifier(subscriber), default: []].insert(id)
                }
                // Ended between the caller's check and this registration: its end found nothing
                // to release, so the wait is released here instead of at the timeout. Cancelled
                // before the registration: the cancellation handler found nothing either.
                guard subscriber.isOpen, !Task.isCancelled else {
                    resolve(id, with: nil)
                    return
                }
                send()
                let scheduled = subscriber.connection.loop.schedule(after: timeout) { [weak self] in self?.resolve(id, with: nil) }
                let late = timer.withLock { state -> Bool in
                    guard !state.done else { return true }
                    state.timer = scheduled
                    return false
                }
                if late { scheduled.cancel() }
            }
        } onCancel: {
            self.resolve(id, with: nil)
        }
        timer.withLock { state -> LoopTimer? in
            state.done = true
            defer { state.timer = nil }
            return state.timer
        }?.cancel()
        return status
    }

    /// An acknowledgement that arrived on `connection`; one for a push sent on another
    /// connection (another client's) is ignored.
    func acknowledge(_ acknowledgement: GRPCPushAcknowledgement, from connection: HTTP2ChannelDriver) {
        resolve(acknowledgement.id, with: acknowledgement.status, onlyFrom: ObjectIdentifier(connection))
    }

    private func resolve(_ id: UInt64, with status: Int?, onlyFrom connection: ObjectIdentifier? = nil) {
        let continuation = lock.withLock { () -> CheckedContinuation<Int?, Never>? in
            guard let entry = waiting[id], connection == nil || entry.connection == connection else { return nil }
            waitingBySubscriber[entry.subscriber]?.remove(id)
            if waitingBySubscriber[entry.subscriber]?.isEmpty == true { waitingBySubscriber[entry.subscriber] = nil }
            return waiting.removeValue(forKey: id)?.continuation
        }
        continuation?.resume(returning: status)
    }

    /// Subscribers the hub holds now (open ones, until each ends).
    var subscriberCount: Int { lock.withLock { subscribers.count } }

    func subscriberEnded(_ subscriber: GRPCEventSubscriber) {
        let key = ObjectIdentifier(subscriber)
        let abandoned: [CheckedContinuation<Int?, Never>] = lock.withLock {
            subscribers.removeValue(forKey: key)
            let ids = waitingBySubscriber.removeValue(forKey: key) ?? []
            return ids.compactMap { waiting.removeValue(forKey: $0)?.continuation }
        }
        for continuation in abandoned { continuation.resume(returning: nil) }
    }

    func arrivingSubscribers() -> AsyncStream<GRPCEventSubscriber> {
        let (stream, continuation) = AsyncStream<GRPCEventSubscriber>.makeStream(bufferingPolicy: .bufferingOldest(Self.maximumWaitingArrivals))
        let id = lock.withLock { () -> UInt64? in
            // The server shut down: no subscriber will arrive, so the stream ends at once
            // (`finishAll` ended only the streams taken before it).
            guard !isFinished else { return nil }
            nextArrivalsID += 1
            arrivals[nextArrivalsID] = continuation
            // Under the lock, so they come before any later arrival; the stream buffers them
            // (its buffer holds as many as may wait) and calls nothing back.
            for subscriber in unheard where subscriber.isOpen { continuation.yield(subscriber) }
            unheard = []
            return nextArrivalsID
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        // A listener that stops listening is forgotten: it must not count against later
        // arrivals (which a stopped stream would refuse).
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            _ = self.lock.withLock { self.arrivals.removeValue(forKey: id) }
        }
        return stream
    }

    func arrived(_ subscriber: GRPCEventSubscriber) {
        enum Arrival { case gone, kept, offered }
        let arrival = lock.withLock { () -> Arrival in
            // Ended before it arrived (its stream was reset in the same read as the request,
            // and the reset closed it while its headers were being sent): its end found
            // nothing here to remove, so nothing may keep it now (found by review).
            guard subscriber.isOpen else { return .gone }
            subscribers[ObjectIdentifier(subscriber)] = subscriber
            // No one listens yet: kept for the first listener, up to the bound.
            guard arrivals.isEmpty, !isFinished else { return .offered }
            if unheard.count >= Self.maximumWaitingArrivals { unheard.removeAll { !$0.isOpen } }
            guard unheard.count < Self.maximumWaitingArrivals else { return .offered }
            unheard.append(subscriber)
            return .kept
        }
        guard arrival == .offered else { return }
        var taken = false
        for continuation in lock.withLock({ Array(arrivals.values) }) {
            switch continuation.yield(subscriber) {
            case .dropped: break // a listener whose buffer is full
            case .terminated: break // a listener that stopped; it forgets itself
            default: taken = true
            }
        }
        // No listener took it because the application is not taking arrivals (its buffer is
        // full, or as many wait for a first listener as may), or the server is shutting
        // down: this subscription ends at once, with OK.
        if !taken || lock.withLock({ isFinished }) { subscriber.finish() }
    }

    /// On shutdown: no more arrivals, and every open subscription ends with OK.
    func finishAll() {
        let (waitingArrivals, open) = lock.withLock { () -> ([AsyncStream<GRPCEventSubscriber>.Continuation], [GRPCEventSubscriber]) in
            isFinished = true
            unheard = []
            return (Array(arrivals.values), Array(subscribers.values))
        }
        for continuation in waitingArrivals { continuation.finish() }
        for subscriber in open { subscriber.finish() }
    }
}
