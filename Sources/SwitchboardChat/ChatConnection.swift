import Foundation
import SwitchboardRuntime
import SwitchboardWebSocket

/// A chat connection: Signal's WebSocket RPC. Requests go out in the `WebSocketMessage`
/// envelope with our own ids and their responses are matched by id, in any order; requests
/// the server pushes are handed to `onPush` strictly in arrival order, one at a time.
///
/// `Auth` is `Authenticated` or `Unauthenticated`, so each connection hands out only the
/// generated clients its kind allows.
public final class ChatConnection<Auth: AuthMode>: DeadlineEnforcingTransport, @unchecked Sendable {
    /// Decides how to answer one pushed request; awaited before the next is read.
    public typealias PushHandler = @Sendable (ServerRequest) async -> EventOutcome

    private let socket: WebSocketConnection
    private let pending = PendingRequests<Result<RPCResponse, TransportError>>(firstID: 0)
    private let onPush: PushHandler
    /// `ChatConnectionOptions.maximumRequestSize`.
    private let maximumRequestSize: Int

    private let eventSink: AsyncStream<ChatConnectionEvent>.Continuation
    private let keepalive: Locked<KeepaliveMonitor<ContinuousClock.Instant>>?
    /// Set when this side ends the connection for a reason the close code cannot carry.
    private let localReason = Locked<ChatConnectionError?>(nil)
    /// The app called `close()`: requests still pending, or made since, fail as closed here
    /// (not worth retrying), whichever path reports the end first.
    private let closedByApp = Locked(false)
    private static var closedByAppReason: DisconnectReason { DisconnectReason(.closedLocally, "closed by the client") }
    /// Set once a push flood is cut off: what the server sends after that is not decoded
    /// (a hostile server must not keep buying CPU), and stays unacknowledged for redelivery.
    private let isCutOff = Locked(false)
    /// The next keepalive check, on the connection's event loop.
    private let keepaliveTimer = Locked<LoopTimer?>(nil)
    /// Ids of keepalive requests, whose answers nobody awaits (and which are not "unknown").
    private let keepaliveIDs = Locked<Set<UInt64>>([])
    /// Keepalive requests remembered while unanswered.
    static var keptKeepaliveIDs: Int { 16 }
    private let pushSink: AsyncStream<PushedRequest>.Continuation
    private let pushTask = Locked<Task<Void, Never>?>(nil)
    /// When the grace `close` gave a running push handler ends; the connection's end waits
    /// for the handler until then, not for a grace of its own on top.
    private let handlerGraceEnds = Locked<ContinuousClock.Instant?>(nil)
    /// Set once the connection has ended: pushes still queued are left for redelivery.
    private let hasEnded = Locked(false)
    /// The push being handled (offered once its answer is sent), and whether `close` began.
    private let pushState = Locked<(running: FirstAnswer<Void>?, closing: Bool)>((nil, false))
    /// Offered once everything is over: handlers done, pending failed, `disconnected` sent.
    private let finished = FirstAnswer<ChatConnectionError>()
    private let diagnostics: (@Sendable (ChatDiagnostic) -> Void)?
    private let diagnosticsGate: Locked<DiagnosticsGate>
    /// Routes what the socket delivers: large messages off the event loop, in order.
    private let offload: LargeMessageOffload
    /// One timer for every pending deadline, rather than a task per request.
    private let deadlines: DeadlineTimer
    /// Pushes read but not yet taken by the push loop, against their limit.
    private let pushBudget: Locked<PushBudget>
    /// The deadline of a request that has none (``ChatConnectionOptions/defaultRequestTimeout``).
    public let defaultRequestTimeout: Duration
    /// How long closing waits for a push handler still running (``ChatConnectionOptions/pushHandlerGrace``).
    let pushHandlerGrace: Duration

    /// Headers of the upgrade response (`X-Signal-Timestamp`, `X-Signal-Alert`).
    public var upgradeHeaders: [HTTPHeaderField] { socket.handshakeHeaders }

    /// Yields when something arrives from the server (a frame or a pong), for liveness checks
    /// driven from outside, such as a session's heartbeat on its own clock: at once for the
    /// first arrival and for the answer to a ``probe(requestPath:)``, otherwise at most once a
    /// second, so a busy connection does not wake its listener on every frame.
    public let activity: AsyncStream<Void>
    private let activitySink: AsyncStream<Void>.Continuation
    private let activityThrottle = Locked(ActivityThrottle())

