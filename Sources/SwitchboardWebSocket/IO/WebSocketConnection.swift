import Foundation
import SwitchboardIO

/// An open WebSocket connection, client or server side.
///
/// An event loop (``eventLoop``, shared with other connections) reads the socket when it is
/// readable and drives the sans-IO engine; messages arrive in order on ``messages``. Sends
/// are serialized and complete when the kernel has the bytes. Pings are answered
/// automatically. When the connection ends, ``messages`` finishes after every message
/// already received, so nothing accepted is lost.
public final class WebSocketConnection: @unchecked Sendable {
    /// Options shared by clients and servers.
    public struct Options: Sendable {
        /// Message and frame size limits.
        public var configuration: WebSocketConnectionCore.Configuration
        /// The largest message accepted (``WebSocketConnectionCore/Configuration/maximumMessageSize``),
        /// reachable here; frames follow it unless limited on their own.
        public var maximumMessageSize: Int {
            get { configuration.maximumMessageSize }
            set { configuration.maximumMessageSize = newValue }
        }
        /// How long `close` waits for the peer's close frame before dropping the connection.
        public var closeTimeout: Duration
        /// The largest read from the socket at once. Reads go into the event loop's shared
        /// buffer (`EventLoop.readBufferSize`), so this no longer changes anything.
        public var readChunkSize: Int
        /// Hand messages to a handler on the event loop (``deliverMessages(to:)``) instead
        /// of ``messages``; saves a thread-to-task hop per message for consumers that only
        /// route them, such as an RPC layer matching responses to waiting callers.
        public var deliversMessagesDirectly: Bool
        /// How many bytes may wait for a peer that is not reading. Past it, sends nobody awaits
        /// (`sendWithoutWaiting`) fail and the connection stays; an awaited `send` still waits
        /// its turn (its caller holds it back), unless a caller that gave up (cancelled) left
        /// its frame queued, when it fails too; and a pong this side owes ends the connection:
        /// a peer that never reads must not make us buffer without end. The close frame always
        /// waits behind what is queued, so closing loses nothing already sent.
        public var maximumQueuedBytes: Int
        /// How many bytes of received messages may wait in ``WebSocketConnection/messages``
        /// for the application; past it, the socket is not read until half are taken.
        public var maximumBufferedBytes: Int
        /// How long the peer may send nothing at all (no frame of any kind) before this side
        /// closes with 1001 (going away); `nil`, the default, for never. ``WebSocketServer``
        /// sets it from its ``WebSocketServer/Limits``.
        public var idleTimeout: Duration?
        /// How long the peer may take to send one message (or control frame) once its first
        /// byte has arrived, before this side closes with 1008 (policy violation); `nil`, the
        /// default, for no limit. Unlike `idleTimeout`, it is not reset by each byte, so a peer
        /// cannot hold the connection (and a half-received message) by trickling. Time this
        /// side spends not reading (backpressure) does not count. ``WebSocketServer`` sets it
        /// from its ``WebSocketServer/Limits``.
        public var messageReceiveTimeout: Duration?
        /// The largest opening-handshake head read from the peer (the 101 response on a
        /// client, the upgrade request on a server), in bytes and in header fields; past
        /// either the handshake fails. ``WebSocketServer`` sets it from its
        /// ``WebSocketServer/Limits`` (and answers 431).
        public var handshakeHeadLimits: HTTPHeadLimits

        /// Creates options. Defaults: a 5 s close timeout, 64 KiB reads, 8 MiB queued to send,
        /// 4 MiB of received messages buffered, no idle timeout and no message timeout, and a
        /// handshake head of 16 KiB and 100 fields at most.
        public init(configuration: WebSocketConnectionCore.Configuration = .init(), closeTimeout: Duration = .seconds(5), readChunkSize: Int = 64 * 1024,
                    deliversMessagesDirectly: Bool = false, maximumQueuedBytes: Int = 8 * 1024 * 1024, maximumBufferedBytes: Int = 4 * 1024 * 1024,
                    idleTimeout: Duration? = nil, messageReceiveTimeout: Duration? = nil, handshakeHeadLimits: HTTPHeadLimits = .init()) {
            self.handshakeHeadLimits = handshakeHeadLimits
            self.idleTimeout = idleTimeout
            self.messageReceiveTimeout = messageReceiveTimeout
            self.configuration = configuration
            self.closeTimeout = closeTimeout
            self.readChunkSize = readChunkSize
            self.deliversMessagesDirectly = deliversMessagesDirectly
            self.maximumQueuedBytes = maximumQueuedBytes
            self.maximumBufferedBytes = maximumBufferedBytes
        }
    }

