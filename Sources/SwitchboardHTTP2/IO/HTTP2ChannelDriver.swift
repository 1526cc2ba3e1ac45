import Foundation
import SwitchboardIO

/// Runs one HTTP/2 connection over a byte channel on its event loop: feeds what the
/// channel reads to the sans-IO ``HTTP2Connection``, writes what it produces, routes each
/// stream's events to its delegate, and keeps the timers (SETTINGS acknowledgement,
/// keepalive PING, graceful close). The core is touched only on the loop; the methods
/// callers use from elsewhere hop onto it.
package final class HTTP2ChannelDriver: ChannelDelegate, @unchecked Sendable {
    package let channel: any ByteChannel
    package var loop: EventLoop { channel.loop }
    package let role: HTTP2Connection.Role
    package let options: HTTP2ConnectionOptions
    private let acceptor: (any HTTP2StreamAcceptor)?

    // Loop-confined.
    private var core: HTTP2Connection
    private var delegates: [UInt32: any HTTP2StreamDelegate] = [:]
    private var waiting: [PendingOpen] = []
    private var nextOpenToken: UInt64 = 0
    private var endedReason: String?
    private var closeHandlers: [@Sendable (String) -> Void] = []
    private var goAwayHandlers: [@Sendable () -> Void] = []
    private var settingsTimer: LoopTimer?
    private var keepaliveTimer: LoopTimer?
    private var pingTimeoutTimer: LoopTimer?
    private var closeTimer: LoopTimer?
    private var outstandingPing: UInt64?
    private var pingCounter: UInt64 = 0
    private var readingPaused = false

    // Read from any thread.
    private let lock = NSLock()
    private var snapshot = Snapshot()

    /// What callers on other threads may ask without hopping onto the loop.
    package struct Snapshot: Sendable {
        /// Neither ended nor going away: new streams may be asked for.
        package var isAvailable = true
        /// Ended: nothing more will happen.
        package var isClosed = false
        /// Streams open or waiting to open that this side started.
        package var activeStreams = 0
        /// Why it ended, once it has.
        package var endReason: String?
    }

    private struct PendingOpen {
        let token: UInt64
        let headers: [HPACKHeader]
        let endStream: Bool
        let body: [UInt8]?
        let delegate: any HTTP2StreamDelegate
        let opened: @Sendable (Result<UInt32, HTTP2StreamError>) -> Void
    }

    /// A connection over `channel` (already connected, and past TLS if any); call ``start(takingEarlyBytes:)``.
    package init(channel: any ByteChannel, role: HTTP2Connection.Role, options: HTTP2ConnectionOptions, acceptor: (any HTTP2StreamAcceptor)? = nil) {
        self.channel = channel
        self.role = role
        self.options = options
        self.acceptor = acceptor
        core = HTTP2Connection(role: role, configuration: options.protocolConfiguration)
    }

    package var state: Snapshot { lock.withLock { snapshot } }

    /// Takes over the channel: sends this side's preface and SETTINGS and starts reading.
    /// `takingEarlyBytes` hands over what the channel read before (on the loop).
    package func start(takingEarlyBytes: (@Sendable () -> (bytes: [UInt8], ended: String?))? = nil) {
        loop.executeHere { [self] in
            channel.activate(delegate: self, handshakeDone: nil)
            flushOutput()
            settingsTimer = loop.schedule(after: options.settingsTimeout) { [weak self] in self?.settingsTimedOut() }
            scheduleKeepalive()
            if let early = takingEarlyBytes?() {
                if !early.bytes.isEmpty { early.bytes.withUnsafeBytes { channelRead($0) } }
                if let reason = early.ended { channelEnded(reason: reason); return }
            }
            channel.setReading(true)
        }
    }

    // MARK: Calls from the layer above (any thread)

    /// Opens a stream (client): `opened` gets its id, on the loop, before any of its events
    /// reach `delegate`. Past the peer's MAX_CONCURRENT_STREAMS it waits for a stream to
    /// close; cancel the wait with ``cancelOpen(_:)`` and the returned token.
    /// With `body`, the stream's data (and its end) goes out with the headers, in one write.
    @discardableResult
    package func openStream(headers: [HPACKHeader], endStream: Bool = false, body: [UInt8]? = nil, delegate: any HTTP2StreamDelegate,
                            opened: @escaping @Sendable (Result<UInt32, HTTP2StreamError>) -> Void) -> UInt64 {
        let token = lock.withLock {
            snapshot.activeStreams += 1
            nextOpenToken += 1
            return nextOpenToken
        }
        let pending = PendingOpen(token: token, headers: headers, endStream: endStream, body: body, delegate: delegate, opened: opened)
        loop.executeHere { [self] in open(pending) }
        return token
    }

    /// Gives up on a stream still waiting to open; its `opened` gets ``HTTP2StreamError/connectionClosed``... never: it is dropped silently.
    package func cancelOpen(_ token: UInt64) {
        loop.executeHere { [self] in
            guard let index = waiting.firstIndex(where: { $0.token == token }) else { return }
            waiting.remove(at: index)
            updateSnapshot()
        }
    }

    /// Sends message bytes on a stream (as the windows allow).
    package func sendData(_ bytes: [UInt8], streamID: UInt32, endStream: Bool) {
        loop.executeHere { [self] in
            do throws(HTTP2StreamError) {
                try core.sendData(bytes, streamID: streamID, endStream: endStream)
            } catch {
                streamSendFailed(streamID, error)
            }
            afterCoreCall()
        }
    }

    /// Sends a whole answer in one turn of the loop and one write: headers, then data if
    /// any, then trailers if any (ending the stream), as a gRPC server answers a unary call.
    package func sendResponse(headers: [HPACKHeader], data: [UInt8]?, trailers: [HPACKHeader]?, streamID: UInt32) {
        loop.executeHere { [self] in
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
        loop.executeHere { [self] in
            do throws(HTTP2StreamError) {
                try core.sendHeaders(headers, streamID: streamID, endStream: endStream)
            } catch {
                streamSendFailed(streamID, error)
            }
            afterCoreCall()
        }
    }

    /// Ends a stream at once (CANCEL when the caller gave up); its delegate hears `closed`
    /// with ``HTTP2StreamClosure/resetHere(_:)``.
    package func resetStream(_ streamID: UInt32, code: HTTP2ErrorCode) {
        loop.executeHere { [self] in
            guard let delegate = delegates.removeValue(forKey: streamID) else { return }
            core.resetStream(streamID, code: code)
            delegate.streamClosed(.resetHere(HTTP2ProtocolViolation(code, "reset by this side")))
            afterCoreCall()
            openWaiting()
        }
    }

    /// Runs `handler` once the connection has ended, with why (at once if it already has).
    package func whenClosed(_ handler: @escaping @Sendable (String) -> Void) {
        loop.executeHere { [self] in
            if let endedReason { handler(endedReason) } else { closeHandlers.append(handler) }
        }
    }

    /// Runs `handler` once the connection stops taking new streams (GOAWAY either way, or its end).
    package func whenGoingAway(_ handler: @escaping @Sendable () -> Void) {
        loop.executeHere { [self] in
            if endedReason != nil || core.isGoingAway { handler() } else { goAwayHandlers.append(handler) }
        }
    }

    /// Closes gracefully: GOAWAY, then the socket once open streams finish (or after
    /// ``HTTP2ConnectionOptions/gracefulCloseTimeout``).
    package func close() {
        loop.executeHere { [self] in
            guard endedReason == nil else { return }
            core.goAway()
            wentAway()
            afterCoreCall()
            guard endedReason == nil, closeTimer == nil else { return }
            closeTimer = loop.schedule(after: options.gracefulCloseTimeout) { [weak self] in
                self?.abort(HTTP2ProtocolViolation(.noError, "closed with streams still open"))
            }
        }
    }

    /// Ends the connection at once: GOAWAY with `violation`'s code, every stream fails.
    package func abort(_ violation: HTTP2ProtocolViolation) {
        loop.executeHere { [self] in
            guard endedReason == nil else { return }
            dispatch(core.abort(violation))
            flushOutput()
            channel.closeAfterFlushing(timeout: .seconds(1))
            finish(violation.description)
        }
    }

    // MARK: ChannelDelegate (on the loop)

    package func channelRead(_ bytes: UnsafeRawBufferPointer) {
        guard endedReason == nil else { return }
        dispatch(core.receive(bytes))
        afterCoreCall()
    }

    package func channelEnded(reason: String?) {
        guard endedReason == nil else { return }
        let why = reason ?? "the peer closed the connection"
        dispatch(core.connectionEnded(reason: why))
        finish(why)
    }

    package func channelWriteFailed(_ reason: String) {
        channelEnded(reason: reason)
    }

    // MARK: The loop's side

    private func open(_ pending: PendingOpen) {
        guard endedReason == nil else {
            finishOpen(pending, .failure(.connectionClosed))
            return
        }
        do throws(HTTP2StreamError) {
            let id = try core.openStream(headers: pending.headers, endStream: pending.body == nil && pending.endStream)
            delegates[id] = pending.delegate
            if let body = pending.body {
                do throws(HTTP2StreamError) {
                    try core.sendData(body, streamID: id, endStream: pending.endStream)
                } catch {
                    streamSendFailed(id, error)
                }
            }
            pending.opened(.success(id))
            afterCoreCall()
        } catch .concurrencyLimitReached {
            waiting.append(pending)
        } catch {
            finishOpen(pending, .failure(error))
        }
    }

    private func finishOpen(_ pending: PendingOpen, _ result: Result<UInt32, HTTP2StreamError>) {
        pending.opened(result)
        updateSnapshot()
    }

    private func openWaiting() {
        while !waiting.isEmpty, core.canOpenStream || core.isGoingAway || core.isClosed {
            open(waiting.removeFirst())
        }
    }

    private func dispatch(_ events: [HTTP2Event]) {
        for event in events {
            switch event {
            case let .headers(id, headers, endStream):
                if let delegate = delegates[id] {
                    delegate.streamReceived(headers: headers, endStream: endStream)
                } else if role == .server, let acceptor {
                    let delegate = acceptor.accept(streamID: id, headers: headers, endStream: endStream, on: self)
                    delegates[id] = delegate
                }
            case let .data(id, bytes, endStream):
                delegates[id]?.streamReceived(data: bytes, endStream: endStream)
            case let .streamClosed(id, closure):
                delegates.removeValue(forKey: id)?.streamClosed(closure)
            case .remoteSettingsChanged:
                break
            case let .pingAcknowledged(opaque):
                if opaque == outstandingPing {
                    outstandingPing = nil
                    pingTimeoutTimer?.cancel()
                    pingTimeoutTimer = nil
                }
            case .goAway:
                wentAway()
            case .connectionFailed:
                // Closed by `finish` once the GOAWAY is written.
                break
            }
        }
    }

    /// After anything that may have changed the core: write its output, settle timers,
    /// let waiting streams open, close once a GOAWAY has run its course.
    private func afterCoreCall() {
        dispatch(core.takeEvents())
        flushOutput()
        if settingsTimer != nil, core.pendingLocalSettingsAcks == 0 {
            settingsTimer?.cancel()
            settingsTimer = nil
        }
        openWaiting()
        if let failure = core.failure, endedReason == nil {
            finish(failure.description)
            return
        }
        if core.isGoingAway, core.isQuiescent, endedReason == nil {
            flushOutput()
            channel.closeAfterFlushing(timeout: .seconds(1))
            finish("the connection went away")
            return
        }
        updateSnapshot()
    }

    private func flushOutput() {
        guard core.hasOutput else { return }
        let bytes = core.takeOutput()
        let result = channel.write(bytes) { [weak self] _ in
            guard let self else { return }
            loop.executeHere { self.outputDrained() }
        }
        if case let .failed(reason) = result {
            channelEnded(reason: reason)
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
        guard readingPaused, endedReason == nil, channel.queuedByteCount <= options.maxQueuedOutputBytes / 2 else { return }
        readingPaused = false
        channel.setReading(true)
    }

    private func streamSendFailed(_ id: UInt32, _ error: HTTP2StreamError) {
        guard let delegate = delegates.removeValue(forKey: id) else { return }
        core.resetStream(id, code: .internalError)
        delegate.streamClosed(.resetHere(HTTP2ProtocolViolation(.internalError, error.description)))
    }

    private func wentAway() {
        let handlers = goAwayHandlers
        goAwayHandlers = []
        for handler in handlers { handler() }
        openWaiting()
    }

    private func settingsTimedOut() {
        settingsTimer = nil
        guard endedReason == nil, core.pendingLocalSettingsAcks > 0 else { return }
        abort(HTTP2ProtocolViolation(.settingsTimeout, "SETTINGS not acknowledged within \(options.settingsTimeout)"))
    }

    private func scheduleKeepalive() {
        guard let interval = options.keepaliveInterval, endedReason == nil else { return }
        keepaliveTimer = loop.schedule(after: interval) { [weak self] in self?.sendKeepalive() }
    }

    private func sendKeepalive() {
        guard endedReason == nil else { return }
        if outstandingPing == nil {
            pingCounter += 1
            outstandingPing = pingCounter
            core.ping(pingCounter)
            flushOutput()
            pingTimeoutTimer = loop.schedule(after: options.keepaliveTimeout) { [weak self] in
                self?.abort(HTTP2ProtocolViolation(.noError, "keepalive PING unanswered within \(self?.options.keepaliveTimeout ?? .zero)"))
            }
        }
        scheduleKeepalive()
    }

    private func finish(_ reason: String) {
        guard endedReason == nil else { return }
        endedReason = reason
        for timer in [settingsTimer, keepaliveTimer, pingTimeoutTimer, closeTimer] { timer?.cancel() }
        let stillWaiting = waiting
        waiting = []
        for pending in stillWaiting { pending.opened(.failure(.connectionClosed)) }
        for (_, delegate) in delegates { delegate.streamClosed(.connectionEnded(reason)) }
        delegates = [:]
        updateSnapshot()
        wentAway()
        let handlers = closeHandlers
        closeHandlers = []
        for handler in handlers { handler(reason) }
        if let failure = core.failure, failure.code != .noError {
            // After a protocol error the peer is often still sending. Closing with its bytes
            // unread would answer them with a TCP reset, which can destroy our GOAWAY before
            // the peer reads it: keep reading (and dropping) for a moment first.
            if readingPaused {
                readingPaused = false
                channel.setReading(true)
            }
            _ = loop.schedule(after: options.lingerAfterError) { [channel] in channel.closeAfterFlushing(timeout: .seconds(1)) }
        } else {
            channel.closeAfterFlushing(timeout: .seconds(1))
        }
    }


    private func updateSnapshot() {
        let now = Snapshot(isAvailable: endedReason == nil && !core.isGoingAway, isClosed: endedReason != nil,
                           activeStreams: core.openLocalStreamCount + waiting.count, endReason: endedReason)
        lock.withLock { snapshot = now }
    }
}