    /// The connection's life: `connected` with the upgrade's headers first, `disconnected`
    /// with the reason last, then the stream ends. Buffered, so a late reader misses nothing.
    public let events: AsyncStream<ChatConnectionEvent>

    init(socket: WebSocketConnection, keepalive policy: KeepalivePolicy?, diagnostics: (@Sendable (ChatDiagnostic) -> Void)? = nil,
         diagnosticsLimit: DiagnosticsLimit = .init(),
         pushBudget: PushBudget, defaultRequestTimeout: Duration = RPCCall.defaultRequestTimeout,
         pushHandlerGrace: Duration = ChatConnectionOptions.defaultPushHandlerGrace, maximumRequestSize: Int = 512 * 1024,
         onPush: @escaping PushHandler) {
        self.maximumRequestSize = maximumRequestSize
        self.pushBudget = Locked(pushBudget)
        self.pushHandlerGrace = pushHandlerGrace
        self.defaultRequestTimeout = defaultRequestTimeout
        let pending = self.pending
        deadlines = DeadlineTimer(loop: socket.eventLoop) { now in pending.expire(now: now, with: .failure(.timeout)) } next: { pending.nextDeadline }
        self.socket = socket
        self.onPush = onPush
        let router = WeakRouter<Auth>()
        offload = LargeMessageOffload(socket: socket) { message in router.connection?.route(message) }
        keepalive = policy.map { Locked(KeepaliveMonitor(policy: $0, now: .now)) }
        (events, eventSink) = AsyncStream.makeStream(of: ChatConnectionEvent.self)
        (activity, activitySink) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        eventSink.yield(.connected(ChatUpgradeInfo(headers: socket.handshakeHeaders)))
        self.diagnostics = diagnostics
        diagnosticsGate = Locked(DiagnosticsGate(limit: diagnosticsLimit))
        let (pushes, pushSink) = AsyncStream.makeStream(of: PushedRequest.self)
        self.pushSink = pushSink
        router.connection = self
        socket.deliverReceivedMessages { [offload] message in offload.receive(message) }
        pushTask.withLock { $0 = Task { await self.pushLoop(pushes) } }
        Task { await self.awaitEnd() }
        // On the loop, as frames are: the keepalive's deadline runs there too, so a busy
        // cooperative pool cannot make an answered probe look unanswered.
        socket.observePongs { [weak self] _ in self?.heard() }
        // A large message arriving slowly is the server speaking: the heartbeat's pong queues
        // behind it, and counting only whole messages dropped a live link mid-message.
        socket.observePartialMessageProgress { [weak self] in self?.heard() }
        if keepalive != nil {
            scheduleKeepaliveCheck()
        }
    }

    /// The connection's reader thread as a task executor. A caller whose task prefers it
    /// (`withTaskExecutorPreference(connection.eventLoop) { ... }`) continues on that thread
    /// when its answer arrives, instead of waking another; it must not block there.
    public var eventLoop: ConnectionEventLoop { socket.eventLoop }

    /// How the connection ended, once it has.
    public var closeInfo: WebSocketCloseInfo? { socket.closeInfo }

    /// Why the connection ended, in chat terms (4401, 4409, a protocol error...), once it has.
    public var disconnectReason: ChatConnectionError? {
        guard let info = closeInfo else { return nil }
        return localReason.withLock { $0 } ?? ChatConnectionError(closeInfo: info)
    }

    /// Closes the connection; every pending request fails with `disconnected`.
    /// A push being handled gets to finish and send its answer first (unless `close` is
    /// called from that handler), so closing right after a handler returns loses no answer;
    /// pushes not yet started are left for redelivery.
    public func close(code: WebSocketCloseCode = .normalClosure) async {
        closedByApp.withLock { $0 = true }
        let running = pushState.withLock { state -> FirstAnswer<Void>? in
            state.closing = true
            return state.running
        }
        if let running, PushHandling.connection != ObjectIdentifier(self) {
            // One grace for the whole close: the end below waits no longer than this one.
            let deadline = ContinuousClock.now.advanced(by: pushHandlerGrace)
            handlerGraceEnds.withLock { $0 = min($0 ?? deadline, deadline) }
            let limit = Task { [pushTask] in
                try? await Task.sleep(until: deadline)
                // Still running at the grace's end: cancelled now, not after a second grace.
                if running.offer(()) { pushTask.withLock { $0 }?.cancel() }
            }
            await running.value
            limit.cancel()
        }
        _ = await socket.close(code: code)
        failAll(Self.closedByAppReason)
    }