    /// Messages from the peer, in order. Finishes when the connection closes. Empty when the
    /// options deliver messages directly. Reading waits while too many are left untaken.
    public let messages: WebSocketMessages
    /// What `messages` holds that the application has not taken.
    private let inbound: InboundBudget
    /// Fires when the application has read past the last message.
    private let drained = DrainSignal()
    /// Where direct delivery goes: messages wait here until a handler is attached.
    private let directSink: DirectMessageSink?
    /// Payloads of pongs the peer sent, for liveness checks.
    public let pongs: AsyncStream<[UInt8]>
    /// Headers of the upgrade response (client) or request (server).
    public let handshakeHeaders: [HTTPHeaderField]
    /// The request path (server side) or the path requested (client side).
    public let path: String
    /// The negotiated subprotocol.
    public let subprotocol: String?
    /// What the server's upgrade decision attached to this connection (server side only).
    public let upgradeContext: (any Sendable)?
    /// The event loop that reads this connection, as a task executor: a task that prefers it
    /// continues on the loop's thread when a message arrives, without a thread hop.
    public let eventLoop: EventLoop

    private let channel: any ByteChannel
    private let options: Options
    private let lock = AdaptiveLock()
    /// Queued frames of awaited sends whose callers stopped waiting.
    private let abandonedSends = AbandonedSends()
    // Stored state below is reached only under its lock or on the loop's thread, which
    // already makes each access exclusive: `@exclusivity(unchecked)` drops the runtime's own
    // check, about 80 instructions an access and 5% of a call (docs/performance.md).
    @exclusivity(unchecked) private var core: WebSocketConnectionCore
    private let role: WebSocketConnectionCore.Role
    @exclusivity(unchecked) private var finalInfo: WebSocketCloseInfo?
    @exclusivity(unchecked) private var closeWaiters: [CheckedContinuation<WebSocketCloseInfo, Never>] = []
    @exclusivity(unchecked) private var closeObservers: [@Sendable (WebSocketCloseInfo) -> Void] = []
    private let messageContinuation: AsyncStream<WebSocketMessage>.Continuation
    private let pongContinuation: AsyncStream<[UInt8]>.Continuation
    @exclusivity(unchecked) private var pongObserver: (@Sendable ([UInt8]) -> Void)?
    /// Told of bytes that arrived inside a message not yet complete (see
    /// ``observePartialMessageProgress(_:)``).
    @exclusivity(unchecked) private var progressObserver: (@Sendable () -> Void)?
    /// When the peer last sent bytes, for the idle timeout.
    @exclusivity(unchecked) private var lastReceived = ContinuousClock.now
    /// The next idleness check, on the loop.
    @exclusivity(unchecked) private var idleTimer: LoopTimer?
    /// Reading on or off, and for how long it was off.
    private let gate: ReadingGate
    /// When the message now arriving began, less the time reading was off before it, and
    /// how many messages had completed then; `nil` between messages.
    @exclusivity(unchecked) private var messageStart: (instant: ContinuousClock.Instant, pausedBefore: Duration, completed: Int)?
    /// The message timeout's check, on the loop, while one is scheduled.
    @exclusivity(unchecked) private var messageTimer: LoopTimer?

