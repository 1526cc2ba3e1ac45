import Foundation
import SwitchboardChat
import SwitchboardRuntime

/// One object that keeps an app connected: it logs in, connects, notices drops, backs off,
/// comes back, and says which screen or banner to show.
///
/// The decisions live in the pure ``SessionMachine``; this driver performs its effects
/// (login, connect, timers, heartbeats) and feeds their outcomes back as events. Every
/// time source is injected: `clock` for the retry timer, heartbeat and connect timeout,
/// `jitter` for the backoff. Outcomes of work started before a newer attempt (or a logout)
/// are discarded, and their sockets closed.
public final class Session<C: Clock>: @unchecked Sendable where C.Duration == Duration, C.Instant: Sendable {
    /// The app's login: ask the server (or a keychain) for the account's credentials.
    public typealias Login = @Sendable () async -> LoginOutcome

    private let connector: any SessionConnector
    /// The timers, failure classification and retry backoff this session runs with; a
    /// `RetryInterceptor` on its transport waits as the session does with `configuration.backoff`.
    public let configuration: SessionConfiguration
    private let clock: C
    private let login: Login
    private let invalidateCaches: @Sendable () async -> Void
    private let disposeClient: @Sendable () async -> Void

    private let lock = NSLock()
    private var machine: SessionMachine
    private var credentials: ChatClient.Credentials?
    private var link: (any SessionLink)?
    /// Bumped whenever earlier work must no longer count (a new attempt, a drop, a logout).
    private var attempt = 0
    private var retryTimer: Task<Void, Never>?
    private var linkTasks: [Task<Void, Never>] = []
    /// The link that answered its connect but has not been adopted yet: a push it delivers
    /// in that moment may already make requests.
    private var connectingLink: (any SessionLink)?
    /// The running connect attempt, cancelled when the session moves on (logout).
    private var connectAttempt: Task<Void, Never>?
    /// Links being closed, by key; DISPOSE waits for them before disposing of the client.
    private var closingLinks: [Int: Task<Void, Never>] = [:]
    private var nextClosingKey = 0
    private var workTasks: [Task<Void, Never>] = []
    /// A session-ending reason seen on a drop from CONNECTED, where the specification only
    /// allows a temporary failure: the next connect reports it instead of reconnecting, so
    /// a 4409 does not kick the other device over and over.
    private var pendingPermanentFailure: ChatConnectionError?
    /// Until the app sets one, a push is answered as failed (500): the server keeps it for a
    /// later connection, where 404 would have acknowledged it as handled.
    private var pushHandler: ChatConnection<Authenticated>.PushHandler = { _ in .handlerFailed(reason: "no push handler was set (call setPushHandler before logging in)") }
    /// The earliest a connect may start after the server asked to wait (Retry-After): also
    /// when the device comes back online before the retry timer would have fired.
    private var retryNotBefore: C.Instant?
    /// When the last connect began: after repeated failures, the next waits out the backoff
    /// from it, however it was started (see `connect(attempt:)`).
    private var lastConnectStart: C.Instant?
    private let jitter: @Sendable () -> Double
    /// The link whose heartbeat went unanswered, to be ended abruptly when it is dropped.
    private var abruptEnd: (link: ObjectIdentifier, reason: ChatConnectionError)?
    /// The connect attempt whose race ended without a link (timed out, failed, cancelled):
    /// a push its socket delivers from then on stays with the server.
    private var refusedPushesAttempt: Int?
    /// Push handler calls running now, on any link; a connect and DISPOSE wait for none
    /// to run, so that two handlers never overlap, whichever way their link ended.
    private var runningPushes = 0
    private var pushDrainWaiters: [FirstAnswer<Bool>] = []
    private var isShutDown = false
    /// The logout's DISPOSE work while it runs: shutting down waits for it, uncancelled, so
    /// the app's `disposeClient` (a wipe) is not cut short.
    private var disposing: Task<Void, Never>?

    private let changeSink: AsyncStream<SessionChange>.Continuation
    private let ignoredSink: AsyncStream<IgnoredSessionEvent>.Continuation

    /// Every state change, in order, with its UI hint and failure count. One reader: an
    /// `AsyncStream` gives each element to one of its iterators. Past
    /// ``SessionConfiguration/bufferedChanges`` unread changes, the oldest are dropped.
    public let changes: AsyncStream<SessionChange>
    /// Events the state did not accept, in order; nothing changed for them. One reader,
    /// bounded as ``changes`` is.
    public let ignoredEvents: AsyncStream<IgnoredSessionEvent>