    /// Ends the connection at once, without the closing handshake: for a server that stopped
    /// answering, on which ``close(code:)`` would wait. Pending requests fail and
    /// ``disconnectReason`` says `reason` (unless the connection had already ended otherwise).
    public func abort(reason: ChatConnectionError) {
        // A close that already came (the server's 4409, say) stays the reason.
        if closeInfo == nil { localReason.withLock { $0 = $0 ?? reason } }
        socket.abort()
    }

    /// Waits until the connection ends.
    public func waitUntilClosed() async -> WebSocketCloseInfo { await socket.waitUntilClosed() }

    /// Waits until the connection is completely over: the socket closed, every pending
    /// request failed, the push handler that was running has returned (or, past
    /// `pushHandlerGrace`, been cancelled and left behind: a handler that ignores cancellation
    /// may still run), and `disconnected` has been published. Returns the reason. Reconnect
    /// after this, never before, so two push handlers never run at once unless one hung.
    public func waitUntilFinished() async -> ChatConnectionError { await finished.value }

    /// Sends a request and waits for its response, its deadline, the task's cancellation,
    /// or the connection's end, whichever comes first.
    public func send(_ request: RPCRequest) async throws(TransportError) -> RPCResponse {
        if !request.headers.fields.isEmpty { try request.headers.checkSendable() }
        // A request sent here directly, without RPCCall, still gets a deadline; one past it
        // already is not sent.
        let deadline = request.deadline ?? ContinuousClock.now.advanced(by: defaultRequestTimeout)
        if deadline <= .now { throw .timeout }
        let id = pending.register(deadline: deadline)
        // Written first, so the setup below overlaps the server's work: an early answer waits
        // in `pending`, and a task cancelled already runs `onCancel` at once. The write never
        // holds the caller: a peer that stops reading meets the deadline.
        let envelope = OutgoingEnvelope.request(request, id: id)
        if envelope.size > maximumRequestSize {
            // The server would close the connection with 1009, failing every call on it, and a
            // retry would do the same on the next one: this request alone fails, for good
            // (found by review).
            pending.resume(id, with: .failure(.invalidRequest(
                "the request's envelope has \(envelope.size) bytes, past maximumRequestSize (\(maximumRequestSize))")))
        } else {
            do throws(WebSocketError) {
                try socket.sendWithoutWaiting(envelope)
            } catch {
                // Refused while the socket stays open: the server has not read what waits for
                // it, and this request was not sent. Not a dropped connection. Refused because
                // it is closing: the close's own reason (a 4409 is not retried; found by review).
                let reason = closedByApp.withLock { $0 } ? Self.closedByAppReason : disconnectReason?.disconnectReason ?? DisconnectReason(error.description)
                pending.resume(id, with: .failure(socket.isOpen ? .retryLater(retryAfter: nil) : .disconnected(reason: reason)))
            }
        }
        deadlines.watch(deadline)
        let result = await withTaskCancellationHandler {
            await pending.answer(to: id, fallback: .failure(.disconnected(reason: "request \(id) was not pending")))
        } onCancel: {
            pending.resume(id, with: .failure(.cancelled))
        }
        return try result.get()
    }

    private func failAll(_ reason: DisconnectReason) {
        pending.close(with: .failure(.disconnected(reason: reason)))
    }

    private func heard() {
        let now = ContinuousClock.now
        keepalive?.withLock { $0.heard(at: now) }
        if activityThrottle.withLock({ $0.shouldSignal(at: now) }) { activitySink.yield() }
    }

    /// Asks the server for a sign of life: a WebSocket ping and, with `requestPath`, a
    /// keepalive request (Signal's `GET /v1/keepalive`). The answers show up on ``activity``.
    public func probe(requestPath: String? = ChatServer.keepalivePath) async {
        sendProbe(requestPath: requestPath)
    }

