extension HTTP2Connection {
    /// Opens a stream (client only) by sending its request headers; returns its id.
    /// Throws ``HTTP2StreamError/concurrencyLimitReached`` when the peer's limit is reached
    /// (wait for a `streamClosed` event and try again) and ``HTTP2StreamError/goingAway``
    /// when a new connection is needed.
    public mutating func openStream(headers: [HPACKHeader], endStream: Bool = false) throws(HTTP2StreamError) -> UInt32 {
        guard !isClosed else { throw .connectionClosed }
        guard !isGoingAway, nextLocalStreamID <= 0x7fff_ffff else { throw .goingAway }
        guard UInt32(locallyInitiatedCount) < remoteSettings.maxConcurrentStreams else { throw .concurrencyLimitReached }
        try checkSize(of: headers)
        let id = nextLocalStreamID
        nextLocalStreamID += 2
        streams[id] = HTTP2StreamState(id: id, isLocallyInitiated: true, phase: endStream ? .halfClosedLocal : .open,
                                       headers: .awaitingInitial, sendWindow: Int(remoteSettings.initialWindowSize),
                                       receiveWindow: initialReceiveWindow)
        locallyInitiatedCount += 1
        writeHeaderBlock(headers, streamID: id, endStream: endStream)
        return id
    }

    /// Sends headers on an open stream: a server's response, or trailers (which must end
    /// the stream). Trailers given while data still waits for window go out after it.
    public mutating func sendHeaders(_ headers: [HPACKHeader], streamID id: UInt32, endStream: Bool) throws(HTTP2StreamError) {
        guard !isClosed else { throw .connectionClosed }
        guard var stream = streams[id] else { throw .unknownStream(id) }
        guard stream.canSend else { throw .sendSideClosed(id) }
        try checkSize(of: headers)
        if stream.pendingByteCount > 0 {
            guard endStream else { throw .headersAfterData(id) }
            pendingOutput[id, default: HTTP2PendingOutput()].trailers = headers
            stream.hasPendingTrailers = true
            stream.pendingEnd = true
            streams[id] = stream
            return
        }
        writeHeaderBlock(headers, streamID: id, endStream: endStream)
        if endStream { sentEnd(of: id) }
    }

    /// Whether `count` bytes written on a stream opened now would be refused with
    /// ``HTTP2StreamError/connectionSendBacklogFull(_:queued:limit:)``: what the windows
    /// would not let out at once would take the bytes waiting for window past
    /// ``HTTP2ConnectionConfiguration/maxPendingConnectionBytes``. A client waits to open such
    /// a stream until the backlog drains, as it waits for a stream slot.
    public func wouldExceedSendBacklog(newStreamBytes count: Int) -> Bool {
        let sendable = max(0, min(Int(remoteSettings.initialWindowSize), connectionSendWindow))
        let held = max(0, count - sendable)
        return held > 0 && pendingSendBytes > 0 && pendingSendBytes + held > configuration.maxPendingConnectionBytes
    }