    /// Takes over `channel`, whose upgrade is done: `initialBytes` (read with the upgrade)
    /// go to the engine first, then everything the channel reads.
    init(channel: any ByteChannel, role: WebSocketConnectionCore.Role, options: Options, initialBytes: [UInt8],
         laterInitialBytes: (@Sendable () -> [UInt8])? = nil,
         handshakeHeaders: [HTTPHeaderField], path: String, subprotocol: String?, upgradeContext: (any Sendable)? = nil) {
        self.channel = channel
        self.options = options
        self.core = WebSocketConnectionCore(role: role, configuration: options.configuration)
        self.role = role
        self.handshakeHeaders = handshakeHeaders
        self.path = path
        self.subprotocol = subprotocol
        self.upgradeContext = upgradeContext
        eventLoop = channel.loop
        let gate = ReadingGate(channel: channel)
        self.gate = gate
        inbound = InboundBudget(limit: options.maximumBufferedBytes, pause: { gate.setPaused(true, by: .inboundBudget) }, resume: { gate.setPaused(false, by: .inboundBudget) })
        let stream: AsyncStream<WebSocketMessage>
        (stream, messageContinuation) = AsyncStream.makeStream(of: WebSocketMessage.self)
        // Ended by its reader (the reading task cancelled) with messages still in it: they
        // are dropped, and so is what they counted against the bound, or reading would stay
        // paused for good. Not when the connection finishes it: what is still in it is read
        // then, and answered before the close (`closeWhenAnswered`).
        messageContinuation.onTermination = { [inbound] termination in
            if case .cancelled = termination { inbound.releaseAll() }
        }
        messages = WebSocketMessages(stream: stream, budget: inbound, drained: drained)
        directSink = options.deliversMessagesDirectly
            ? DirectMessageSink(limit: options.maximumBufferedBytes, pause: { paused in gate.setPaused(paused, by: .directSink) })
            : nil
        (pongs, pongContinuation) = AsyncStream.makeStream(of: [UInt8].self, bufferingPolicy: .bufferingNewest(16))
        let pending = initialBytes
        if let idleTimeout = options.idleTimeout { checkIdleness(at: .now.advanced(by: idleTimeout), timeout: idleTimeout) }
        // On the loop, so no read of the channel comes between the bytes read with the
        // upgrade and this connection taking the channel over.
        eventLoop.executeHere { [self] in
            let pending = pending + (laterInitialBytes?() ?? [])
            if !pending.isEmpty {
                process(core: { $0.receive(pending) })
                // As for every read (`handle`): a message begun in the bytes that came with the
                // upgrade is held to the receive timeout too (found by review: no later read
                // came to arm it, and the slot was held until the idle timeout, or for ever).
                let armMessageTimer = lock.withLock { () -> Bool in
                    let now = ContinuousClock.now
                    lastReceived = now
                    return options.messageReceiveTimeout != nil && noteMessageProgress(at: now)
                }
                if armMessageTimer, let timeout = options.messageReceiveTimeout {
                    checkMessageProgress(at: .now.advanced(by: timeout), timeout: timeout)
                }
            }
            channel.activate(delegate: Reader(self), handshakeDone: nil)
            gate.start()
        }
    }

    /// A connection nobody holds any more (its channel's reader holds it weakly) takes its
    /// socket with it, instead of leaving it open and registered with the loop.
    deinit {
        channel.close(reason: nil)
    }

    /// Hands every message, in order, to `handler` on the event loop: first those that
    /// arrived before this call, then each as it comes. `handler` must return quickly (it
    /// holds up reading); it runs until the connection ends. Needs `deliversMessagesDirectly`.
    public func deliverMessages(to handler: @escaping @Sendable (WebSocketMessage) -> Void) {
        deliverReceivedMessages { handler($0.message) }
    }

    /// As ``deliverMessages(to:)``, with each message's bytes as received, before any copy
    /// into `Data` or `String`: for a handler that decodes them in place.
    public func deliverReceivedMessages(to handler: @escaping @Sendable (ReceivedWebSocketMessage) -> Void) {
        precondition(directSink != nil, "deliverMessages(to:) needs Options.deliversMessagesDirectly")
        directSink?.attach(handler)
    }

    /// The most bytes of received messages this connection holds for a reader that has not
    /// taken them (`Options.maximumBufferedBytes`).
    public var maximumBufferedBytes: Int { options.maximumBufferedBytes }

    /// Stops reading from the peer (`true`) or reads again (`false`): backpressure for a
    /// handler of direct delivery (``deliverReceivedMessages(to:)``) that queues work of its
    /// own, so a peer that sends faster than that work runs is held back by TCP instead of
    /// filling memory. Messages that bypass direct delivery are paced by
    /// `maximumBufferedBytes` instead.
    public func setReadingPaused(_ paused: Bool) {
        gate.setPaused(paused, by: .application)
    }

    /// How the connection ended, once it has.
    public var closeInfo: WebSocketCloseInfo? { lock.withLock { finalInfo } }

    /// Whether the connection still accepts messages.
    public var isOpen: Bool { lock.withLock { core.isOpen } }

    // MARK: Sending

    /// Sends a text message.
    public func send(text: String) async throws(WebSocketError) { try await send(.text(text)) }

    /// Sends a binary message.
    public func send(binary: Data) async throws(WebSocketError) { try await send(.binary(binary)) }

    /// Sends a message; fails with `closed` once closing has begun. Returns when the kernel
    /// has the bytes, which is what backpressures a fast sender.
    ///
    /// Cancelling the calling task ends the wait at once with `io("send cancelled")`, but
    /// not the send: the frame stays queued (it may be partly written already, and frames
    /// behind it keep their order), so the peer may still receive the whole message.
    public func send(_ message: WebSocketMessage) async throws(WebSocketError) {
        try await submitAndWait(cancelled: "send cancelled") { $0.frame(for: message) }
    }