    private func sendProbe(requestPath: String?) {
        // Before the writes, so the answer cannot arrive unannounced.
        activityThrottle.withLock { $0.probeSent() }
        // Neither write waits: a probe must not hang on the very peer it is checking.
        try? socket.pingWithoutWaiting()
        if let requestPath {
            // Nobody waits for the answer: it arrives as a frame, which counts as activity.
            let id = pending.makeID()
            keepaliveIDs.withLock { ids in
                ids.insert(id)
                // A server that never answers keepalive requests (only pings) must not make
                // this grow: the oldest unanswered ids are forgotten (a late answer to one is
                // then only reported as an unknown id).
                if ids.count > Self.keptKeepaliveIDs, let oldest = ids.min() { ids.remove(oldest) }
            }
            try? socket.sendWithoutWaiting(OutgoingEnvelope.request(verb: "GET", path: requestPath, headers: [:], body: nil, id: id))
        }
    }

    /// Arms the keepalive's next check on the loop: it probes after a quiet `interval` and
    /// drops the connection if the probe goes unanswered. The timer holds the connection
    /// weakly, and stops once the socket has closed.
    private func scheduleKeepaliveCheck() {
        guard let keepalive, socket.isOpen else { return }
        let deadline = keepalive.withLock { $0.nextDeadline }
        let timer = socket.eventLoop.schedule(at: deadline) { [weak self] in self?.checkKeepalive() }
        keepaliveTimer.withLock {
            $0?.cancel()
            $0 = timer
        }
    }

    private func checkKeepalive() {
        guard let keepalive, socket.isOpen else { return }
        switch keepalive.withLock({ $0.tick(at: .now) }) {
        case .wait:
            break
        case .probe:
            sendProbe(requestPath: keepalive.withLock { $0.policy.requestPath })
        case .timedOut:
            localReason.withLock { $0 = $0 ?? .keepaliveTimedOut }
            socket.abort()
            return
        }
        scheduleKeepaliveCheck()
    }

    /// Routes one frame, on the socket's reader thread: a response straight to its caller,
    /// a push into the ordered push queue, so a push handler that itself makes a request on
    /// this connection still gets its answer.
    private func route(_ message: ReceivedWebSocketMessage) {
        // After the frame is handled: a waiting caller resumes first.
        defer { heard() }
        guard !message.isText else {
            diagnose(.unexpectedTextMessage)
            return
        }
        // Pending requests fail with the cut-off's reason when the socket has closed.
        if isCutOff.withLock({ $0 }) { return }
        let frame: IncomingEnvelope
        do {
            frame = try IncomingEnvelope(serializedBytes: message.payload)
        } catch {
            diagnose(.undecodableFrame("\(error)"))
            return
        }
        switch frame.type {
        case .response?:
            guard let response = frame.response, let id = response.id else {
                diagnose(.undecodableFrame("a response without an id"))
                return
            }
            // A response must say how the request went: none, or no HTTP status, fails it.
            guard let status = response.status.flatMap(IncomingEnvelope.httpStatus) else {
                diagnose(.undecodableFrame("a response to request \(id) with \(response.status.map { "status \($0)" } ?? "no status")"))
                pending.resume(id, with: .failure(.unexpectedResponse(response.status.map { "status \($0) is not an HTTP status" } ?? "a response without a status")))
                return
            }
            let answered = pending.resume(id, with: .success(RPCResponse(
                status: status, headers: response.headers, body: response.body ?? Data(), message: response.message)))
            // Late (after a timeout or cancellation), a keepalive answer, or a server bug;
            // after the connection ended every request has been answered already.
            if !answered && !keepaliveIDs.withLock({ $0.remove(id) != nil }) && !hasEnded.withLock({ $0 }) {
                diagnose(.unknownResponseID(id))
            }
        case .request?:
            guard let request = frame.request, let verb = request.verb, let path = request.path else {
                diagnose(.undecodableFrame("a request without a verb or path"))
                return
            }
            let push = PushedRequest(request: ServerRequest(verb: verb, path: path, headers: request.headers, body: request.body),
                                     id: request.id, size: DecodedRequestSize.bytes(envelopeBytes: message.payload.count,
                                                                                    headerCount: request.headers.fields.count))
            guard pushBudget.withLock({ $0.admit(size: push.size) }) else {
                diagnose(.droppedPush(path: path))
                cutOffFlood()
                return
            }
            if case .terminated = pushSink.yield(push) {
                // Arrived as the connection ended: unacknowledged, so the server delivers it again.
                diagnose(.droppedPush(path: path))
            }
        default:
            diagnose(.undecodableFrame("an envelope of unknown type"))
        }
    }