    /// Queues message bytes on an open stream and sends as much as the windows allow now;
    /// the rest goes out as the peer opens its windows. Throws
    /// ``HTTP2StreamError/sendBacklogFull(_:queued:limit:)`` or
    /// ``HTTP2StreamError/connectionSendBacklogFull(_:queued:limit:)``, writing nothing, when
    /// what would wait passes ``HTTP2ConnectionConfiguration/maxPendingStreamBytes`` or
    /// ``HTTP2ConnectionConfiguration/maxPendingConnectionBytes``.
    public mutating func sendData(_ bytes: [UInt8], streamID id: UInt32, endStream: Bool) throws(HTTP2StreamError) {
        guard !isClosed else { throw .connectionClosed }
        guard var stream = streams[id] else { throw .unknownStream(id) }
        guard stream.canSend else { throw .sendSideClosed(id) }
        let backlog = stream.pendingByteCount
        if backlog > 0, backlog + bytes.count > configuration.maxPendingStreamBytes {
            throw .sendBacklogFull(id, queued: backlog, limit: configuration.maxPendingStreamBytes)
        }
        // What this write would add to the bytes waiting for window: the windows let the
        // stream's backlog out first, then as much of these bytes as they still allow.
        let sendable = max(0, min(stream.sendWindow, connectionSendWindow))
        let held = max(0, backlog + bytes.count - sendable) - backlog
        if held > 0, pendingSendBytes > 0, pendingSendBytes + held > configuration.maxPendingConnectionBytes {
            throw .connectionSendBacklogFull(id, queued: pendingSendBytes, limit: configuration.maxPendingConnectionBytes)
        }
        stream.pendingEnd = endStream
        if backlog == 0 {
            // Nothing waits before these bytes: what the windows allow goes out now, from the
            // caller's array, and only the rest is kept.
            let sent = send(bytes[...], of: &stream, endingStream: endStream)
            if sent < bytes.count {
                pendingOutput[id, default: HTTP2PendingOutput()].bytes = bytes
                pendingOutput[id, default: HTTP2PendingOutput()].offset = sent
                stream.pendingByteCount = bytes.count - sent
                pendingSendBytes += bytes.count - sent
            } else if endStream && !bytes.isEmpty {
                // Sent with END_STREAM on its last frame (no bytes: an empty DATA ends it, below).
                stream.pendingEnd = false
                streams[id] = stream
                sentEnd(of: id)
                return
            }
            streams[id] = stream
            if stream.pendingByteCount > 0 {
                blocked.insert(id)
            } else if stream.pendingEnd {
                flush(id)
            }
            return
        }
        var queued = pendingOutput.removeValue(forKey: id) ?? HTTP2PendingOutput()
        // The part already sent goes once it is half the buffer, so a stream that is always a
        // little short of window does not keep everything it ever sent.
        if queued.offset > 0, queued.offset * 2 >= queued.bytes.count {
            queued.bytes.removeFirst(queued.offset)
            queued.offset = 0
        }
        queued.bytes += bytes
        pendingOutput[id] = queued
        stream.pendingByteCount += bytes.count
        pendingSendBytes += bytes.count
        streams[id] = stream
        flush(id)
    }

    /// Writes as much of `bytes` as the windows and the frame size allow, each DATA frame
    /// taking its share of the windows; the last frame carries END_STREAM if `endingStream`
    /// and it ends `bytes` with no trailers to follow. Returns how many bytes went out.
    private mutating func send(_ bytes: ArraySlice<UInt8>, of stream: inout HTTP2StreamState, endingStream: Bool) -> Int {
        let frameLimit = Int(remoteSettings.maxFrameSize)
        var sent = 0
        while sent < bytes.count {
            let allowed = min(stream.sendWindow, connectionSendWindow, frameLimit, bytes.count - sent)
            guard allowed > 0 else { break }
            let start = bytes.startIndex + sent
            let last = sent + allowed == bytes.count && endingStream && !stream.hasPendingTrailers
            HTTP2FrameEncoder.writeData(bytes[start..<(start + allowed)], streamID: stream.id, endStream: last, into: &output)
            sentPayloadSincePing = true
            sent += allowed
            stream.sendWindow -= allowed
            connectionSendWindow -= allowed
        }
        return sent
    }

    /// Ends a stream at once with RST_STREAM (CANCEL when the caller gave up). Nothing more
    /// is reported for it; its late frames are dropped.
    public mutating func resetStream(_ id: UInt32, code: HTTP2ErrorCode) {
        guard !isClosed, streams[id] != nil else { return }
        HTTP2FrameEncoder.writeRSTStream(code, streamID: id, into: &output)
        recentlyReset.insert(id)
        removeStream(id)
        blocked.remove(id)
    }