    /// Calls `observer` on the event loop with each pong's payload as it arrives (``pongs``
    /// still gets it too). A liveness check that waited for a task to read ``pongs`` could
    /// time out while the cooperative pool is busy, though the pong had arrived in time.
    /// `observer` must return quickly: it holds up reading. A later call replaces it.
    public func observePongs(_ observer: @escaping @Sendable ([UInt8]) -> Void) {
        // The observer replaced is released after the lock: what it captured may call back in.
        var replaced = Optional(observer)
        lock.withLock { swap(&pongObserver, &replaced) }
    }

    /// Calls `observer` on the event loop after each read that leaves a message still
    /// incomplete: the peer is alive and sending, though no message or pong has come (a large
    /// message on a slow link can take longer than a liveness check waits, and a pong sent
    /// after it queues behind it). Reads that complete messages do not call it. `observer`
    /// must return quickly. A later call replaces it.
    public func observePartialMessageProgress(_ observer: @escaping @Sendable () -> Void) {
        var replaced = Optional(observer)
        lock.withLock { swap(&progressObserver, &replaced) }
    }

    /// Sends a ping; the pong arrives on ``pongs``. Returns when the kernel has the bytes.
    ///
    /// Cancelling the calling task ends the wait at once with `io("ping cancelled")`; the
    /// ping stays queued, as a cancelled ``send(_:)``'s frame does.
    public func ping(_ payload: [UInt8] = []) async throws(WebSocketError) {
        try await submitAndWait(cancelled: "ping cancelled") { $0.pingFrame(payload) }
    }

    /// Sends a binary message without waiting for the socket: what the socket does not take
    /// now is written in the background, in order. For request traffic whose callers wait on
    /// answers and deadlines rather than on the write, so a peer that stops reading cannot
    /// hold them. A background write failure ends the connection (code 1006).
    public func sendWithoutWaiting(binary: Data) throws(WebSocketError) {
        try submitWithoutWaiting { $0.frame(for: .binary(binary)) }
    }

    /// Sends a binary message of `count` bytes that `writePayload` writes straight into the
    /// frame, without waiting for the socket, as ``sendWithoutWaiting(binary:)`` does. Saves
    /// the message's own buffer for an encoder that can write in place; `writePayload` runs
    /// under the connection's lock, so it must only write, and it must write all `count`
    /// bytes (the buffer is not cleared first).
    public func sendWithoutWaiting(binaryCount count: Int, writePayload: (UnsafeMutableRawBufferPointer) -> Void) throws(WebSocketError) {
        try submitWithoutWaiting { $0.binaryFrame(count: count, writePayload: writePayload) }
    }

    /// Sends a ping without waiting for the socket; the pong arrives on ``pongs``.
    public func pingWithoutWaiting(_ payload: [UInt8] = []) throws(WebSocketError) {
        try submitWithoutWaiting { $0.pingFrame(payload) }
    }

    private var closedError: WebSocketError {
        .closed(closeInfo ?? WebSocketCloseInfo(code: .normalClosure, reason: "closing", wasClean: false))
    }

    /// Fails when closing, when the socket refused the frame, or when too much already waits.
    private func submitWithoutWaiting(_ makeFrame: (inout WebSocketConnectionCore) -> [UInt8]?) throws(WebSocketError) {
        switch submit(makeFrame, completion: nil, origin: .unawaited) {
        case nil: throw closedError
        case let .failed(error)?: throw error
        case .written?, .queued?: return
        }
    }

    /// Submits the frame and waits until the socket has taken all of it. Cancelling the task
    /// ends the wait with `io(cancellation)`; the frame stays queued, since part of it may be
    /// on the wire already and what is queued behind it must keep its order.
    private func submitAndWait(cancelled cancellation: String,
                               _ makeFrame: (inout WebSocketConnectionCore) -> [UInt8]?) async throws(WebSocketError) {
        let done = FirstOutcome<WebSocketError>()
        let frame = AbandonedSends.Frame(owner: abandonedSends)
        let made = { (core: inout WebSocketConnectionCore) -> [UInt8]? in
            let bytes = makeFrame(&core)
            frame.made(size: bytes?.count ?? 0)
            return bytes
        }
        let completion = { @Sendable (error: WebSocketError?) in
            frame.finish()
            done.offer(error)
        }
        guard let outcome = submit(made, completion: completion, origin: .awaited) else { throw closedError }
        switch outcome {
        case .written: return
        case let .failed(error): throw error
        case .queued:
            // A peer that stops reading would otherwise hold the caller until the connection ends.
            let failure = await withTaskCancellationHandler {
                await done.value
            } onCancel: {
                frame.abandon()
                done.offer(.io(cancellation))
            }
            if let failure { throw failure }
        }
    }