    /// Creates a session in READY; nothing happens until the app logs in.
    ///
    /// - Parameters:
    ///   - connector: opens the socket (``ChatSessionConnector`` for a real server).
    ///   - configuration: timers (connect timeout, heartbeat) and the retry backoff.
    ///   - clock: the time source for retries, heartbeats and the connect timeout.
    ///   - jitter: a factor in [0.8, 1.2] for each retry delay.
    ///   - login: run on entry to LOGGING_IN, within ``SessionConfiguration/loginTimeout``.
    ///   - invalidateCaches: run on entry to RECONNECTING; the connect waits for it, so it
    ///     must return promptly.
    ///   - disposeClient: run on entry to DISPOSE, after the socket is closed; READY waits
    ///     for it, so it must return promptly.
    public init(
        connector: any SessionConnector, configuration: SessionConfiguration = .init(), clock: C,
        jitter: @escaping @Sendable () -> Double = { Double.random(in: RetryBackoff.jitterRange) },
        login: @escaping Login = { .noUser },
        invalidateCaches: @escaping @Sendable () async -> Void = {},
        disposeClient: @escaping @Sendable () async -> Void = {}
    ) {
        self.connector = connector
        self.configuration = configuration
        self.clock = clock
        self.login = login
        self.invalidateCaches = invalidateCaches
        self.disposeClient = disposeClient
        machine = SessionMachine(backoff: configuration.backoff, jitter: jitter)
        self.jitter = jitter
        (changes, changeSink) = AsyncStream.makeStream(of: SessionChange.self, bufferingPolicy: .bufferingNewest(configuration.bufferedChanges))
        (ignoredEvents, ignoredSink) = AsyncStream.makeStream(of: IgnoredSessionEvent.self, bufferingPolicy: .bufferingNewest(configuration.bufferedChanges))
    }

    /// A session let go without ``shutDown()`` still closes its connection and stops its
    /// timers, so a dropped account's socket does not stay open heartbeating.
    deinit {
        for task in linkTasks + workTasks + [retryTimer, connectAttempt].compactMap({ $0 }) { task.cancel() }
        for current in [link, connectingLink].compactMap({ $0 }) {
            Task { await current.end() }
        }
        changeSink.finish()
        ignoredSink.finish()
    }

    // MARK: What the app sees

    /// The current state.
    public var state: SessionState { lock.withLock { machine.state } }
    /// Consecutive connection failures; a connection counts as a success once it has stayed
    /// up for ``SessionConfiguration/stableConnectionInterval``.
    public var failureCount: Int { lock.withLock { machine.failureCount } }

    /// The authenticated connection as a transport for generated clients. Requests fail
    /// fast with `notConnected` while no socket is up; a socket that has answered its
    /// connect takes requests before CONNECTED too (a push it delivers may call out).
    public var transport: SessionTransport {
        SessionTransport { [weak self] in
            guard let self else { return nil }
            // While a link is being adopted it is `link` already, before CONNECTED.
            return self.lock.withLock { self.machine.state == .connected ? self.link : (self.connectingLink ?? self.link) }
        }
    }

    /// Sets where pushes go (the generated event dispatcher); it stays across reconnects.
    /// Set it before logging in: a push that arrives earlier is answered as failed (500), so
    /// the server keeps it for a later connection.
    public func setPushHandler(_ handler: @escaping ChatConnection<Authenticated>.PushHandler) {
        lock.withLock { pushHandler = handler }
    }

    // MARK: What the app does

    /// Logs in with the app's login function (LOGIN_UNCACHED).
    public func logIn() { handle(.loginUncached) }
    /// Logs in with stored credentials and connects straight away (LOGIN_CACHED).
    public func logIn(cached credentials: ChatClient.Credentials) {
        // Taken only if READY accepts the login: an ignored LOGIN_CACHED changes nothing.
        handle(.loginCached, onAccept: { $0.credentials = credentials })
    }
    /// The new account chose its username (USER_CREATED).
    public func userCreated() { handle(.userCreated) }
    /// Leaves onboarding (CANCEL).
    public func cancel() { handle(.cancel) }
    /// Dismisses the permanent error (DISMISS).
    public func dismiss() { handle(.dismiss) }
    /// Logs out (LOGOUT).
    public func logOut() { handle(.logout) }
    /// The device lost its network (DEVICE_OFFLINE).
    public func deviceOffline() { handle(.deviceOffline) }
    /// The device has a network again (DEVICE_ONLINE).
    public func deviceOnline() { handle(.deviceOnline) }

