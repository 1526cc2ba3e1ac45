import Foundation
import SwitchboardIO

/// Runs one HTTP/2 connection over a byte channel on its event loop: feeds what the
/// channel reads to the sans-IO ``HTTP2Connection``, writes what it produces, routes each
/// stream's events to its delegate, and keeps the timers (SETTINGS acknowledgement,
/// keepalive PING, graceful close).
///
/// The core sits behind one lock rather than on the loop, so a caller opening a stream
/// writes its frames from its own thread, as a WebSocket send does: a call costs no hop
/// onto the loop and no wakeup. Delegates and handlers never run under the lock; they run
/// on the loop, at once when the work was the loop's, else queued to it in order.
package final class HTTP2ChannelDriver: ChannelDelegate, @unchecked Sendable {
    package let channel: any ByteChannel
    /// The channel's loop, kept: asked for several times a call, through the channel's
    /// protocol it was a witness call and a retain each time.
    package let loop: EventLoop
    package let role: HTTP2Connection.Role
    package let options: HTTP2ConnectionOptions
    private let acceptor: (any HTTP2StreamAcceptor)?

    private let lock = AdaptiveLock()
    /// A lock the layer above may use for its streams' own state, so a call costs no lock
    /// of its own: hold it only for a few loads and stores, never while calling the driver
    /// or taking another lock.
    package let streamStateLock = AdaptiveLock()
    /// Whether new streams may be asked for, published under a lock of its own: every call
    /// asks, and asking under the connection's lock made callers queue behind the loop.
    private let availabilityLock = AdaptiveLock()
    // Stored state below is reached only under its lock or on the loop's thread, which
    // already makes each access exclusive: `@exclusivity(unchecked)` drops the runtime's own
    // check, about 80 instructions an access and 5% of a call (docs/performance.md).
    @exclusivity(unchecked) private var published = true
    // Guarded by `lock`: what was last published.
    @exclusivity(unchecked) private var lastPublished = true
    // Guarded by `lock`.
    @exclusivity(unchecked) private var core: HTTP2Connection
    /// By id in a table like the core's: a unary call looks its stream's delegate up four
    /// or five times on each side, and a `Dictionary` hashes each time.
    @exclusivity(unchecked) private var delegates = HTTP2StreamMap<any HTTP2StreamDelegate>()
    @exclusivity(unchecked) private var waiting = WaitingOpens<PendingOpen>()
    @exclusivity(unchecked) private var nextOpenToken: UInt64 = 0
    @exclusivity(unchecked) private var endedReason: String?
    @exclusivity(unchecked) private var endedGoingAway = false
    @exclusivity(unchecked) private var closeHandlers: [@Sendable (String) -> Void] = []
    @exclusivity(unchecked) private var goAwayHandlers: [@Sendable () -> Void] = []
    @exclusivity(unchecked) private var establishedHandlers: [@Sendable () -> Void] = []
    @exclusivity(unchecked) private var settingsTimer: LoopTimer?
    @exclusivity(unchecked) private var keepaliveTimer: LoopTimer?
    @exclusivity(unchecked) private var pingTimeoutTimer: LoopTimer?
    @exclusivity(unchecked) private var closeTimer: LoopTimer?
    @exclusivity(unchecked) private var idleTimer: LoopTimer?
    /// Ends the reading on after an error or our GOAWAY (``HTTP2ConnectionOptions/lingerAfterError``).
    @exclusivity(unchecked) private var lingerTimer: LoopTimer?
    /// Stream ids in use when the idle check last looked, and since when nothing changed.
    @exclusivity(unchecked) private var idleMarker: UInt64 = 0
    @exclusivity(unchecked) private var idleSince = ContinuousClock.now
    @exclusivity(unchecked) private var outstandingPing: UInt64?
    /// The peer has sent HEADERS or DATA since this side's last PING.
    @exclusivity(unchecked) private var receivedPayloadSincePing = true
    @exclusivity(unchecked) private var lastPingSentAt: ContinuousClock.Instant?
    private let keepaliveBackoff: HTTP2KeepaliveBackoff
    @exclusivity(unchecked) private var pingCounter: UInt64 = 0
    @exclusivity(unchecked) private var readingPaused = false
    /// What the guarded code wants run once the lock is released, in order.
    @exclusivity(unchecked) private var effects: [Effect] = []
    /// Lists of effects already performed, kept for the next: loop-confined. Two, because
    /// effects run other guarded calls (a delegate answering at once) while their own list is
    /// still out: with one spare, those took a new list each, twice a call. (Two variables,
    /// not an array of lists: taking from and returning to one cost more than it saved.)
    @exclusivity(unchecked) private var spareEffects: [Effect] = []
    @exclusivity(unchecked) private var secondSpareEffects: [Effect] = []
    /// Runs when a queued write drains; made once rather than for every write, and let go
    /// when the connection ends (it holds the driver strongly: see `schedule(after:_:)`).
    @exclusivity(unchecked) private var writeDrainedHandler: (@Sendable (String?) -> Void)?
    private var writeDrained: @Sendable (String?) -> Void {
        if let writeDrainedHandler { return writeDrainedHandler }
        let handler: @Sendable (String?) -> Void = { [self] _ in
            // Queued, never inline: a channel that closes runs this from `close`, which may
            // be called under the lock.
            loop.execute { self.outputDrained() }
        }
        if endedReason == nil { writeDrainedHandler = handler }
        return handler
    }

    /// What runs after the lock is released. A stream event is kept as the event itself,
    /// not a closure over it: a closure's context was an allocation for every event.
    private enum Effect: Sendable {
        case deliver(HTTP2Event)
        case run(@Sendable () -> Void)
    }

    /// What callers may ask of the connection.
    package struct Snapshot: Sendable {
        /// Neither ended nor going away: new streams may be asked for.
        package var isAvailable = true
        /// Ended: nothing more will happen.
        package var isClosed = false
        /// Streams open or waiting to open that this side started.
        package var activeStreams = 0
        /// Why it ended, once it has.
        package var endReason: String?
        /// It ended because it went away gracefully (a GOAWAY, then no streams left).
        package var endedGoingAway = false
        /// The peer's SETTINGS arrived: it speaks HTTP/2.
        package var isEstablished = false
    }

    private struct PendingOpen: @unchecked Sendable {
        let token: UInt64
        let headers: [HPACKHeader]
        let endStream: Bool
        let body: [UInt8]?
        let delegate: any HTTP2StreamDelegate
        let opened: @Sendable (Result<UInt32, HTTP2StreamError>) -> Void
    }

    /// A connection over `channel` (already connected, and past TLS if any); call ``start(takingEarlyBytes:)``.
    package init(channel: any ByteChannel, role: HTTP2Connection.Role, options: HTTP2ConnectionOptions, acceptor: (any HTTP2StreamAcceptor)? = nil,
                 keepaliveBackoff: HTTP2KeepaliveBackoff = HTTP2KeepaliveBackoff()) {
        self.keepaliveBackoff = keepaliveBackoff
        self.channel = channel
        loop = channel.loop
        self.role = role
        self.options = options
        self.acceptor = acceptor
        core = HTTP2Connection(role: role, configuration: options.protocolConfiguration)
    }

    package var state: Snapshot {
        lock.withLock {
            Snapshot(isAvailable: takesNewStreams, isClosed: endedReason != nil,
                     activeStreams: readCore({ $0.openLocalStreamCount }) + waiting.count, endReason: endedReason,
                     endedGoingAway: endedGoingAway, isEstablished: readCore({ $0.isEstablished }))
        }
    }

    /// Under the lock. Out of stream ids (2^31 of them) counts as going away: a new
    /// connection is needed.
    private var takesNewStreams: Bool {
        endedReason == nil && !readCore({ $0.isGoingAway || $0.nextLocalStreamID > 0x7fff_ffff })
    }

    /// Neither ended nor going away, with stream ids left: new streams may be asked for.
    /// Cheaper than ``state``; once false it stays false.
    package var isAvailable: Bool {
        availabilityLock.withLock { published }
    }

    /// Takes over the channel: sends this side's preface and SETTINGS and starts reading.
    /// `takingEarlyBytes` hands over what the channel read before (on the loop).
    package func start(takingEarlyBytes: (@Sendable () -> (bytes: [UInt8], ended: String?))? = nil) {
        loop.executeHere { [self] in
            channel.activate(delegate: self, handshakeDone: nil)
            guarded {
                flushOutput()
                settingsTimer = schedule(after: options.settingsTimeout) { $0.settingsTimedOut() }
                scheduleKeepalive()
                scheduleIdleCheck(after: options.idleTimeout)
            }
            if let early = takingEarlyBytes?() {
                if !early.bytes.isEmpty { early.bytes.withUnsafeBytes { channelRead($0) } }
                if let reason = early.ended { channelEnded(reason: reason); return }
            }
            channel.setReading(true)
        }
    }

    // MARK: Calls from the layer above (any thread)

    /// Opens a stream (client) and writes its headers (and `body`, if any, with its end) at
    /// once, from the calling thread. `opened` gets its id, on the calling thread when the
    /// stream opens at once; the stream's events may reach `delegate` (on the loop) first.
    /// Past the peer's MAX_CONCURRENT_STREAMS it waits for a stream to close, and `opened`
    /// runs on the loop then; cancel the wait with ``cancelOpen(_:)`` and the returned token.
    @discardableResult
    package func openStream(headers: [HPACKHeader], endStream: Bool = false, body: [UInt8]? = nil, delegate: any HTTP2StreamDelegate,
                            opened: @escaping @Sendable (Result<UInt32, HTTP2StreamError>) -> Void) -> UInt64 {
        let (token, result) = guarded { () -> (UInt64, Result<UInt32, HTTP2StreamError>?) in
            nextOpenToken += 1
            let result: Result<UInt32, HTTP2StreamError>?
            do throws(HTTP2StreamError) {
                // First come, first served: while streams wait (for a slot, or for the send
                // backlog to drain), a new one waits behind them, or small calls arriving
                // steadily would keep a large one waiting for good.
                if !waiting.isEmpty, endedReason == nil { throw .concurrencyLimitReached }
                // The waiting entry is made only for a stream that waits: building it for
                // every call copied its five references.
                result = .success(try open(headers: headers, endStream: endStream, body: body, delegate: delegate))
            } catch .concurrencyLimitReached {
                result = wait(PendingOpen(token: nextOpenToken, headers: headers, endStream: endStream, body: body, delegate: delegate, opened: opened))
            } catch {
                result = .failure(error)
            }
            if result != nil { afterCoreCall() }
            return (nextOpenToken, result)
        }
        if let result { opened(result) }
        return token
    }

    /// Gives up on a stream still waiting to open; its `opened` never runs.
    package func cancelOpen(_ token: UInt64) {
        guarded {
            // The one given up on may have been the first, waiting for the send backlog: those
            // behind it may open now, not at the next frame (found by review).
            if waiting.remove(token), !waiting.isEmpty { afterCoreCall() }
        }
    }

    /// Sends message bytes on a stream (as the windows allow).
    package func sendData(_ bytes: [UInt8], streamID: UInt32, endStream: Bool) {
        guarded {
            do throws(HTTP2StreamError) {
                try core.sendData(bytes, streamID: streamID, endStream: endStream)
            } catch {
                streamSendFailed(streamID, error)
            }
            afterCoreCall()
        }
    }

    /// Sends a whole answer in one write: headers, then data if any, then trailers if any
    /// (ending the stream), as a gRPC server answers a unary call.
    package func sendResponse(headers: [HPACKHeader], data: [UInt8]?, trailers: [HPACKHeader]?, streamID: UInt32) {
        guarded {
            do throws(HTTP2StreamError) {
                try core.sendHeaders(headers, streamID: streamID, endStream: data == nil && trailers == nil)
                if let data { try core.sendData(data, streamID: streamID, endStream: trailers == nil) }
                if let trailers { try core.sendHeaders(trailers, streamID: streamID, endStream: true) }
            } catch {
                streamSendFailed(streamID, error)
            }
            afterCoreCall()
        }
    }

    /// Sends headers on a stream: a response (server), or trailers that end it.
    package func sendHeaders(_ headers: [HPACKHeader], streamID: UInt32, endStream: Bool) {
        sendHeaders(headers, essentialCount: nil, streamID: streamID, endStream: endStream)
    }

    /// Sends `headers`; if they pass the peer's MAX_HEADER_LIST_SIZE, sends only the first
    /// `essentialCount` of them instead (a gRPC status without its details), rather than
    /// failing the stream and losing the status too.
    package func sendHeaders(_ headers: [HPACKHeader], essentialCount: Int?, streamID: UInt32, endStream: Bool) {
        guarded {
            do throws(HTTP2StreamError) {
                do throws(HTTP2StreamError) {
                    try core.sendHeaders(headers, streamID: streamID, endStream: endStream)
                } catch {
                    guard case .headerListTooLarge = error, let essentialCount, essentialCount < headers.count else { throw error }
                    try core.sendHeaders(Array(headers.prefix(essentialCount)), streamID: streamID, endStream: endStream)
                }
            } catch {
                streamSendFailed(streamID, error)
            }
            afterCoreCall()
        }
    }

    /// Ends a stream at once (CANCEL when the caller gave up); its delegate hears `closed`
    /// with ``HTTP2StreamClosure/resetHere(_:)``.
    package func resetStream(_ streamID: UInt32, code: HTTP2ErrorCode) {
        guarded {
            guard let delegate = delegates.removeValue(forKey: streamID) else { return }
            core.resetStream(streamID, code: code)
            effects.append(.run { delegate.streamClosed(.resetHere(HTTP2ProtocolViolation(code, "reset by this side"))) })
            afterCoreCall()
        }
    }

    /// Runs `handler` once the connection has ended, with why (at once if it already has).
    package func whenClosed(_ handler: @escaping @Sendable (String) -> Void) {
        guarded {
            if let endedReason { effects.append(.run { handler(endedReason) }) } else { closeHandlers.append(handler) }
        }
    }

    /// Runs `handler` once the peer's SETTINGS have arrived (at once if they have); never if
    /// the connection ends first.
    package func whenEstablished(_ handler: @escaping @Sendable () -> Void) {
        guarded {
            guard endedReason == nil else { return }
            if readCore({ $0.isEstablished }) { effects.append(.run(handler)) } else { establishedHandlers.append(handler) }
        }
    }

    /// Runs `handler` once the connection stops taking new streams (GOAWAY either way, or its end).
    package func whenGoingAway(_ handler: @escaping @Sendable () -> Void) {
        guarded {
            if endedReason != nil || readCore({ $0.isGoingAway }) { effects.append(.run(handler)) } else { goAwayHandlers.append(handler) }
        }
    }

    /// Whether the peer has sent GOAWAY: the connection then ends by itself once its last
    /// stream does, with no timeout of this side's.
    package var peerWentAway: Bool {
        guarded { readCore { $0.goAwayReceived != nil } }
    }

    /// Closes gracefully: GOAWAY, then the socket once open streams finish (or after
    /// ``HTTP2ConnectionOptions/gracefulCloseTimeout``).
    package func close() {
        guarded { closeLocked() }
    }

    /// ``close()`` with the lock held.
    private func closeLocked() {
        guard endedReason == nil else { return }
        core.beginGracefulShutdown()
        wentAway()
        afterCoreCall()
        guard endedReason == nil, closeTimer == nil else { return }
        closeTimer = schedule(after: options.gracefulCloseTimeout) {
            $0.abort(HTTP2ProtocolViolation(.noError, "closed with streams still open, or the shutdown's PING unanswered"))
        }
    }

    /// Ends the connection at once: GOAWAY with `violation`'s code, every stream fails.
    package func abort(_ violation: HTTP2ProtocolViolation) {
        guarded { abortLocked(violation) }
    }

    // MARK: ChannelDelegate (on the loop)

    package func channelRead(_ bytes: UnsafeRawBufferPointer) {
        guarded {
            guard endedReason == nil else { return }
            var events = core.receive(bytes)
            dispatch(&events)
            core.recycleEvents(&events)
            afterCoreCall()
        }
    }

    package func channelEnded(reason: String?) {
        guarded {
            ended(reason: reason)
            // The peer has closed (or writing failed): reading on after an error or our GOAWAY
            // (``HTTP2ConnectionOptions/lingerAfterError``), so that the peer's late bytes meet
            // no reset, has nothing left to protect. What is queued is still sent; the
            // descriptor and connection slot go then, not when the linger runs out.
            lingerTimer?.cancel()
            lingerTimer = nil
            channel.closeAfterFlushing(timeout: .seconds(1))
        }
    }

    package func channelWriteFailed(_ reason: String) {
        channelEnded(reason: reason)
    }

    // MARK: Under the lock

    /// Reads the core in place. Calling a getter on `core` itself made the compiler copy the
    /// whole connection (streams, HPACK tables, buffers: a retain and a release each) on
    /// every call, since a class's stored property could change while the getter runs.
    private func readCore<T>(_ body: (inout HTTP2Connection) -> T) -> T {
        body(&core)
    }

    /// Runs `body` under the lock, then the effects it queued: at once on the loop, else
    /// handed to the loop in one piece, so delegates keep hearing everything there, in order.
    private func guarded<T>(_ body: () -> T) -> T {
        let onLoop = loop.inEventLoop
        lock.lock()
        // On the loop a list comes back once performed, so the next one allocates nothing.
        if onLoop, effects.capacity == 0 {
            if spareEffects.capacity > 0 { swap(&effects, &spareEffects) } else if secondSpareEffects.capacity > 0 { swap(&effects, &secondSpareEffects) }
        }
        let result = body()
        if lastPublished, !takesNewStreams {
            lastPublished = false
            availabilityLock.withLock { published = false }
        }
        var queued: [Effect] = []
        if !effects.isEmpty { swap(&queued, &effects) }
        lock.unlock()
        if !queued.isEmpty {
            if onLoop {
                // Moved out one by one, in order (reversed, then taken from the end): iterating
                // copied each effect, and emptying the list destroyed it again.
                queued.reverseByMoving()
                while let effect = queued.popLast() { perform(effect) }
                if queued.capacity <= 256 {
                    if spareEffects.capacity == 0 { swap(&spareEffects, &queued) } else if secondSpareEffects.capacity == 0 { swap(&secondSpareEffects, &queued) }
                }
            } else {
                loop.execute { [self, queued] in for effect in queued { perform(effect) } }
            }
        }
        return result
    }

    private func perform(_ effect: Effect) {
        switch effect {
        case let .deliver(event): deliver(event)
        case let .run(body): body()
        }
    }

    private func ended(reason: String?) {
        guard endedReason == nil else { return }
        let why = reason ?? "the peer closed the connection"
        var events = core.connectionEnded(reason: why)
        dispatch(&events)
        finish(why)
    }

    private func abortLocked(_ violation: HTTP2ProtocolViolation) {
        guard endedReason == nil else { return }
        var events = core.abort(violation)
        dispatch(&events)
        flushOutput()
        channel.closeAfterFlushing(timeout: .seconds(1))
        finish(violation.description)
    }

    /// Opens a stream now, under the lock. Throws `concurrencyLimitReached` when it must wait
    /// for a slot, `connectionClosed` once the connection ended, and what the core refuses
    /// (going away, a header list over the peer's limit).
    private func open(headers: [HPACKHeader], endStream: Bool, body: [UInt8]?, delegate: any HTTP2StreamDelegate) throws(HTTP2StreamError) -> UInt32 {
        guard endedReason == nil else { throw .connectionClosed }
        // A body the backlog has no room for waits, as for a slot: opened now, its bytes would
        // be refused and the stream reset (ENHANCE_YOUR_CALM) though only this side is busy,
        // as when several large requests go to a server with small windows (found by review).
        if let body, mustWaitForBacklog(body) { throw .concurrencyLimitReached }
        let id = try core.openStream(headers: headers, endStream: body == nil && endStream)
        delegates[id] = delegate
        if let body {
            do throws(HTTP2StreamError) {
                try core.sendData(body, streamID: id, endStream: endStream)
            } catch {
                streamSendFailed(id, error)
            }
        }
        return id
    }

    /// Queues a stream that must wait for a slot (nil), unless too many wait already.
    private func wait(_ pending: PendingOpen) -> Result<UInt32, HTTP2StreamError>? {
        guard waiting.count < options.maximumWaitingStreams else { return .failure(.tooManyWaiting(limit: options.maximumWaitingStreams)) }
        waiting.append(pending, token: pending.token)
        return nil
    }

    /// Opens a stream that waited, its headers brought up to date by its delegate.
    private func open(_ pending: PendingOpen) -> Result<UInt32, HTTP2StreamError>? {
        do throws(HTTP2StreamError) {
            return .success(try open(headers: pending.delegate.headersForDelayedOpen(pending.headers), endStream: pending.endStream,
                                     body: pending.body, delegate: pending.delegate))
        } catch .concurrencyLimitReached {
            return wait(pending)
        } catch {
            return .failure(error)
        }
    }

    /// Whether a client stream with `body` waits for the bytes already waiting for window to
    /// drain (never on a connection that has ended or is going away: it fails as it would).
    private func mustWaitForBacklog(_ body: [UInt8]) -> Bool {
        role == .client && !core.isClosed && !core.isGoingAway && core.wouldExceedSendBacklog(newStreamBytes: body.count)
    }

    private func openWaiting() {
        while !waiting.isEmpty, readCore({ $0.canOpenStream || $0.isGoingAway || $0.isClosed }) {
            // The first waits for the backlog: the rest wait behind it, in order.
            if let body = waiting.first()?.body, mustWaitForBacklog(body) { break }
            guard let pending = waiting.popFirst() else { break }
            if let result = open(pending) { effects.append(.run { pending.opened(result) }) }
        }
    }

    /// Stream events go out as effects, each finding its delegate when it runs (a delegate
    /// may reset its own stream while an earlier event is being heard). The events are moved
    /// out of `events`, which is left empty with its storage: copying each into its effect and
    /// destroying the list's own cost about 100 instructions an event.
    private func dispatch(_ events: inout [HTTP2Event]) {
        events.reverseByMoving()
        while let event = events.popLast() {
            switch event {
            case .headers, .data:
                receivedPayloadSincePing = true
                effects.append(.deliver(event))
            case .streamClosed:
                effects.append(.deliver(event))
            case .remoteSettingsChanged:
                break
            case let .pingAcknowledged(opaque):
                if opaque == outstandingPing {
                    outstandingPing = nil
                    pingTimeoutTimer?.cancel()
                    pingTimeoutTimer = nil
                }
            case let .goAway(_, code, debugData):
                // gRPC servers refuse clients that ping too often this way (gRFC A8): ping
                // half as often from now on, on this connection and the next.
                if code == .enhanceYourCalm, debugData.elementsEqual("too_many_pings".utf8) { keepaliveBackoff.double() }
                wentAway()
            case .connectionFailed:
                // Closed by `finish` once the GOAWAY is written.
                break
            }
        }
    }

    /// Hands one stream event to its delegate; on the loop, without the lock.
    private func deliver(_ event: HTTP2Event) {
        switch event {
        case let .headers(id, headers, endStream):
            let (delegate, acceptor): ((any HTTP2StreamDelegate)?, (any HTTP2StreamAcceptor)?) = lock.withLock {
                if let delegate = delegates[id] { return (delegate, nil) }
                return (nil, role == .server && endedReason == nil ? self.acceptor : nil)
            }
            if let delegate {
                delegate.streamReceived(headers: headers, endStream: endStream)
            } else if let acceptor {
                let accepted = acceptor.accept(streamID: id, headers: headers, endStream: endStream, on: self)
                let endedMeanwhile: String? = lock.withLock {
                    if let endedReason { return endedReason }
                    delegates[id] = accepted
                    return nil
                }
                if let endedMeanwhile { accepted.streamClosed(.connectionEnded(endedMeanwhile)) }
            }
        case let .data(id, bytes, endStream):
            lock.withLock { delegates[id] }?.streamReceived(data: bytes, endStream: endStream)
        case let .streamClosed(id, closure):
            lock.withLock { delegates.removeValue(forKey: id) }?.streamClosed(closure)
        default:
            break
        }
    }

    /// After anything that may have changed the core: write its output, settle timers,
    /// let waiting streams open, close once a GOAWAY has run its course.
    private func afterCoreCall() {
        var events = core.takeEvents()
        if !events.isEmpty {
            dispatch(&events)
            core.recycleEvents(&events)
        }
        flushOutput()
        if settingsTimer != nil, readCore({ $0.pendingLocalSettingsAcks }) == 0 {
            settingsTimer?.cancel()
            settingsTimer = nil
        }
        if !establishedHandlers.isEmpty, readCore({ $0.isEstablished }) {
            for handler in establishedHandlers { effects.append(.run(handler)) }
            establishedHandlers = []
        }
        if !waiting.isEmpty {
            openWaiting()
            flushOutput()
        }
        if let failure = readCore({ $0.failure }), endedReason == nil {
            finish(failure.description)
            return
        }
        if readCore({ $0.isGoingAway && $0.isQuiescent }), endedReason == nil {
            flushOutput()
            endedGoingAway = true
            finish("the connection went away")
        }
    }

    /// Writes the core's output from this thread; what the socket cannot take yet waits in
    /// the channel, in order (the lock keeps writers in the core's order).
    private func flushOutput() {
        guard readCore({ $0.hasOutput }) else { return }
        var bytes = core.takeOutput()
        let waiting = channel.queuedByteCount
        if waiting > 0 && waiting + bytes.count > options.outputQueueLimit {
            ended(reason: "the peer is not reading: \(waiting) bytes are waiting to be written")
            return
        }
        switch channel.write(bytes, completion: writeDrained) {
        case .written:
            // The channel kept nothing: the buffer serves the next output.
            core.recycleOutput(&bytes)
        case .queued:
            break
        case let .failed(reason):
            ended(reason: reason)
            return
        }
        // A peer that sends but never reads would make the answers queue here: stop
        // reading until it catches up.
        if !readingPaused, channel.queuedByteCount > options.maxQueuedOutputBytes {
            readingPaused = true
            channel.setReading(false)
        }
    }

    private func outputDrained() {
        guarded {
            guard readingPaused, endedReason == nil, channel.queuedByteCount <= options.maxQueuedOutputBytes / 2 else { return }
            readingPaused = false
            channel.setReading(true)
        }
    }

    private func streamSendFailed(_ id: UInt32, _ error: HTTP2StreamError) {
        guard let delegate = delegates.removeValue(forKey: id) else { return }
        let code: HTTP2ErrorCode
        switch error {
        case .sendBacklogFull, .connectionSendBacklogFull:
            // The peer withholds the window these bytes wait for: ENHANCE_YOUR_CALM (gRPC
            // clients report RESOURCE_EXHAUSTED), charged to its reset budget like any reset it
            // made this side send, so opening streams to be reset so is not free.
            code = .enhanceYourCalm
            core.resetStreamChargingPeer(id, code: code)
        default:
            code = .internalError
            core.resetStream(id, code: code)
        }
        effects.append(.run { delegate.streamClosed(.resetHere(HTTP2ProtocolViolation(code, error.description))) })
    }

    private func wentAway() {
        let handlers = goAwayHandlers
        goAwayHandlers = []
        effects += handlers.map(Effect.run)
        openWaiting()
    }

    private func settingsTimedOut() {
        guarded {
            settingsTimer = nil
            guard endedReason == nil, readCore({ $0.pendingLocalSettingsAcks }) > 0 else { return }
            abortLocked(HTTP2ProtocolViolation(.settingsTimeout, "SETTINGS not acknowledged within \(options.settingsTimeout)"))
        }
    }

    /// The idle check costs nothing per stream: it compares the highest stream ids with what
    /// it saw last time, and whether any stream is open.
    private func scheduleIdleCheck(after delay: Duration?) {
        guard let delay, endedReason == nil else { return }
        idleTimer = schedule(after: delay) { $0.checkIdle() }
    }

    private func checkIdle() {
        guard let timeout = options.idleTimeout else { return }
        guarded {
            guard endedReason == nil else { return }
            let (open, marker) = readCore { core in
                (core.openLocalStreamCount + core.openRemoteStreamCount > 0,
                 UInt64(core.nextLocalStreamID) << 32 | UInt64(core.highestRemoteStreamID))
            }
            let now = ContinuousClock.now
            if open || marker != idleMarker {
                idleMarker = marker
                idleSince = now
            } else if now - idleSince >= timeout {
                // Closed under the same lock that found it idle: a stream opened from another
                // thread in between would be caught by the close and cut off by its timeout
                // (found by review).
                closeLocked()
                return
            }
            scheduleIdleCheck(after: timeout - (now - idleSince))
        }
    }

    private func scheduleKeepalive() {
        guard let interval = options.keepaliveInterval, endedReason == nil else { return }
        keepaliveTimer = schedule(after: interval * keepaliveBackoff.factor) { $0.sendKeepalive() }
    }

    private func sendKeepalive() {
        guarded {
            guard endedReason == nil else { return }
            // Only while calls are open, as gRPC clients do by default: an idle connection's
            // pings count against it on gRPC servers, and there is nothing to keep alive.
            if core.openLocalStreamCount + core.openRemoteStreamCount > 0 { sendPing(for: "keepalive PING") }
            scheduleKeepalive()
        }
    }

    /// Asks whether the peer is still there: a PING, unless one is already out, and the
    /// connection ends if no answer comes within `keepaliveTimeout`. A call that reached its
    /// deadline asks, so a server that went silent is found by the next call, not by every
    /// call timing out on a connection that still looks open; so does a quiet subscription.
    /// `purpose` names the PING in the reason the connection ends with.
    package func checkLiveness(for purpose: String = "PING after a call's deadline") {
        guarded {
            // At most one such PING for each time the server has sent HEADERS or DATA since
            // the last: gRPC servers end a connection that pings three times without being
            // sent anything between (too_many_pings), and a server that answered a PING and
            // has said nothing since is known to be there.
            guard endedReason == nil else { return }
            // With nothing from the server since the last PING, only once per allowed interval,
            // so a connection that went dead after answering one is still found.
            guard receivedPayloadSincePing || lastPingSentAt.map({ ContinuousClock.now - $0 >= options.minimumPingIntervalWithoutData }) ?? true else { return }
            sendPing(for: purpose)
        }
    }

    /// Under the lock.
    private func sendPing(for purpose: String) {
        guard outstandingPing == nil else { return }
        receivedPayloadSincePing = false
        lastPingSentAt = .now
        pingCounter += 1
        outstandingPing = pingCounter
        core.ping(pingCounter)
        flushOutput()
        let timeout = options.keepaliveTimeout
        pingTimeoutTimer = schedule(after: timeout) {
            $0.abort(HTTP2ProtocolViolation(.noError, "\(purpose) unanswered within \(timeout)"))
        }
    }

    /// One of the connection's timers, holding the driver strongly: every one is cancelled
    /// (its closure released) when the connection ends, and none is scheduled after (nil
    /// then: the write just before may have ended it), so none outlives the connection. A
    /// weak reference would give the driver a side table, which makes every retain and
    /// release of it, several on every call, several times dearer. Under the lock.
    private func schedule(after delay: Duration, _ body: @escaping @Sendable (HTTP2ChannelDriver) -> Void) -> LoopTimer? {
        guard endedReason == nil else { return nil }
        return loop.schedule(after: delay) { body(self) }
    }

    private func finish(_ reason: String) {
        guard endedReason == nil else { return }
        endedReason = reason
        for timer in [settingsTimer, keepaliveTimer, pingTimeoutTimer, closeTimer, idleTimer] { timer?.cancel() }
        // It holds the driver: a write still queued holds its own reference until it drains.
        writeDrainedHandler = nil
        for pending in waiting.removeAll() { effects.append(.run { pending.opened(.failure(.connectionClosed)) }) }
        // After the closures the core gave each stream (a stream the peer never processed
        // must hear so), whoever is left hears that the connection ended.
        effects.append(.run { [self] in
            let left = lock.withLock {
                defer { delegates.removeAll() }
                return delegates.values
            }
            for delegate in left { delegate.streamClosed(.connectionEnded(reason)) }
        })
        wentAway()
        establishedHandlers = []
        let handlers = closeHandlers
        closeHandlers = []
        for handler in handlers { effects.append(.run { handler(reason) }) }
        let failed = readCore { $0.failure.map { $0.code != .noError } ?? false }
        // A peer that has gone away too opens nothing more: what it may still send (a late
        // acknowledgement) a socket's own linger reads after our FIN. Lingering here as well
        // kept both ends waiting for each other until one linger ran out. A channel that
        // does not linger itself (Network.framework's) still gets this one.
        let (weSaidGoodbye, peerSaidGoodbye) = readCore { ($0.goAwaySent != nil, $0.goAwayReceived != nil) }
        let saidGoodbye = weSaidGoodbye && !(peerSaidGoodbye && channel.lingersOnClose)
        if failed || saidGoodbye {
            // After a protocol error, or our own GOAWAY (the peer may have opened streams
            // before it read it), the peer is often still sending. Closing with its bytes
            // unread would answer them with a TCP reset, which can destroy our GOAWAY before
            // the peer reads it (and with it the news that those streams were never
            // processed, so safe to retry): keep reading (and dropping) for a moment first.
            if readingPaused {
                readingPaused = false
                channel.setReading(true)
            }
            lingerTimer = loop.schedule(after: options.lingerAfterError) { [channel] in channel.closeAfterFlushing(timeout: .seconds(1)) }
        } else {
            channel.closeAfterFlushing(timeout: .seconds(1))
        }
    }
}

extension Array {
    /// Reverses the elements by swapping them in the array's buffer: the standard library's
    /// `reverse()` cost about 170 instructions for a list of two effects.
    fileprivate mutating func reverseByMoving() {
        guard count > 1 else { return }
        withUnsafeMutableBufferPointer { buffer in
            var low = 0, high = buffer.count - 1
            while low < high {
                buffer.swapAt(low, high)
                low += 1
                high -= 1
            }
        }
    }
}