    /// What became of a submitted frame.
    private enum Submission {
        /// The socket took all of it at once.
        case written
        /// The rest is queued behind earlier writes; the completion reports the result.
        case queued
        /// The socket refused it, and the connection is ending; or too much already waits.
        case failed(WebSocketError)
    }

    /// Who made a frame, which decides what happens when more than
    /// ``Options/maximumQueuedBytes`` already waits for the peer.
    private enum WriteOrigin {
        /// An application's send that nobody awaits: refused, and the connection stays.
        case unawaited
        /// An application's send whose caller waits for the socket: queued, since each
        /// caller holds one frame at a time, so the callers bound the queue themselves; but
        /// refused while frames whose callers gave up wait (``AbandonedSends``).
        case awaited
        /// A frame the engine made itself: a close frame is always queued (there is one, and
        /// it must follow what is queued, or closing would lose it); a pong, which the peer
        /// can provoke without end, ends the connection.
        case engine
    }

    /// Makes a frame with the engine and hands it to the socket, all under the engine's lock,
    /// so frames reach the wire in the order the engine made them. A frame goes straight out
    /// only while nothing is queued; a partial write queues its own remainder before anyone
    /// else may write, so frames never interleave. `nil` when the engine refuses the frame
    /// (closing). Without a completion, a queued write that fails ends the connection.
    private func submit(_ makeFrame: (inout WebSocketConnectionCore) -> [UInt8]?, completion: (@Sendable (WebSocketError?) -> Void)?,
                        origin: WriteOrigin) -> Submission? {
        lock.withLock { () -> Submission? in
            guard let frame = makeFrame(&core) else { return nil }
            return enqueue(frame, completion: completion, origin: origin)
        }
    }

    /// Called with the engine's lock held; never blocks. Over the queue limit, what happens
    /// depends on the frame's `origin`.
    private func enqueue(_ bytes: [UInt8], completion: (@Sendable (WebSocketError?) -> Void)?, origin: WriteOrigin) -> Submission {
        let waiting = channel.queuedByteCount
        // One frame may always wait, however large; a queue that keeps growing means the peer
        // stopped reading.
        if waiting > 0 && waiting + bytes.count > options.maximumQueuedBytes {
            let error = WebSocketError.io("the peer is not reading: \(waiting) bytes are waiting to be written")
            switch origin {
            case .awaited where abandonedSends.any:
                return .failed(error)
            case .awaited:
                break
            case .engine where FrameWriter.isCloseFrame(bytes):
                break
            case .unawaited:
                return .failed(error)
            case .engine:
                failWrite(error)
                return .failed(error)
            }
        }
        var done: (@Sendable (String?) -> Void)?
        if let completion {
            done = { @Sendable (reason: String?) in completion(reason.map { WebSocketError.io($0) }) }
        }
        switch channel.write(bytes, completion: done) {
        case .written:
            return .written
        case .queued:
            return .queued
        case let .failed(reason):
            let error = WebSocketError.io(reason)
            if completion == nil { failWrite(error) }
            return .failed(error)
        }
    }

    /// Ends the connection after a write failed.
    fileprivate func failWrite(_ error: WebSocketError) {
        // Later, on the loop: the writer may hold the channel's state.
        eventLoop.execute { [self] in
            finish(WebSocketCloseInfo(code: .abnormalClosure, reason: "write failed: \(error.description)", wasClean: false), flushFirst: false)
        }
    }

    // MARK: Closing

    /// Starts the close handshake with `code` and `reason` and waits for it to finish, or for
    /// the close timeout. Returns how the connection ended, which is not always what was
    /// asked: if the peer closed first, this answers its close with the peer's code (as
    /// RFC 6455 §5.5.1 has it), and the result carries the peer's code and reason; if it
    /// ends the connection without a close, or does not answer in time, the code is 1006.
    @discardableResult
    public func close(code: WebSocketCloseCode = .normalClosure, reason: String = "") async -> WebSocketCloseInfo {
        startClosing(code: code, reason: reason)
        return await waitUntilClosed()
    }

    /// Sends our close and ends the connection at the close timeout if the peer has not
    /// answered by then.
    private func startClosing(code: WebSocketCloseCode, reason: String) {
        process(core: { $0.close(code: code, reason: reason) })
        // The peer's close frame may sit behind messages nobody will take now; the engine
        // drops data after our close, so reading again buffers nothing more.
        gate.forceOn()
        let watchdog = eventLoop.schedule(after: options.closeTimeout) { [self] in
            finish(WebSocketCloseInfo(code: .abnormalClosure, reason: "close timed out", wasClean: false), flushFirst: false)
        }
        whenClosed { _ in watchdog.cancel() }
    }