    /// Resets a stream this side cannot go on with because of how the peer behaves (it
    /// withholds the window that answers wait for): RST_STREAM with `code`, as
    /// ``resetStream(_:code:)`` does, and a stream the peer opened is charged to its reset
    /// budget (``HTTP2ConnectionConfiguration/resetLimit``) as a reset for its stream errors
    /// is, so opening streams that end so costs the peer as much as resetting them. Past the
    /// budget the connection ends with ENHANCE_YOUR_CALM; its events come from ``takeEvents()``.
    package mutating func resetStreamChargingPeer(_ id: UInt32, code: HTTP2ErrorCode, at now: ContinuousClock.Instant = .now) {
        guard !isClosed, streams[id] != nil else { return }
        let overBudget = !isLocallyInitiated(id) && !resets.take(at: now)
        resetStream(id, code: code)
        if overBudget { fail(HTTP2ProtocolViolation(.enhanceYourCalm, "too many of the peer's streams reset for its errors")) }
    }

    /// Sends a PING; its answer arrives as ``HTTP2Event/pingAcknowledged(_:)``.
    public mutating func ping(_ opaque: UInt64) {
        guard !isClosed else { return }
        HTTP2FrameEncoder.writePing(opaque, ack: false, into: &output)
    }

    /// Goes away at once: GOAWAY names the last stream the peer opened, and those streams
    /// may all finish; no new stream is accepted or opened. Close once ``isQuiescent``.
    ///
    /// A stream the peer opened before this GOAWAY reaches it is refused (the peer may retry
    /// it elsewhere); ``beginGracefulShutdown()`` serves such streams instead.
    public mutating func goAway(code: HTTP2ErrorCode = .noError, debugData: [UInt8] = []) {
        guard !isClosed, goAwaySent == nil || drainingPing != nil else { return }
        drainingPing = nil
        writeFinalGoAway(code: code, debugData: debugData)
    }

    /// Shuts down without refusing a stream the peer is opening right now, as RFC 9113 §6.8
    /// advises a server: a GOAWAY naming the highest possible stream tells the peer to open
    /// no more, a PING follows, and its answer (a round trip later, so every stream the peer
    /// opened before it saw the GOAWAY has arrived) sends the GOAWAY naming the last stream
    /// really opened. The connection is not ``isQuiescent`` in between. A client, whose peer
    /// opens no streams, goes away at once, as does a server whose peer has gone away already.
    /// The layer above bounds the wait for the answer.
    public mutating func beginGracefulShutdown() {
        guard !isClosed, goAwaySent == nil else { return }
        // A peer that has gone away already sent every stream it opened before its GOAWAY,
        // and one that is closing may never answer a PING: no round trip to wait for.
        guard role == .server, goAwayReceived == nil else {
            goAway()
            return
        }
        goAwaySent = 0x7fff_ffff
        HTTP2FrameEncoder.write(HTTP2Frame(streamID: 0, payload: .goAway(lastStreamID: 0x7fff_ffff, code: .noError, debugData: [])), into: &output)
        drainingPing = Self.drainingPingOpaque
        HTTP2FrameEncoder.writePing(Self.drainingPingOpaque, ack: false, into: &output)
    }

    /// Not a number the layer above counts its keepalive PINGs with.
    static let drainingPingOpaque: UInt64 = 0x4452_4149_4E49_4E47

    mutating func writeFinalGoAway(code: HTTP2ErrorCode, debugData: [UInt8]) {
        // Never above an earlier GOAWAY's id (RFC 9113 §6.8); streams ignored past it count
        // in `highestRemoteStreamID` but were never processed.
        let last = min(goAwaySent ?? .max, highestRemoteStreamID)
        goAwaySent = last
        HTTP2FrameEncoder.write(HTTP2Frame(streamID: 0, payload: .goAway(lastStreamID: last, code: code, debugData: debugData)), into: &output)
    }