    /// Stops every timer and closes the socket; the session does nothing afterwards. Returns
    /// once its connections have ended (their push handlers returned, within the grace) and
    /// the work already under way has finished: a logout's `disposeClient` runs before this
    /// returns, never after. Called from a push handler, it cannot wait for the connection
    /// running that handler: it starts the same teardown and returns at once.
    public func shutDown() async {
        let (current, connecting, waits) = lock.withLock { () -> ((any SessionLink)?, (any SessionLink)?, [Task<Void, Never>]) in
            isShutDown = true
            attempt += 1
            connectAttempt?.cancel()
            connectAttempt = nil
            defer {
                link = nil
                connectingLink = nil
                linkTasks = []
                workTasks = []
                retryTimer = nil
            }
            let cancelled = linkTasks + workTasks.filter { $0 != disposing } + [retryTimer].compactMap { $0 }
            for task in cancelled { task.cancel() }
            return (link, connectingLink, Array(closingLinks.values) + cancelled + [disposing].compactMap { $0 })
        }
        // Ended in tasks of their own, not this one: a push handler's task carries its
        // connection's mark, and closing from it would skip waiting for that handler's answer.
        let ending = [
            current.map { link in Task.detached { await link.end() } },
            connecting.map { link in Task.detached { await link.endAbruptly(reason: .transport(.io("the session shut down"))) } },
        ].compactMap { $0 }
        changeSink.finish()
        ignoredSink.finish()
        if ChatConnection<Authenticated>.isHandlingPush { return }
        for task in ending + waits { await task.value }
    }

    // MARK: The driver

    /// Feeds one event to the machine and performs what it asks, all under the lock so
    /// changes are published in order; slow work runs in tasks that feed events back.
    /// `expectedAttempt` discards outcomes of work a newer attempt replaced; `onAccept` runs
    /// under the lock, before the effects, only if the state takes the event.
    private func handle(_ event: SessionEvent, retryAfter: Duration? = nil, reason: ChatConnectionError? = nil, from expectedAttempt: Int? = nil,
                        onAccept: ((Session) -> Void)? = nil) {
        lock.withLock {
            guard !isShutDown else { return }
            if let expectedAttempt, expectedAttempt != attempt { return }
            let step = machine.handle(event, retryAfter: retryAfter)
            if step.isIgnored {
                ignoredSink.yield(IgnoredSessionEvent(event: event, state: step.from))
                return
            }
            onAccept?(self)
            // Held no longer than the backoff itself holds a server's word (an hour by
            // default): a hostile `Retry-After: 999999999` must not park a reconnect for years.
            if let retryAfter { retryNotBefore = clock.now.advanced(by: min(retryAfter, configuration.backoff.maximumServerDelay)) }
            var previous = step.from
            for (index, state) in step.entered.enumerated() {
                // A state entered on the way (DISCONNECTED before OFFLINE) is published too.
                let trigger = index == 0 ? event : .deviceOffline
                changeSink.yield(SessionChange(event: trigger, from: previous, to: state, uiHint: state.uiHint,
                                               failureCount: machine.failureCount, reason: index == 0 ? reason : nil))
                previous = state
            }
            // A link lives only in CONNECTED (adopt sets it just before SOCKET_CONNECTED).
            if machine.state != .connected { dropLink() }
            for effect in step.effects { perform(effect) }
        }
    }