    /// Ends a connection whose server pushes far more than it waits for answers to; what it
    /// pushed stays unacknowledged, so it is delivered again on the next connection.
    private func cutOffFlood() {
        let limit = pushBudget.withLock { ($0.maximumCount, $0.maximumBytes) }
        let first = localReason.withLock { reason -> Bool in
            guard reason == nil else { return false }
            reason = .protocolError(code: WebSocketCloseCode.policyViolation.rawValue,
                                    reason: "the server pushed more than \(limit.0) requests (or \(limit.1) bytes) before they were handled")
            return true
        }
        guard first else { return }
        isCutOff.withLock { $0 = true }
        Task { [socket] in _ = await socket.close(code: .policyViolation, reason: "too many pushes unanswered") }
    }

    /// When the server closes or the socket ends (every frame it received has been routed
    /// by then): answer the server's close at once, fail what is pending, and publish why.
    private func awaitEnd() async {
        // With direct delivery the stream carries no messages; it finishes when the peer
        // closes or the connection ends.
        for await _ in socket.messages {}
        // Every frame received is routed before the end: large ones may still be on their way.
        await offload.waitUntilIdle()
        hasEnded.withLock { $0 = true }
        pushSink.finish()
        let info = await socket.close()
        keepaliveTimer.withLock { $0?.cancel() }
        let reason = localReason.withLock { $0 } ?? ChatConnectionError(closeInfo: info)
        // Pending requests fail first: a push handler may be waiting on one of them.
        failAll(closedByApp.withLock { $0 } ? Self.closedByAppReason : reason.disconnectReason)
        // A handler still running finishes before `disconnected`, so an app that reconnects
        // on it never runs two handlers at once (bounded, in case a handler hangs: one still
        // running after the grace, 5 s by default, is cancelled, and left behind).
        if let running = pushTask.withLock({ $0 }) {
            let now = ContinuousClock.now
            let deadline = handlerGraceEnds.withLock { $0 } ?? now.advanced(by: pushHandlerGrace)
            _ = await running.value(within: max(.zero, deadline - now))
            running.cancel()
        }
        let unreported = diagnosticsGate.withLock { $0.takeSuppressed() }
        if unreported > 0 { diagnostics?(.suppressed(count: unreported)) }
        eventSink.yield(.disconnected(reason))
        eventSink.finish()
        activitySink.finish()
        _ = finished.offer(reason)
    }

    /// Hands pushes to `onPush` strictly in arrival order, one at a time, and answers each
    /// with the server's id. A withheld push gets no answer, so the server delivers it again
    /// on a later connection.
    private func pushLoop(_ pushes: AsyncStream<PushedRequest>) async {
        for await pushed in pushes {
            pushBudget.withLock { $0.release(size: pushed.size) }
            let (push, verb, path) = (pushed.request, pushed.request.verb, pushed.request.path)
            // Once the connection ended, its answer could not be sent: leave it for redelivery.
            if hasEnded.withLock({ $0 }) {
                diagnose(.droppedPush(path: path))
                continue
            }
            let item = FirstAnswer<Void>()
            let closing = pushState.withLock { state -> Bool in
                if !state.closing { state.running = item }
                return state.closing
            }
            if closing {
                // Not started before the close: left for redelivery.
                diagnose(.droppedPush(path: path))
                continue
            }
            let answer: RPCResponse?
            switch await PushHandling.$connection.withValue(ObjectIdentifier(self), operation: { await onPush(push) }) {
            case let .acknowledge(response): answer = response
            case .unknown:
                diagnose(.unknownPush(verb: verb, path: path))
                answer = EventOutcome.notFound
            case .withhold: answer = nil
            case let .handlerFailed(reason):
                diagnose(.pushHandlerFailed(path: path, reason: reason))
                answer = EventOutcome.internalServerError
            case let .reject(response, reason):
                diagnose(.undecodablePush(path: path, reason: reason))
                answer = response
            }
            if var answer, let id = pushed.id {
                // A handler's header the server would read as another (a colon in its name)
                // is left out; the acknowledgement itself still goes.
                if !answer.headers.fields.isEmpty { answer.headers = answer.headers.sendableOnly }
                try? socket.sendWithoutWaiting(OutgoingEnvelope.response(to: id, answer))
            }
            pushState.withLock { $0.running = nil }
            _ = item.offer(())
        }
    }