    /// Waits until the connection has ended.
    public func waitUntilClosed() async -> WebSocketCloseInfo {
        await withCheckedContinuation { continuation in
            let done: WebSocketCloseInfo? = lock.withLock {
                if let finalInfo { return finalInfo }
                closeWaiters.append(continuation)
                return nil
            }
            if let done { continuation.resume(returning: done) }
        }
    }

    /// Runs `body` once the connection has ended, with how it ended: at once if it has,
    /// else on the thread that ends it, before anyone waiting in ``waitUntilClosed()`` resumes.
    /// `body` must return quickly.
    public func whenClosed(_ body: @escaping @Sendable (WebSocketCloseInfo) -> Void) {
        let ended: WebSocketCloseInfo? = lock.withLock {
            if let finalInfo { return finalInfo }
            closeObservers.append(body)
            return nil
        }
        if let ended { body(ended) }
    }

    /// Drops the connection without a close handshake.
    public func abort() {
        finish(WebSocketCloseInfo(code: .abnormalClosure, reason: "aborted", wasClean: false), flushFirst: false)
    }

    /// Closes the connection once the peer has sent nothing for `timeout`, checking at
    /// `instant` on the loop (one timer per connection, rescheduled from the last bytes
    /// received). The timer holds the connection weakly, so an abandoned one is still freed.
    private func checkIdleness(at instant: ContinuousClock.Instant, timeout: Duration) {
        let timer = eventLoop.schedule(at: instant) { [weak self] in
            guard let self else { return }
            let (quiet, ended) = lock.withLock { (ContinuousClock.now - lastReceived, finalInfo != nil) }
            guard !ended else { return }
            // While this side does not read, the peer's bytes wait in the socket unseen.
            if quiet >= timeout, !gate.isPaused {
                startClosing(code: .goingAway, reason: "idle timeout")
            } else {
                checkIdleness(at: .now.advanced(by: quiet >= timeout ? timeout : timeout - quiet), timeout: timeout)
            }
        }
        let kept = lock.withLock {
            guard finalInfo == nil else { return false }
            idleTimer = timer
            return true
        }
        if !kept { timer.cancel() }
    }

    /// After a read, under the lock: starts the clock of a message that began in it, or stops
    /// it between messages. Says whether a check must be scheduled (none is pending).
    private func noteMessageProgress(at now: ContinuousClock.Instant) -> Bool {
        guard core.isInsideMessage else {
            messageStart = nil
            return false
        }
        if let start = messageStart, start.completed == core.completedMessages { return false }
        messageStart = (now, gate.pausedTime(upTo: now), core.completedMessages)
        return messageTimer == nil && finalInfo == nil
    }

    /// Closes the connection with 1008 if the message arriving at `instant` began more than
    /// `timeout` of reading time ago; otherwise checks again when it would be.
    private func checkMessageProgress(at instant: ContinuousClock.Instant, timeout: Duration) {
        let timer = eventLoop.schedule(at: instant) { [weak self] in
            guard let self else { return }
            let now = ContinuousClock.now
            let spent: Duration? = lock.withLock {
                guard finalInfo == nil, let start = messageStart else {
                    messageTimer = nil
                    return nil
                }
                return (now - start.instant) - (gate.pausedTime(upTo: now) - start.pausedBefore)
            }
            guard let spent else { return }
            if spent >= timeout {
                lock.withLock { messageTimer = nil }
                startClosing(code: .policyViolation, reason: "message not received in time")
            } else {
                checkMessageProgress(at: now.advanced(by: timeout - spent), timeout: timeout)
            }
        }
        let kept = lock.withLock {
            guard finalInfo == nil else { return false }
            messageTimer = timer
            return true
        }
        if !kept { timer.cancel() }
    }

    // MARK: Reading

    /// The channel's delegate: holds the connection weakly, so a connection nobody holds
    /// any more is freed (its `deinit` closes the channel) instead of kept by its socket.
    private final class Reader: ChannelDelegate, @unchecked Sendable {
        weak var connection: WebSocketConnection?
        /// The engine's actions, reused for every read: reads allocate nothing.
        @exclusivity(unchecked) var actions: [WebSocketConnectionCore.Action] = []

        init(_ connection: WebSocketConnection) {
            self.connection = connection
            actions.reserveCapacity(8)
        }