    /// Called with the lock held.
    private func perform(_ effect: SessionMachine.Effect) {
        switch effect {
        case .authenticate:
            attempt += 1
            let mine = attempt
            startWork { [self] in
                guard let outcome = await loginWithinTimeout() else {
                    handle(.temporaryFailure, reason: .transport(.timeout("login did not finish within \(configuration.loginTimeout)")), from: mine)
                    return
                }
                switch outcome {
                case let .account(credentials):
                    let ready = lock.withLock { () -> Bool in
                        guard attempt == mine else { return false }
                        self.credentials = credentials
                        return true
                    }
                    if ready { await connect(attempt: mine) }
                case .noUser:
                    handle(.noUser, from: mine)
                case let .failed(_, permanent):
                    handle(permanent ? .permanentFailure : .temporaryFailure, from: mine)
                }
            }
        case .connect:
            attempt += 1
            let mine = attempt
            // The dropped link's push handler returns (its end is bounded by the connection's
            // grace) before a new link can deliver: two handlers never run at once, unless
            // one ignores its cancellation past `pushHandlerGrace`.
            let closing = Array(closingLinks.values)
            startWork { [self] in
                for task in closing { await task.value }
                await pushHandlersFinished()
                await connect(attempt: mine)
            }
        case .invalidateCaches:
            // A connection the server ended for good (4401, 4409) goes to ERROR on the next
            // connect without a reconnect: its caches stay as they were.
            if pendingPermanentFailure != nil { return }
            // Runs before the connect that follows it in the same step: connect waits on it.
            let invalidate = invalidateCaches
            let previous = workTasks
            workTasks = [Task { await invalidate() }] + previous
        case let .startRetryTimer(delay):
            retryTimer?.cancel()
            let mine = attempt
            // A pending permanent failure is reported at once, not after a backoff.
            let wait = pendingPermanentFailure == nil ? delay : nil
            retryTimer = Task { [clock, weak self] in
                if let wait {
                    do {
                        try await clock.sleep(for: wait)
                    } catch {
                        return
                    }
                }
                self?.handle(.retry, from: mine)
            }
        case .cancelRetryTimer:
            retryTimer?.cancel()
            retryTimer = nil
        case .disposeClient:
            attempt += 1
            let mine = attempt
            credentials = nil
            pendingPermanentFailure = nil
            retryNotBefore = nil
            // A connect still under way must not upgrade (or be adopted) after logout.
            connectAttempt?.cancel()
            connectAttempt = nil
            let cancelled = workTasks
            for task in cancelled { task.cancel() }
            workTasks = []
            let dispose = disposeClient
            let closing = Array(closingLinks.values)
            disposing = startWork { [self] in
                // Cancelled work ends first: a cache invalidation still running must not
                // overlap the client's disposal (nor the next account's login).
                for task in cancelled { await task.value }
                // The old socket closes (its push handler returns) before the client goes.
                for task in closing { await task.value }
                await pushHandlersFinished()
                await dispose()
                // (A later logout's DISPOSE, started meanwhile, is its own.)
                lock.withLock { if attempt == mine { disposing = nil } }
                handle(.ready, from: mine)
            }
        }
    }

    /// The app's login, or `nil` when it has not finished within the login timeout (or the
    /// session moved on); a login still running then is cancelled.
    private func loginWithinTimeout() async -> LoginOutcome? {
        let race = FirstAnswer<LoginOutcome?>()
        let running = Task { [login] in _ = race.offer(await login()) }
        let timer = Task { [clock, timeout = configuration.loginTimeout] in
            try? await clock.sleep(for: timeout)
            if !Task.isCancelled { _ = race.offer(nil) }
        }
        let outcome = await withTaskCancellationHandler { await race.value } onCancel: { _ = race.offer(nil) }
        timer.cancel()
        guard let outcome else {
            running.cancel()
            return nil
        }
        return outcome
    }

    /// Called with the lock held: runs `work` after the work already queued (so a cache
    /// invalidation finishes before the connect that follows it).
    @discardableResult
    private func startWork(_ work: @escaping @Sendable () async -> Void) -> Task<Void, Never> {
        let earlier = workTasks
        let task = Task {
            for task in earlier { await task.value }
            await work()
        }
        workTasks = [task]
        return task
    }

    /// Called with the lock held: forgets the current link and closes it, or the link still
    /// connecting (its attempt is over once the state has left CONNECTING).
    private func dropLink() {
        for task in linkTasks { task.cancel() }
        linkTasks = []
        if let connecting = connectingLink {
            connectingLink = nil
            retire(connecting, reason: .transport(.io("the session moved on before the connection spoke")))
        }
        if let current = link {
            link = nil
            let key = nextClosingKey
            nextClosingKey += 1
            // The one end the reconnect and DISPOSE wait for: abrupt after a heartbeat timeout.
            let abrupt = abruptEnd.flatMap { $0.link == ObjectIdentifier(current) ? $0.reason : nil }
            abruptEnd = nil
            // Detached: a push handler that logs out must not lend this task its connection's
            // mark, or the close would skip waiting for that handler's acknowledgement.
            closingLinks[key] = Task.detached { [weak self] in
                if let abrupt { await current.endAbruptly(reason: abrupt) } else { await current.end() }
                _ = self?.lock.withLock { self?.closingLinks.removeValue(forKey: key) }
            }
        }
    }