    private func diagnose(_ diagnostic: ChatDiagnostic) {
        guard let diagnostics else { return }
        let (report, suppressedBefore) = diagnosticsGate.withLock { $0.admit(at: .now) }
        if suppressedBefore > 0 { diagnostics(.suppressed(count: suppressedBefore)) }
        if report { diagnostics(diagnostic) }
    }
}

/// The connection a router reaches, held weakly: the socket's handler must not keep it alive.
private final class WeakRouter<Auth: AuthMode>: @unchecked Sendable {
    weak var connection: ChatConnection<Auth>?
}

/// Opens chat connections.
public enum ChatClient {
    /// Account credentials for the authenticated connection: `user.device:password`, sent as Basic auth.
    public struct Credentials: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
        /// The account part of the login, before `.deviceID`.
        public var username: String
        /// The device's number within the account.
        public var deviceID: UInt32
        /// The device's password; descriptions and `dump` show it redacted.
        public var password: String

        /// Creates credentials from their parts.
        public init(username: String, deviceID: UInt32, password: String) {
            self.username = username
            self.deviceID = deviceID
            self.password = password
        }

        /// The `Authorization` header value the upgrade carries (Basic `user.device:password`),
        /// for a server checking credentials.
        public var authorization: String {
            "Basic " + Data("\(username).\(deviceID):\(password)".utf8).base64EncodedString()
        }

        public var description: String { "Credentials(\(username).\(deviceID), password: [REDACTED])" }
        public var debugDescription: String { description }
        /// What `dump` and `Mirror` see: the password redacted.
        public var customMirror: Mirror {
            Mirror(self, children: ["username": username, "deviceID": deviceID, "password": LogRedaction.placeholder], displayStyle: .struct)
        }
    }

    /// Connects with the account's credentials. Use a ``ChatConnector`` to preconnect.
    public static func connectAuthenticated(
        to url: URL, credentials: Credentials, options: ChatConnectionOptions = .init(),
        onPush: @escaping ChatConnection<Authenticated>.PushHandler = { _ in .unknown }
    ) async throws(ChatConnectionError) -> ChatConnection<Authenticated> {
        try await ChatConnector(url: url, options: options).connectAuthenticated(credentials: credentials, onPush: onPush)
    }

    /// Connects without credentials.
    public static func connectUnauthenticated(
        to url: URL, options: ChatConnectionOptions = .init(),
        onPush: @escaping ChatConnection<Unauthenticated>.PushHandler = { _ in .unknown }
    ) async throws(ChatConnectionError) -> ChatConnection<Unauthenticated> {
        try await ChatConnector(url: url, options: options).connectUnauthenticated(onPush: onPush)
    }
}

/// A request the server pushed, with the id its answer must carry.
struct PushedRequest: Sendable {
    var request: ServerRequest
    var id: UInt64?
    /// The memory the push holds while it waits, which it counts for against
    /// ``PushBudget``'s byte limit (see ``DecodedRequestSize``).
    var size: Int
}

extension ChatConnection {
    /// Whether the current task runs a push handler (of any connection), or was started by
    /// one without detaching: such a task cannot wait for its connection's end.
    package static var isHandlingPush: Bool { PushHandling.connection != nil }
}

/// Marks the task running a push handler, so a handler that closes its own connection does
/// not wait for itself.
enum PushHandling {
    /// The connection whose push handler the task runs (or a task it started), if any: per
    /// connection, so closing another connection from a handler still waits for that one's
    /// handler (one flag for all skipped it; found by review).
    @TaskLocal static var connection: ObjectIdentifier?
}