    /// Ends the connection from this side with a GOAWAY carrying `violation`'s code: for
    /// problems found above the framing (a SETTINGS acknowledgement that never came, say).
    /// Returns the streams' closing events.
    public mutating func abort(_ violation: HTTP2ProtocolViolation) -> [HTTP2Event] {
        fail(violation)
        var taken: [HTTP2Event] = []
        swap(&taken, &events)
        return taken
    }

    // MARK: Writing

    private mutating func checkSize(of headers: [HPACKHeader]) throws(HTTP2StreamError) {
        let size = measuredLists.size(of: headers)
        guard size <= Int(remoteSettings.maxHeaderListSize) else {
            throw .headerListTooLarge(size: size, limit: remoteSettings.maxHeaderListSize)
        }
        measuredLists.keep(headers, size: size)
    }

    /// Encodes now, so the HPACK table changes in the order blocks go on the wire.
    private mutating func writeHeaderBlock(_ headers: [HPACKHeader], streamID: UInt32, endStream: Bool) {
        sentPayloadSincePing = true
        HTTP2FrameEncoder.writeHeaderBlock(streamID: streamID, endStream: endStream, maxFrameSize: Int(remoteSettings.maxFrameSize),
                                           into: &output) { headerEncoder.encode(headers, into: &$0) }
    }

    /// Sends what the windows allow of one stream's pending data, then its END_STREAM
    /// (as trailers or an empty DATA) once nothing is left.
    mutating func flush(_ id: UInt32) {
        guard var stream = streams[id] else { return }
        if stream.pendingByteCount > 0 {
            var queued = pendingOutput[id] ?? HTTP2PendingOutput()
            let sent = send(queued.bytes[queued.offset...], of: &stream, endingStream: stream.pendingEnd)
            queued.offset += sent
            stream.pendingByteCount -= sent
            pendingSendBytes -= sent
            if stream.pendingByteCount > 0 {
                blocked.insert(id)
                pendingOutput[id] = queued
                streams[id] = stream
                return
            }
            queued.bytes = []
            queued.offset = 0
            pendingOutput[id] = queued.trailers == nil ? nil : queued
            if stream.pendingEnd && !stream.hasPendingTrailers {
                // The last DATA frame carried END_STREAM.
                stream.pendingEnd = false
                streams[id] = stream
                sentEnd(of: id)
                return
            }
        }
        if stream.hasPendingTrailers {
            let trailers = pendingOutput.removeValue(forKey: id)?.trailers ?? []
            stream.hasPendingTrailers = false
            stream.pendingEnd = false
            streams[id] = stream
            writeHeaderBlock(trailers, streamID: id, endStream: true)
            sentEnd(of: id)
            return
        }
        if stream.pendingEnd {
            stream.pendingEnd = false
            streams[id] = stream
            HTTP2FrameEncoder.writeData([], streamID: id, endStream: true, into: &output)
            sentEnd(of: id)
            return
        }
        streams[id] = stream
    }

    /// Gives waiting streams the window that just opened, oldest first.
    mutating func flushBlocked() {
        guard !blocked.isEmpty else { return }
        blockedStreamWalks += 1
        // Each stream still short of window puts itself back, keeping the order.
        for id in blocked.takeAll() { flush(id) }
    }

    /// This side ended its half of a stream.
    private mutating func sentEnd(of id: UInt32) {
        guard var stream = streams[id] else { return }
        blocked.remove(id)
        if stream.phase == .halfClosedRemote {
            removeStream(id)
            emit(.streamClosed(streamID: id, .completed))
        } else {
            stream.phase = .halfClosedLocal
            streams[id] = stream
        }
    }

    /// Events produced by calls made outside `receive(_:at:)` (a stream that completes
    /// because this side sent its end, for instance); collect them after sending.
    public mutating func takeEvents() -> [HTTP2Event] {
        // An empty list keeps its storage for the next events.
        if events.isEmpty { return [] }
        var taken: [HTTP2Event] = []
        swap(&taken, &events)
        return taken
    }
}