    /// Called with the lock held: ends a link that never became current; the next connect
    /// and DISPOSE wait for it as for a dropped one. Abruptly: it has not spoken (or did not
    /// in time), so a closing handshake would wait on a server that may not answer.
    private func retire(_ retired: any SessionLink, reason: ChatConnectionError) {
        let key = nextClosingKey
        nextClosingKey += 1
        closingLinks[key] = Task.detached { [weak self] in
            await retired.endAbruptly(reason: reason)
            _ = self?.lock.withLock { self?.closingLinks.removeValue(forKey: key) }
        }
    }

    /// Returns once no push handler call is running, or after `pushHandlerGrace`, or when
    /// the waiting task is cancelled. Their links are being ended, and a connection cancels
    /// a handler after its own grace; one that ignores that is not waited for for ever.
    private func pushHandlersFinished() async {
        let drained = FirstAnswer<Bool>()
        guard lock.withLock({ () -> Bool in
            guard runningPushes > 0 else { return false }
            pushDrainWaiters.append(drained)
            return true
        }) else { return }
        let timer = Task { [clock, grace = configuration.pushHandlerGrace] in
            try? await clock.sleep(for: grace)
            _ = drained.offer(false)
        }
        _ = await withTaskCancellationHandler { await drained.value } onCancel: { _ = drained.offer(false) }
        timer.cancel()
        lock.withLock { pushDrainWaiters.removeAll { $0 === drained } }
    }