        func channelRead(_ bytes: UnsafeRawBufferPointer) {
            guard let connection else { return }
            _ = connection.handle(bytes, actions: &actions)
        }

        func channelEnded(reason: String?) {
            connection?.transportEnded()
        }

        func channelWriteFailed(_ reason: String) {
            connection?.failWrite(.io(reason))
        }
    }

    /// Feeds bytes to the engine; `false` once the socket ended.
    private func handle(_ bytes: UnsafeRawBufferPointer, actions: inout [WebSocketConnectionCore.Action]) -> Bool {
        if bytes.isEmpty {
            transportEnded()
            return false
        }
        let now = options.idleTimeout == nil && options.messageReceiveTimeout == nil ? nil : ContinuousClock.now
        let (armMessageTimer, progress) = lock.withLock { () -> (Bool, (@Sendable () -> Void)?) in
            if let now { lastReceived = now }
            core.receive(bytes, into: &actions, unansweredMessages: { directSink == nil && inbound.mayOweAnswers })
            sendFrames(of: actions)
            let arm = options.messageReceiveTimeout != nil && noteMessageProgress(at: now ?? .now)
            return (arm, progressObserver != nil && core.isInsideMessage ? progressObserver : nil)
        }
        if armMessageTimer, let timeout = options.messageReceiveTimeout {
            checkMessageProgress(at: .now.advanced(by: timeout), timeout: timeout)
        }
        progress?()
        perform(actions)
        // Drops the messages' slices before the next read appends to the parser's buffer.
        actions.removeAll(keepingCapacity: true)
        return true
    }

    /// The socket ended under the reader. If the engine had already closed, the thread that
    /// closed it is about to report the real close code; reporting 1006 here would race it.
    private func transportEnded() {
        // Nothing more will be delivered: the handler, which often holds this connection's
        // owner, must not keep it alive.
        defer { directSink?.detach() }
        guard let info = lock.withLock({ core.transportClosed() }) else { return }
        finish(info, flushFirst: false)
    }

    /// Runs the engine under the lock and hands its frames to the socket there too (so they
    /// keep the engine's order against concurrent sends), then performs the other actions.
    private func process(core step: (inout WebSocketConnectionCore) -> [WebSocketConnectionCore.Action]) {
        let actions = lock.withLock { () -> [WebSocketConnectionCore.Action] in
            let actions = step(&core)
            sendFrames(of: actions)
            return actions
        }
        perform(actions)
    }

    /// Called with the engine's lock held.
    private func sendFrames(of actions: [WebSocketConnectionCore.Action]) {
        for case let .send(bytes) in actions { _ = enqueue(bytes, completion: nil, origin: .engine) }
    }

    /// Everything but the sends, after the lock is released.
    private func perform(_ actions: [WebSocketConnectionCore.Action]) {
        for action in actions {
            switch action {
            case .send: continue
            case let .deliver(message):
                if let directSink {
                    directSink.receive(message)
                } else {
                    let copy = message.message
                    let cost = InboundBudget.cost(of: copy)
                    inbound.take(cost)
                    // Nobody reads any more (the reading task was cancelled, which ends the
                    // stream): the message is dropped, and so is its cost, or the budget never
                    // drained and reading stayed paused for good (found by review).
                    if case .terminated = messageContinuation.yield(copy) { inbound.release(cost) }
                }
            case let .pong(payload):
                lock.withLock { pongObserver }?(payload)
                pongContinuation.yield(payload)
            case let .closeTransport(info): finish(info, flushFirst: true)
            case .peerClosed, .failurePending:
                // No more messages will come: the close goes out once the application is done.
                messageContinuation.finish()
                closeWhenAnswered()
            }
        }
    }

    /// Sends the close this side owes (the reply to the peer's, or the one a violation calls
    /// for) as soon as the application has answered what it was delivered: at once when it
    /// is back waiting for a message having taken them all (or takes them directly), else
    /// when it reads past the last one, having sent its answers; and after
    /// ``Options/closeTimeout`` at the latest, for an application that never reads. The
    /// close frame queues behind what it sent.
    private func closeWhenAnswered() {
        if directSink != nil || !inbound.mayOweAnswers {
            process(core: { $0.close() })
            return
        }
        drained.whenFired { [weak self] in self?.process(core: { $0.close() }) }
        let grace = eventLoop.schedule(after: options.closeTimeout) { [weak self] in self?.process(core: { $0.close() }) }
        whenClosed { _ in grace.cancel() }
    }