    /// Opens a link and waits for its first message, within the connect timeout.
    private func connect(attempt mine: Int) async {
        guard let (credentials, permanent, serverNotBefore, failures, lastStart) = lock.withLock({ () -> (ChatClient.Credentials?, ChatConnectionError?, C.Instant?, Int, C.Instant?)? in
            attempt == mine && !isShutDown ? (self.credentials, pendingPermanentFailure, retryNotBefore, machine.failureCount, lastConnectStart) : nil
        }) else { return }
        if let permanent {
            lock.withLock { pendingPermanentFailure = nil }
            handle(.permanentFailure, reason: permanent, from: mine)
            return
        }
        // Back online before the server's Retry-After passed: wait for it first. And after
        // two failures or more, a connect waits out the backoff of the failures before the
        // last from when the last connect began: the retry timer already has, but a device
        // going offline and online again (a flapping network) cancels the timer and reconnects
        // at once, one connect per flap whatever the failures (found by review).
        var notBefore = serverNotBefore
        if failures >= 2, let lastStart {
            let spaced = lastStart.advanced(by: configuration.backoff.delay(failureCount: failures - 1, jitter: jitter()))
            notBefore = notBefore.map { max($0, spaced) } ?? spaced
        }
        if let notBefore, clock.now < notBefore {
            try? await clock.sleep(until: notBefore, tolerance: nil)
            guard lock.withLock({ attempt == mine && !isShutDown }) else { return }
        }
        guard let credentials else {
            handle(.permanentFailure, from: mine)
            return
        }
        let race = FirstAnswer<ConnectOutcome>()
        let started = clock.now
        lock.withLock { lastConnectStart = started }
        let forwarding: ChatConnection<Authenticated>.PushHandler = { [weak self] request in
            // A link the session has moved past (logout, a newer attempt) handles nothing:
            // the push stays with the server for the current connection.
            guard let self, let handler = self.lock.withLock({ () -> ChatConnection<Authenticated>.PushHandler? in
                guard self.attempt == mine, self.refusedPushesAttempt != mine else { return nil }
                self.runningPushes += 1
                return self.pushHandler
            }) else {
                return .withhold(reason: "the session moved past this connection")
            }
            defer {
                let waiters = self.lock.withLock { () -> [FirstAnswer<Bool>] in
                    self.runningPushes -= 1
                    guard self.runningPushes == 0 else { return [] }
                    defer { self.pushDrainWaiters = [] }
                    return self.pushDrainWaiters
                }
                for waiter in waiters { _ = waiter.offer(true) }
            }
            return await handler(request)
        }
        let attemptTask = Task { [connector, self] in
            do throws(ChatConnectionError) {
                let link = try await connector.connect(credentials: credentials, onPush: forwarding)
                // Connected after the race was decided (the connect timed out, the session
                // moved on): not a link to send on, nor to probe. Checked under the lock the
                // loser of the race clears `connectingLink` under, so a late link is never set.
                let current = self.lock.withLock { () -> Bool in
                    guard !race.isAnswered, !Task.isCancelled, self.attempt == mine else { return false }
                    self.connectingLink = link
                    return true
                }
                if !current {
                    await link.end()
                    return
                }
                // Connected means the server spoke: the first frame, or the heartbeat's answer.
                await link.probe()
                var activity = link.activity.makeAsyncIterator()
                let spoke = await activity.next() != nil
                if spoke, race.offer(.connected(link)) { return }
                if spoke || Task.isCancelled {
                    // Too late (the connect timed out, or the session moved on): close it.
                    await link.end()
                    return
                }
                // The link closed before saying anything.
                if !race.offer(.failed(await link.waitUntilEnded())) { await link.end() }
            } catch {
                _ = race.offer(.failed(error))
            }
        }
        lock.withLock { if attempt == mine { connectAttempt = attemptTask } }
        let timer = Task { [clock, connectTimeout = configuration.connectTimeout] in
            try? await clock.sleep(until: started.advanced(by: connectTimeout), tolerance: nil)
            if !Task.isCancelled { _ = race.offer(.timedOut) }
        }
        // Cancelled (logout) means stop waiting now; the attempt cleans up after itself.
        let outcome = await withTaskCancellationHandler { await race.value } onCancel: { _ = race.offer(.cancelled) }
        timer.cancel()
        lock.withLock {
            if connectAttempt == attemptTask { connectAttempt = nil }
            // A link that did not become current is no longer one to send requests on, nor
            // to take pushes from; the next connect waits for its end.
            if case .connected = outcome {} else {
                refusedPushesAttempt = mine
                if attempt == mine, let connecting = connectingLink {
                    connectingLink = nil
                    let reason: ChatConnectionError = if case .timedOut = outcome {
                        .transport(.timeout("no message within \(configuration.connectTimeout) of connecting"))
                    } else {
                        .transport(.io("the session moved on before the connection spoke"))
                    }
                    retire(connecting, reason: reason)
                }
            }
        }
        switch outcome {
        case let .connected(link):
            adopt(link, attempt: mine)
        case let .failed(error):
            let retryAfter: Duration? = if case let .retryLater(after) = error { after } else { nil }
            handle(configuration.isPermanent(error) ? .permanentFailure : .temporaryFailure, retryAfter: retryAfter, reason: error, from: mine)
        case .timedOut:
            attemptTask.cancel()
            handle(.temporaryFailure, reason: .transport(.timeout("no message within \(configuration.connectTimeout) of connecting")), from: mine)
        case .cancelled:
            attemptTask.cancel()
        }
    }