    /// Ends the connection once: reports `info` to everyone waiting, and closes the socket.
    /// With `flushFirst` (the engine's own end, which may have queued a close frame) the
    /// socket closes behind the queued writes, but never later than the close timeout; an
    /// abort, a timeout or a failed write closes it at once, which also frees a write blocked
    /// on a peer that stopped reading. Never blocks the caller.
    private func finish(_ info: WebSocketCloseInfo, flushFirst: Bool) {
        // Released after the lock, like the observers: what it captured may call back in.
        var droppedPongObserver: (@Sendable ([UInt8]) -> Void)?
        var droppedProgressObserver: (@Sendable () -> Void)?
        let ending: (waiters: [CheckedContinuation<WebSocketCloseInfo, Never>], observers: [@Sendable (WebSocketCloseInfo) -> Void])? = lock.withLock {
            guard finalInfo == nil else { return nil }
            finalInfo = info
            idleTimer?.cancel()
            idleTimer = nil
            messageTimer?.cancel()
            messageTimer = nil
            _ = core.transportClosed()
            defer {
                closeWaiters = []
                closeObservers = []
                swap(&pongObserver, &droppedPongObserver)
                swap(&progressObserver, &droppedProgressObserver)
            }
            return (closeWaiters, closeObservers)
        }
        let waiters = ending?.waiters
        for observer in ending?.observers ?? [] { observer(info) }
        guard let waiters else {
            // Already ended, perhaps still flushing to a peer that stopped reading: an abort,
            // a timeout or a failed write must not wait for that flush.
            if !flushFirst { channel.close(reason: info.reason) }
            return
        }
        if flushFirst {
            // RFC 6455 §7.1.1: after a clean close the server ends TCP first, so that it, not
            // the client, holds TIME_WAIT; a client waits for that (boundedly), as
            // hummingbird-websocket's clients do since its issue 44.
            if info.wasClean && role == .client { channel.letPeerCloseFirst() }
            channel.closeAfterFlushing(timeout: options.closeTimeout)
        } else {
            channel.close(reason: info.reason)
        }
        directSink?.detach()
        messageContinuation.finish()
        pongContinuation.finish()
        for waiter in waiters { waiter.resume(returning: info) }
    }
}

/// Messages for a direct handler; kept in order until the handler is attached.
final class DirectMessageSink: @unchecked Sendable {
    /// Recursive: the handler runs under it (in order with `attach`), and a handler that ends
    /// its own connection (`abort()` detaches the sink) re-enters it on the same thread;
    /// a plain lock hung the event loop there.
    private let lock = NSRecursiveLock()
    @exclusivity(unchecked) private var buffered: [ReceivedWebSocketMessage] = []
    @exclusivity(unchecked) private var bufferedBytes = 0
    @exclusivity(unchecked) private var isPaused = false
    @exclusivity(unchecked) private var handler: (@Sendable (ReceivedWebSocketMessage) -> Void)?
    @exclusivity(unchecked) private var isDetached = false
    private let limit: Int
    private let pause: @Sendable (Bool) -> Void

    /// Messages that arrive before a handler is attached wait here, up to `limit` bytes
    /// (each counted with 256 bytes of bookkeeping); past it, reading pauses (`pause(true)`)
    /// until the handler comes (`pause(false)`), so a peer that floods the moment the
    /// connection opens is held back by TCP.
    init(limit: Int, pause: @escaping @Sendable (Bool) -> Void) {
        self.limit = limit
        self.pause = pause
    }

    func receive(_ message: ReceivedWebSocketMessage) {
        // The lock is held while handling, so a concurrent attach cannot reorder messages.
        lock.lock()
        defer { lock.unlock() }
        if let handler {
            handler(message)
            return
        }
        // Copied: a slice would keep the parser's whole read buffer alive while it waits.
        buffered.append(ReceivedWebSocketMessage(isText: message.isText, payload: ArraySlice(Array(message.payload))))
        bufferedBytes += message.payload.count + 256
        if !isPaused && bufferedBytes > limit {
            isPaused = true
            pause(true)
        }
    }

    /// Drops the handler once the connection delivers no more; what waits for a handler
    /// still goes to the one attached later.
    func detach() {
        lock.lock()
        defer { lock.unlock() }
        handler = nil
        isDetached = true
    }

    func attach(_ newHandler: @escaping @Sendable (ReceivedWebSocketMessage) -> Void) {
        lock.lock()
        defer { lock.unlock() }
        for message in buffered { newHandler(message) }
        buffered = []
        bufferedBytes = 0
        if !isDetached { handler = newHandler }
        if isPaused {
            isPaused = false
            pause(false)
        }
    }
}