    /// Makes `link` current (SOCKET_CONNECTED) and watches it: heartbeats on the session's
    /// clock, and its end.
    private func adopt(_ link: any SessionLink, attempt mine: Int) {
        let accepted = lock.withLock { () -> Bool in
            guard attempt == mine, !isShutDown else { return false }
            self.link = link
            connectingLink = nil
            return true
        }
        guard accepted else {
            Task { await link.end() }
            return
        }
        lock.withLock { retryNotBefore = nil }
        handle(.socketConnected, from: mine)
        lock.withLock {
            guard self.link === link else { return }
            guard machine.state == .connected else {
                // The machine did not take the connection (something else happened first).
                dropLink()
                return
            }
            let policy = KeepalivePolicy(interval: configuration.heartbeatInterval, timeout: configuration.heartbeatTimeout)
            let monitor = Locked(KeepaliveMonitor(policy: policy, now: clock.now))
            // The heartbeat sleeps until the monitor's next deadline; an answer to an
            // outstanding probe wakes it to reschedule, so a late-processed answer can never
            // be mistaken for silence when time jumps (as it does on a virtual clock).
            let nap = Locked<Task<Void, Never>?>(nil)
            let heartbeat = Task { [clock, weak self] in
                while !Task.isCancelled {
                    let deadline = monitor.withLock { $0.nextDeadline }
                    let sleeper = Task<Void, Never> { _ = try? await clock.sleep(until: deadline, tolerance: nil) }
                    nap.withLock { $0 = sleeper }
                    // An answer that landed before the nap was stored: reschedule now.
                    if monitor.withLock({ $0.nextDeadline }) != deadline { sleeper.cancel() }
                    await withTaskCancellationHandler { await sleeper.value } onCancel: { sleeper.cancel() }
                    if Task.isCancelled { return }
                    switch monitor.withLock({ $0.tick(at: clock.now) }) {
                    case .wait: continue
                    case .probe: await link.probe()
                    case .timedOut:
                        // Aborted, not closed: a closing handshake would wait on the server
                        // that stopped answering, and requests in flight would hang with it.
                        self?.linkFailed(link, attempt: mine, reason: .keepaliveTimedOut, abruptly: true)
                        return
                    }
                }
            }
            // Stable once up for the interval and heard from at its end or later: a server that
            // went silent after its first message is dropped by the heartbeat 40 s in, and had it
            // been forgiven at 30 s on time alone, it would be retried every 41 s for ever
            // instead of ever more slowly (found by review). Set when the interval has passed
            // with nothing heard since; taken, under the monitor's lock, by the next arrival.
            let stableAfter = clock.now.advanced(by: configuration.stableConnectionInterval)
            let awaitingProof = Locked(false)
            let proveStable: @Sendable () -> Void = { [weak self] in
                guard let self else { return }
                self.lock.withLock { if self.link === link { self.machine.connectionProvedStable() } }
            }
            let listener = Task { [clock] in
                for await _ in link.activity {
                    let (answered, proven) = monitor.withLock { monitor -> (Bool, Bool) in
                        let waiting = monitor.isAwaitingAnswer
                        let now = clock.now
                        monitor.heard(at: now)
                        let proven = now >= stableAfter && awaitingProof.withLock { pending in
                            defer { pending = false }
                            return pending
                        }
                        return (waiting && !monitor.isAwaitingAnswer, proven)
                    }
                    if answered { nap.withLock { $0 }?.cancel() }
                    if proven { proveStable() }
                }
            }
            // The drop is seen when the socket closes, not once a push handler still running
            // returns (up to `pushHandlerGrace`): meanwhile the closed link would stay current,
            // taking requests it can only fail. The reconnect still waits for that handler.
            let watcher = Task { [weak self] in
                let reason = await link.waitUntilDisconnected()
                self?.linkFailed(link, attempt: mine, reason: reason)
            }
            // Still up after the stable interval, and heard from since it ended: the failures
            // before it are forgiven.
            let stability = Task { [clock] in
                guard (try? await clock.sleep(until: stableAfter, tolerance: nil)) != nil else { return }
                let heard = monitor.withLock { monitor -> Bool in
                    if monitor.lastHeardAt >= stableAfter { return true }
                    awaitingProof.withLock { $0 = true }
                    return false
                }
                if heard { proveStable() }
            }
            linkTasks = [heartbeat, listener, watcher, stability]
        }
    }

    /// The current link ended (or stopped answering): SOCKET_DROPPED.
    private func linkFailed(_ failed: any SessionLink, attempt mine: Int, reason: ChatConnectionError, abruptly: Bool = false) {
        let current = lock.withLock { () -> Bool in
            guard link === failed else { return false }
            if abruptly { abruptEnd = (ObjectIdentifier(failed), reason) }
            if configuration.isPermanent(reason) { pendingPermanentFailure = reason }
            return true
        }
        guard current else { return }
        // Checked again under the event's own lock: a logout in between makes this stale.
        handle(.socketDropped, reason: reason, from: mine)
    }
}

extension Session where C == ContinuousClock {
    /// A session on the real clock.
    public convenience init(
        connector: any SessionConnector, configuration: SessionConfiguration = .init(),
        login: @escaping Login = { .noUser },
        invalidateCaches: @escaping @Sendable () async -> Void = {},
        disposeClient: @escaping @Sendable () async -> Void = {}
    ) {
        self.init(connector: connector, configuration: configuration, clock: ContinuousClock(),
                  login: login, invalidateCaches: invalidateCaches, disposeClient: disposeClient)
    }
}

/// How a connection attempt ended.
enum ConnectOutcome: Sendable {
    case connected(any SessionLink)
    case failed(ChatConnectionError)
    case timedOut
    /// The session moved on (logout) while connecting.
    case cancelled
}
