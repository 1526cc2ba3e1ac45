/// An HTTP/2 connection (RFC 9113) with no socket, client or server: bytes received go in
/// through `receive(_:at:)` and come out as ``HTTP2Event``s; what to send accumulates
/// in ``takeOutput()``. Streams, both flow-control windows, SETTINGS, PING, GOAWAY and
/// every frame-level rule live here, so all of it is tested without I/O.
///
/// Receive windows are refilled as data is handed up: the layer above bounds what it
/// buffers (a gRPC message's maximum size), and the windows bound what is in flight.
public struct HTTP2Connection: Sendable {
    /// Which end of the connection this is.
    public enum Role: Sendable, Hashable {
        /// Opens streams (odd ids) and sends the connection preface.
        case client
        /// Accepts the client's streams and expects its preface.
        case server
    }

    /// Which end this is.
    public let role: Role
    /// The limits this side enforces and advertises.
    public let configuration: HTTP2ConnectionConfiguration
    /// The settings the peer has sent (the RFC's defaults until its first SETTINGS).
    public private(set) var remoteSettings = HTTP2Settings()

    var frameDecoder: HTTP2FrameDecoder
    var headerDecoder: HPACKDecoder
    var headerEncoder: HPACKEncoder
    /// Received lists found valid lately, so a list the decoder recalls is not checked again.
    var validatedLists = ValidatedHeaderLists()
    var streams = HTTP2StreamTable()
    /// Output of streams whose state says they have some (``HTTP2StreamState/pendingByteCount``,
    /// ``HTTP2StreamState/hasPendingTrailers``): absent for a stream that sends at once.
    var pendingOutput: [UInt32: HTTP2PendingOutput] = [:]
    /// Bytes every stream holds waiting for window together: the sum of their
    /// ``HTTP2StreamState/pendingByteCount``s, capped by
    /// ``HTTP2ConnectionConfiguration/maxPendingConnectionBytes``.
    package internal(set) var pendingSendBytes = 0
    var locallyInitiatedCount = 0
    var remotelyInitiatedCount = 0
    var nextLocalStreamID: UInt32
    var highestRemoteStreamID: UInt32 = 0
    var recentlyReset: RecentStreamIDs
    /// What this side may still send on the connection as a whole.
    var connectionSendWindow = Int(HTTP2FlowControl.defaultWindow)
    /// What the peer may still send on the connection as a whole.
    var connectionReceiveWindow = Int(HTTP2FlowControl.defaultWindow)
    var connectionUnacknowledged = 0
    /// Streams with data that waits for window, in the order they blocked.
    var blocked = HTTP2BlockedStreams()
    /// How many times the waiting streams were walked for window that opened: tests count
    /// that a flood of window updates cannot make walks that move nothing.
    var blockedStreamWalks = 0
    var output: [UInt8] = []
    /// The sizes of the last header lists sent, measured once per array.
    var measuredLists = MeasuredHeaderLists()
    var events: [HTTP2Event] = []
    var headerBlock: PartialHeaderBlock?
    var hasReceivedSettings = false
    var pendingLocalSettingsAcks = 0
    var hasAppliedLocalTableSize = false
    /// Our SETTINGS_INITIAL_WINDOW_SIZE is acknowledged: the peer applies it from then on.
    var hasAppliedLocalInitialWindow = false

    /// The receive window a new stream starts with. Until the peer acknowledges our SETTINGS
    /// it may still count on the default (65,535) or already on ours, so the larger of the two:
    /// a client that opens streams before it reads a server's smaller window sends up to the
    /// default, which is no FLOW_CONTROL_ERROR (RFC 9113 §6.5.3, §6.9.2; found in a test run
    /// that raced our SETTINGS).
    var initialReceiveWindow: Int {
        let configured = Int(configuration.initialStreamWindowSize)
        return hasAppliedLocalInitialWindow ? configured : max(configured, Int(HTTP2FlowControl.defaultWindow))
    }
    /// The last stream id this side announced in a GOAWAY.
    var goAwaySent: UInt32?
    /// The last stream id the peer announced in a GOAWAY.
    var goAwayReceived: UInt32?
    /// The PING whose answer ends a graceful shutdown's first phase (``beginGracefulShutdown()``).
    var drainingPing: UInt64?
    var failure: HTTP2ProtocolViolation?
    var resets: HTTP2TokenBucket
    var controlFrames: HTTP2TokenBucket
    /// This side has sent HEADERS or DATA since the peer's last PING: the next PING is then
    /// free of the control-frame budget, as gRPC servers count pings (a client's
    /// bandwidth-probing pings follow the data it receives, thousands a second when busy).
    var sentPayloadSincePing = false
    /// When the bytes being handled arrived.
    var receivedAt = ContinuousClock.now
    /// The peer made this side reset more of its streams than `resets` allows (each reset
    /// frees a concurrency slot, so errors on purpose would be a reset flood that never
    /// sends RST_STREAM itself).
    var forcedResetsExceeded = false

    /// A header block still waiting for its CONTINUATION frames.
    struct PartialHeaderBlock: Sendable {
        let streamID: UInt32
        let endStream: Bool
        /// A slice of the frame decoder's buffer while the block is handled in the read that
        /// brought it; copied to storage of its own before it waits for CONTINUATION frames.
        var fragment: ArraySlice<UInt8>
        var continuations = 0
    }

    /// A connection at its start; the output already holds what this side sends first
    /// (the client preface, SETTINGS, and a WINDOW_UPDATE that opens the connection window).
    public init(role: Role, configuration: HTTP2ConnectionConfiguration = .init()) {
        self.role = role
        var configuration = configuration
        // Values the RFC does not allow are brought within it: a stream window of 0 would let
        // nothing through, a frame size under 16,384 would refuse frames every peer may send.
        configuration.initialStreamWindowSize = min(max(configuration.initialStreamWindowSize, 1), HTTP2FlowControl.maximumWindow)
        configuration.maxFrameSize = min(max(configuration.maxFrameSize, HTTP2FrameLimits.minimumMaxFrameSize), HTTP2FrameLimits.maximumMaxFrameSize)
        // A table size is a SETTINGS value, 32 bits: `Int.max` ("whatever the peer allows")
        // would trap where it meets the peer's.
        configuration.encoderTableSizeCap = min(max(configuration.encoderTableSizeCap, 0), Int(UInt32.max))
        self.configuration = configuration
        frameDecoder = HTTP2FrameDecoder(maxFrameSize: configuration.maxFrameSize, expectsPreface: role == .server)
        // The peer may use the RFC's 4,096 until it has acknowledged our SETTINGS.
        headerDecoder = HPACKDecoder(maximumTableSize: Int(HTTP2Settings().headerTableSize), maximumHeaderListSize: configuration.maxHeaderListSize)
        headerEncoder = HPACKEncoder(tableSizeCap: configuration.encoderTableSizeCap)
        // The encoder starts from the RFC's 4,096 until the peer's SETTINGS say otherwise.
        headerEncoder.setPeerMaximumTableSize(Int(remoteSettings.headerTableSize))
        nextLocalStreamID = role == .client ? 1 : 2
        recentlyReset = RecentStreamIDs(capacity: configuration.recentlyResetStreamMemory)
        resets = HTTP2TokenBucket(configuration.resetLimit)
        controlFrames = HTTP2TokenBucket(configuration.controlFrameLimit)
        if role == .client { output += HTTP2ConnectionPreface.bytes }
        var settings = [
            HTTP2Setting(.enablePush, 0),
            HTTP2Setting(.maxConcurrentStreams, configuration.maxConcurrentStreams),
            HTTP2Setting(.initialWindowSize, min(configuration.initialStreamWindowSize, HTTP2FlowControl.maximumWindow)),
            HTTP2Setting(.maxFrameSize, min(max(configuration.maxFrameSize, HTTP2FrameLimits.minimumMaxFrameSize), HTTP2FrameLimits.maximumMaxFrameSize)),
            HTTP2Setting(.maxHeaderListSize, UInt32(clamping: configuration.maxHeaderListSize)),
        ]
        if configuration.headerTableSize != 4096 { settings.append(HTTP2Setting(.headerTableSize, configuration.headerTableSize)) }
        HTTP2FrameEncoder.write(HTTP2Frame(streamID: 0, payload: .settings(settings, ack: false)), into: &output)
        pendingLocalSettingsAcks = 1
        let target = Int(min(configuration.connectionWindowSize, HTTP2FlowControl.maximumWindow))
        if target > connectionReceiveWindow {
            HTTP2FrameEncoder.writeWindowUpdate(UInt32(target - connectionReceiveWindow), streamID: 0, into: &output)
            connectionReceiveWindow = target
        }
    }

    // MARK: State the layer above reads

    /// Whether the connection has failed or finished; nothing more is sent or received.
    public var isClosed: Bool { failure != nil }
    /// Whether a GOAWAY went either way: no new stream may open.
    public var isGoingAway: Bool { goAwaySent != nil || goAwayReceived != nil }
    /// Whether it is going away and no stream is left: time to close the socket.
    public var isQuiescent: Bool { isClosed || (isGoingAway && drainingPing == nil && streams.isEmpty) }
    /// Streams open now that this side opened.
    public var openLocalStreamCount: Int { locallyInitiatedCount }
    /// Streams open now that the peer opened.
    public var openRemoteStreamCount: Int { remotelyInitiatedCount }
    /// Whether ``openStream(headers:endStream:)`` would succeed now.
    public var canOpenStream: Bool {
        !isClosed && !isGoingAway && nextLocalStreamID <= 0x7fff_ffff && UInt32(locallyInitiatedCount) < remoteSettings.maxConcurrentStreams
    }
    /// Whether anything waits in ``takeOutput()``.
    public var hasOutput: Bool { !output.isEmpty }
    /// Whether the peer has sent its first SETTINGS (the connection is known to speak HTTP/2).
    public var isEstablished: Bool { hasReceivedSettings }

    /// Everything to write to the peer since the last call, in order.
    public mutating func takeOutput() -> [UInt8] {
        var taken: [UInt8] = []
        swap(&taken, &output)
        return taken
    }

    /// Hands back a buffer from ``takeOutput()`` once its bytes are written, so the next
    /// output reuses its storage instead of allocating (one larger than
    /// ``recycledBufferLimit`` is left to be freed). Hand back only a buffer nothing else
    /// holds: a shared one is copied, which costs what reuse would save.
    public mutating func recycleOutput(_ buffer: inout [UInt8]) {
        Self.recycle(&buffer, into: &output)
    }

    /// Hands back a list from `receive(_:at:)` or ``takeEvents()`` once it has been read,
    /// so the next events reuse its storage.
    public mutating func recycleEvents(_ list: inout [HTTP2Event]) {
        Self.recycle(&list, into: &events, limit: Self.recycledEventLimit)
    }

    /// The largest output buffer kept for reuse, in bytes: a large message's buffer is not
    /// held for the connection's life.
    public static let recycledBufferLimit = 64 * 1024
    /// The longest event list kept for reuse.
    public static let recycledEventLimit = 256

    private static func recycle<Element>(_ buffer: inout [Element], into slot: inout [Element], limit: Int = recycledBufferLimit) {
        guard slot.isEmpty, slot.capacity < buffer.capacity, buffer.capacity <= limit else { return }
        buffer.removeAll(keepingCapacity: true)
        swap(&buffer, &slot)
    }

    /// Queues an event. The list handed over by `takeEvents()` comes back through
    /// `recycleEvents(_:)`; without one, the first event makes room for a call's usual few
    /// (headers, data, close) at once.
    mutating func emit(_ event: HTTP2Event) {
        if events.capacity == 0 { events.reserveCapacity(4) }
        events.append(event)
    }

    // MARK: Receiving

    /// Handles bytes from the peer and returns what they meant. After a protocol violation
    /// the output ends with GOAWAY and the last event is `connectionFailed`;
    /// later bytes are ignored.
    public mutating func receive(_ bytes: UnsafeRawBufferPointer, at now: ContinuousClock.Instant = .now) -> [HTTP2Event] {
        guard failure == nil else { return [] }
        frameDecoder.append(bytes)
        receivedAt = now
        do throws(HTTP2ProtocolViolation) {
            while failure == nil, let frame = try frameDecoder.nextFrame() {
                try handle(frame, at: now)
                if forcedResetsExceeded {
                    throw HTTP2ProtocolViolation(.enhanceYourCalm, "too many of the peer's streams reset for its errors")
                }
            }
        } catch {
            fail(error)
        }
        return takeEvents()
    }

    /// Handles bytes from the peer, as the buffer-pointer variant does.
    public mutating func receive(_ bytes: [UInt8], at now: ContinuousClock.Instant = .now) -> [HTTP2Event] {
        bytes.withUnsafeBytes { receive($0, at: now) }
    }

    /// The peer's byte stream ended (the socket closed): every stream ends.
    public mutating func connectionEnded(reason: String) -> [HTTP2Event] {
        guard failure == nil else { return [] }
        failure = HTTP2ProtocolViolation(.noError, reason)
        closeAllStreams(.connectionEnded(reason))
        var taken: [HTTP2Event] = []
        swap(&taken, &events)
        return taken
    }

    private mutating func handle(_ frame: consuming HTTP2Frame, at now: ContinuousClock.Instant) throws(HTTP2ProtocolViolation) {
        // Only the id: a copy of the block held here would make the append below copy it all.
        if let blockStreamID = headerBlock?.streamID {
            guard case let .continuation(fragment, endHeaders) = frame.payload, frame.streamID == blockStreamID else {
                throw HTTP2ProtocolViolation(.protocolError, "\(frame.type) on stream \(frame.streamID) inside a header block of stream \(blockStreamID)")
            }
            try continueHeaderBlock(fragment, endHeaders: endHeaders, at: now)
            return
        }
        guard hasReceivedSettings || frame.type == .settings else {
            throw HTTP2ProtocolViolation(.protocolError, "the peer's first frame was \(frame.type), not SETTINGS")
        }
        // RFC 9113 §3.4: the peer's own SETTINGS come first; an acknowledgement before them
        // would pass for the preface and stop the wait for it.
        if !hasReceivedSettings, case .settings(_, ack: true) = frame.payload {
            throw HTTP2ProtocolViolation(.protocolError, "the peer's first frame acknowledged SETTINGS instead of sending its own")
        }
        switch frame.payload {
        case let .data(bytes, endStream, flowControlledLength):
            try receiveData(bytes, streamID: frame.streamID, endStream: endStream, flowControlledLength: flowControlledLength, at: now)
        case let .headers(fragment, endStream, endHeaders):
            try startHeaderBlock(PartialHeaderBlock(streamID: frame.streamID, endStream: endStream, fragment: fragment), endHeaders: endHeaders)
        case .priority:
            try spendControlBudget(at: now, on: "PRIORITY")
        case let .rstStream(code):
            try receiveReset(code, streamID: frame.streamID, at: now)
        case let .settings(settings, ack):
            try spendControlBudget(at: now, on: "SETTINGS")
            if ack {
                // An unexpected acknowledgement is harmless; only count the ones owed.
                if pendingLocalSettingsAcks > 0 { pendingLocalSettingsAcks -= 1 }
                if !hasAppliedLocalInitialWindow {
                    // The streams opened meanwhile move to our window by the difference, as a
                    // change of the setting moves every window (RFC 9113 §6.9.2).
                    let before = initialReceiveWindow
                    hasAppliedLocalInitialWindow = true
                    let change = initialReceiveWindow - before
                    if change != 0 {
                        for id in streams.keys {
                            if var stream = streams[id] {
                                stream.receiveWindow += change
                                streams[id] = stream
                            }
                        }
                    }
                }
                if !hasAppliedLocalTableSize {
                    // Our table size binds the peer from its acknowledgement on.
                    hasAppliedLocalTableSize = true
                    headerDecoder.setMaximumTableSize(Int(configuration.headerTableSize))
                }
            } else {
                try receiveSettings(settings)
            }
        case .pushPromise:
            throw HTTP2ProtocolViolation(.protocolError, "PUSH_PROMISE although ENABLE_PUSH is 0")
        case let .ping(opaque, ack):
            if ack {
                if drainingPing == opaque {
                    drainingPing = nil
                    writeFinalGoAway(code: .noError, debugData: [])
                } else {
                    emit(.pingAcknowledged(opaque))
                }
            } else {
                if sentPayloadSincePing {
                    sentPayloadSincePing = false
                } else {
                    try spendControlBudget(at: now, on: "PING")
                }
                HTTP2FrameEncoder.writePing(opaque, ack: true, into: &output)
            }
        case let .goAway(lastStreamID, code, debugData):
            // Each one walks the streams and copies its debug data: a flood is bounded.
            try spendControlBudget(at: now, on: "GOAWAY")
            receiveGoAway(lastStreamID: lastStreamID, code: code, debugData: debugData)
        case let .windowUpdate(increment):
            // A connection-level one walks every blocked stream: a flood of tiny ones while
            // streams wait would cost that walk (and a tiny DATA frame) each, so they count as
            // control frames. Tiny ones with nothing waiting cost nothing and are free, as a
            // peer's small refills often are.
            if increment < HTTP2FlowControl.smallWindowUpdate && frame.streamID == 0 && !blocked.isEmpty {
                try spendControlBudget(at: now, on: "small WINDOW_UPDATE")
            }
            try receiveWindowUpdate(increment, streamID: frame.streamID)
        case .continuation:
            throw HTTP2ProtocolViolation(.protocolError, "CONTINUATION without a header block to continue")
        case .unknown:
            break
        }
    }

    private mutating func spendControlBudget(at now: ContinuousClock.Instant, on what: String) throws(HTTP2ProtocolViolation) {
        guard controlFrames.take(at: now) else {
            throw HTTP2ProtocolViolation(.enhanceYourCalm, "too many \(what) and other control frames")
        }
    }

    // MARK: Header blocks

    private mutating func startHeaderBlock(_ block: PartialHeaderBlock, endHeaders: Bool) throws(HTTP2ProtocolViolation) {
        guard block.fragment.count <= configuration.maxHeaderBlockSize else {
            throw HTTP2ProtocolViolation(.enhanceYourCalm, "a header block larger than \(configuration.maxHeaderBlockSize) bytes")
        }
        if endHeaders {
            try completeHeaderBlock(block)
        } else {
            var waiting = block
            // Not a slice of the decoder's buffer past this read.
            waiting.fragment = ArraySlice(Array(block.fragment))
            headerBlock = waiting
        }
    }

    private mutating func continueHeaderBlock(_ fragment: ArraySlice<UInt8>, endHeaders: Bool, at now: ContinuousClock.Instant) throws(HTTP2ProtocolViolation) {
        guard var block = headerBlock else { return }
        // Taken out while it grows, so the append extends it in place: with a second copy
        // left in `headerBlock`, every CONTINUATION copied the whole block so far (quadratic).
        headerBlock = nil
        block.continuations += 1
        guard block.continuations <= configuration.maxContinuationFrames else {
            throw HTTP2ProtocolViolation(.enhanceYourCalm, "a header block in more than \(configuration.maxContinuationFrames) CONTINUATION frames")
        }
        guard block.fragment.count + fragment.count <= configuration.maxHeaderBlockSize else {
            throw HTTP2ProtocolViolation(.enhanceYourCalm, "a header block larger than \(configuration.maxHeaderBlockSize) bytes")
        }
        // One that carries nothing and ends nothing costs work for no headers.
        if fragment.isEmpty, !endHeaders { try spendControlBudget(at: now, on: "empty CONTINUATION") }
        block.fragment += fragment
        if endHeaders {
            try completeHeaderBlock(block)
        } else {
            headerBlock = block
        }
    }

    /// Decodes a whole block (always, so HPACK stays in step) and applies it to its stream.
    private mutating func completeHeaderBlock(_ block: PartialHeaderBlock) throws(HTTP2ProtocolViolation) {
        let decoded: HPACKDecoder.Block
        do {
            decoded = try headerDecoder.decode(block.fragment)
        } catch {
            throw HTTP2ProtocolViolation(.compressionError, "header block: \(error)")
        }
        let id = block.streamID
        if streams[id] != nil {
            try receiveHeaders(decoded, onOpenStream: id, endStream: block.endStream)
            return
        }
        if recentlyReset.contains(id) { return }
        if isIgnoredAfterGoAway(id) {
            highestRemoteStreamID = max(highestRemoteStreamID, id)
            return
        }
        guard role == .server, id % 2 == 1 else {
            if isLocallyInitiated(id), id <= highestKnownID(of: id) {
                throw HTTP2ProtocolViolation(.streamClosed, "HEADERS on closed stream \(id)")
            }
            throw HTTP2ProtocolViolation(.protocolError, "HEADERS opening stream \(id), which the \(role == .client ? "server" : "client") may not open")
        }
        // New stream ids only go up: a lower one is an unexpected id (RFC 9113 §5.1.1).
        guard id > highestRemoteStreamID else {
            throw HTTP2ProtocolViolation(.protocolError, "HEADERS opening stream \(id) after stream \(highestRemoteStreamID)")
        }
        highestRemoteStreamID = id
        guard UInt32(remotelyInitiatedCount) < configuration.maxConcurrentStreams else {
            resetUnknown(id, HTTP2ProtocolViolation(.refusedStream, "MAX_CONCURRENT_STREAMS \(configuration.maxConcurrentStreams) reached"))
            return
        }
        var stream = HTTP2StreamState(id: id, isLocallyInitiated: false, phase: block.endStream ? .halfClosedRemote : .open,
                                      headers: .receivedInitial, sendWindow: Int(remoteSettings.initialWindowSize),
                                      receiveWindow: initialReceiveWindow)
        if let problem = headerProblem(decoded) {
            resetUnknown(id, problem)
            return
        }
        do {
            stream.expectedContentLength = try validatedLists.validate(decoded.headers, as: .request, checked: decoded.checkedFields).contentLength
        } catch {
            resetUnknown(id, error)
            return
        }
        if block.endStream, let expected = stream.expectedContentLength, expected != 0 {
            resetUnknown(id, HTTP2ProtocolViolation(.protocolError, "content-length \(expected) but no data"))
            return
        }
        streams[id] = stream
        remotelyInitiatedCount += 1
        emit(.headers(streamID: id, decoded.headers, endStream: block.endStream))
    }

    private mutating func receiveHeaders(_ decoded: HPACKDecoder.Block, onOpenStream id: UInt32, endStream: Bool) throws(HTTP2ProtocolViolation) {
        guard var stream = streams[id] else { return }
        guard stream.canReceive else {
            resetStream(id, because: HTTP2ProtocolViolation(.streamClosed, "HEADERS after the peer ended stream \(id)"))
            return
        }
        if let problem = headerProblem(decoded) {
            resetStream(id, because: problem)
            return
        }
        let kind: HTTP2HeaderValidation.Kind = stream.headers == .awaitingInitial ? .response : .trailers
        let summary: HTTP2HeaderValidation.Summary
        do {
            summary = try validatedLists.validate(decoded.headers, as: kind, checked: decoded.checkedFields)
        } catch {
            resetStream(id, because: error)
            return
        }
        if kind == .trailers, !endStream {
            resetStream(id, because: HTTP2ProtocolViolation(.protocolError, "trailers on stream \(id) without END_STREAM"))
            return
        }
        if summary.isInformational {
            // 1xx: more headers follow; nothing to hand up (gRPC never uses them).
            if endStream { resetStream(id, because: HTTP2ProtocolViolation(.protocolError, "a 1xx response that ends stream \(id)")) }
            return
        }
        if kind == .response {
            stream.headers = .receivedInitial
            stream.expectedContentLength = summary.contentLength
        }
        if endStream, let expected = stream.expectedContentLength, expected != stream.receivedContentLength {
            resetStream(id, because: HTTP2ProtocolViolation(.protocolError, "content-length \(expected) but \(stream.receivedContentLength) bytes"))
            return
        }
        streams[id] = stream
        emit(.headers(streamID: id, decoded.headers, endStream: endStream))
        if endStream { receivedEnd(of: id) }
    }

    private func headerProblem(_ block: HPACKDecoder.Block) -> HTTP2ProtocolViolation? {
        if block.isTooLarge {
            return HTTP2ProtocolViolation(.protocolError, "a header list of \(block.listSize) bytes exceeds MAX_HEADER_LIST_SIZE \(configuration.maxHeaderListSize)")
        }
        if block.hasInvalidText { return HTTP2ProtocolViolation(.protocolError, "a header field that is not valid UTF-8") }
        return nil
    }

    // MARK: Data

    private mutating func receiveData(_ bytes: ArraySlice<UInt8>, streamID id: UInt32, endStream: Bool, flowControlledLength: Int, at now: ContinuousClock.Instant) throws(HTTP2ProtocolViolation) {
        connectionReceiveWindow -= flowControlledLength
        guard connectionReceiveWindow >= 0 else {
            throw HTTP2ProtocolViolation(.flowControlError, "DATA beyond the connection's window")
        }
        // Whatever happens to the stream, the connection's window is given back.
        refundConnection(flowControlledLength)
        // Padding is no payload: a frame of padding alone is as empty as one of nothing.
        if bytes.isEmpty, !endStream { try spendControlBudget(at: now, on: "empty DATA") }
        guard var stream = streams[id] else {
            if recentlyReset.contains(id) || isIgnoredAfterGoAway(id) { return }
            if id <= highestKnownID(of: id) {
                throw HTTP2ProtocolViolation(.streamClosed, "DATA on closed stream \(id)")
            }
            throw HTTP2ProtocolViolation(.protocolError, "DATA on idle stream \(id)")
        }
        guard stream.canReceive else {
            resetStream(id, because: HTTP2ProtocolViolation(.streamClosed, "DATA after the peer ended stream \(id)"))
            return
        }
        guard stream.headers == .receivedInitial else {
            resetStream(id, because: HTTP2ProtocolViolation(.protocolError, "DATA before headers on stream \(id)"))
            return
        }
        stream.receiveWindow -= flowControlledLength
        guard stream.receiveWindow >= 0 else {
            resetStream(id, because: HTTP2ProtocolViolation(.flowControlError, "DATA beyond the window of stream \(id)"))
            return
        }
        stream.receivedContentLength += bytes.count
        if let expected = stream.expectedContentLength,
           stream.receivedContentLength > expected || (endStream && stream.receivedContentLength != expected) {
            resetStream(id, because: HTTP2ProtocolViolation(.protocolError, "content-length \(expected) but \(stream.receivedContentLength) bytes"))
            return
        }
        if !endStream {
            stream.unacknowledgedReceived += flowControlledLength
            let window = Int(configuration.initialStreamWindowSize)
            // Never an increment of 0, which the peer must treat as an error.
            if stream.unacknowledgedReceived > 0, stream.unacknowledgedReceived >= window / 2 {
                HTTP2FrameEncoder.writeWindowUpdate(UInt32(stream.unacknowledgedReceived), streamID: id, into: &output)
                stream.receiveWindow += stream.unacknowledgedReceived
                stream.unacknowledgedReceived = 0
            }
        }
        streams[id] = stream
        emit(.data(streamID: id, bytes, endStream: endStream))
        if endStream { receivedEnd(of: id) }
    }

    private mutating func refundConnection(_ count: Int) {
        connectionUnacknowledged += count
        let window = Int(min(configuration.connectionWindowSize, HTTP2FlowControl.maximumWindow))
        if connectionUnacknowledged >= max(1, window / 2) {
            HTTP2FrameEncoder.writeWindowUpdate(UInt32(connectionUnacknowledged), streamID: 0, into: &output)
            connectionReceiveWindow += connectionUnacknowledged
            connectionUnacknowledged = 0
        }
    }

    // MARK: Control frames

    private mutating func receiveReset(_ code: HTTP2ErrorCode, streamID id: UInt32, at now: ContinuousClock.Instant) throws(HTTP2ProtocolViolation) {
        guard streams[id] != nil else {
            if isIgnoredAfterGoAway(id) { return }
            guard id <= highestKnownID(of: id) else {
                throw HTTP2ProtocolViolation(.protocolError, "RST_STREAM on idle stream \(id)")
            }
            try spendControlBudget(at: now, on: "RST_STREAM")
            return
        }
        // Only streams the peer opened count (the Rapid Reset attack opens and resets at
        // once): a server resetting this side's own streams frees slots this side filled.
        guard isLocallyInitiated(id) || resets.take(at: now) else {
            throw HTTP2ProtocolViolation(.enhanceYourCalm, "too many streams reset by the peer")
        }
        removeStream(id)
        emit(.streamClosed(streamID: id, .resetByPeer(code)))
    }

    private mutating func receiveSettings(_ settings: [HTTP2Setting]) throws(HTTP2ProtocolViolation) {
        let oldWindow = Int(remoteSettings.initialWindowSize)
        for setting in settings {
            // Servers cannot ask a client to accept pushes (RFC 9113 §6.5.2).
            if role == .client, setting.id == .enablePush, setting.value == 1 {
                throw HTTP2ProtocolViolation(.protocolError, "a server sent ENABLE_PUSH = 1")
            }
            try remoteSettings.apply(setting)
            // In order, each one: a lower size then a higher one in the same frame must still
            // be signalled at its smallest (RFC 7541 §4.2, RFC 9113 §6.5.3).
            if setting.id == .headerTableSize {
                headerEncoder.setPeerMaximumTableSize(Int(min(remoteSettings.headerTableSize, UInt32(configuration.encoderTableSizeCap))))
            }
        }
        hasReceivedSettings = true
        headerEncoder.setPeerMaximumTableSize(Int(min(remoteSettings.headerTableSize, UInt32(configuration.encoderTableSizeCap))))
        let delta = Int(remoteSettings.initialWindowSize) - oldWindow
        if delta != 0 {
            for id in streams.keys {
                streams[id]!.sendWindow += delta
                guard streams[id]!.sendWindow <= Int(HTTP2FlowControl.maximumWindow) else {
                    throw HTTP2ProtocolViolation(.flowControlError, "INITIAL_WINDOW_SIZE overflows the window of stream \(id)")
                }
            }
        }
        HTTP2FrameEncoder.write(HTTP2Frame(streamID: 0, payload: .settings([], ack: true)), into: &output)
        emit(.remoteSettingsChanged(remoteSettings))
        if delta > 0 { flushBlocked() }
    }

    private mutating func receiveGoAway(lastStreamID: UInt32, code: HTTP2ErrorCode, debugData: [UInt8]) {
        let last = min(lastStreamID, goAwayReceived ?? .max)
        goAwayReceived = last
        let excluded = streams.keys.filter { isLocallyInitiated($0) && $0 > last }.sorted()
        for id in excluded {
            removeStream(id)
            emit(.streamClosed(streamID: id, .notProcessed))
        }
        emit(.goAway(lastStreamID: last, code, debugData: Array(debugData.prefix(1024))))
        // A graceful shutdown's PING waits until every stream the peer opened before it saw
        // our first GOAWAY has arrived. A peer going away itself has sent those before its
        // GOAWAY (frames arrive in order), and one that is closing may never answer the PING:
        // waiting for it kept the connection until the peer's own linger ran out.
        if drainingPing != nil {
            drainingPing = nil
            writeFinalGoAway(code: .noError, debugData: [])
        }
    }

    private mutating func receiveWindowUpdate(_ increment: UInt32, streamID id: UInt32) throws(HTTP2ProtocolViolation) {
        if id == 0 {
            guard increment > 0 else { throw HTTP2ProtocolViolation(.protocolError, "WINDOW_UPDATE of 0 on the connection") }
            let wasSpent = connectionSendWindow <= 0
            connectionSendWindow += Int(increment)
            guard connectionSendWindow <= Int(HTTP2FlowControl.maximumWindow) else {
                throw HTTP2ProtocolViolation(.flowControlError, "WINDOW_UPDATE grows the connection window past 2^31-1")
            }
            // Each flush sends until the stream's or the connection's window runs out, so while
            // the connection's is open every stream still waiting waits for its own: walking
            // them would move nothing, and a flood of large updates (which cost no control
            // budget) walked them all for each.
            if wasSpent { flushBlocked() }
            return
        }
        guard var stream = streams[id] else {
            if isIgnoredAfterGoAway(id) { return }
            guard id <= highestKnownID(of: id) else { throw HTTP2ProtocolViolation(.protocolError, "WINDOW_UPDATE on idle stream \(id)") }
            return
        }
        guard increment > 0 else {
            resetStream(id, because: HTTP2ProtocolViolation(.protocolError, "WINDOW_UPDATE of 0 on stream \(id)"))
            return
        }
        stream.sendWindow += Int(increment)
        guard stream.sendWindow <= Int(HTTP2FlowControl.maximumWindow) else {
            resetStream(id, because: HTTP2ProtocolViolation(.flowControlError, "WINDOW_UPDATE grows the window of stream \(id) past 2^31-1"))
            return
        }
        streams[id] = stream
        if stream.hasPendingOutput { flush(id) }
    }

    // MARK: Stream bookkeeping

    func isLocallyInitiated(_ id: UInt32) -> Bool { (id % 2 == 1) == (role == .client) }

    /// A stream the peer opened after our GOAWAY's last stream id, before it saw the GOAWAY:
    /// its frames are ignored, not errors (RFC 9113 §6.8). Only a graceful GOAWAY leaves the
    /// connection reading.
    func isIgnoredAfterGoAway(_ id: UInt32) -> Bool {
        guard let goAwaySent, !isLocallyInitiated(id) else { return false }
        return id > goAwaySent
    }

    /// The highest id of `id`'s parity that has been used: ids at or below it and not open are closed.
    func highestKnownID(of id: UInt32) -> UInt32 {
        isLocallyInitiated(id) ? (nextLocalStreamID >= 2 ? nextLocalStreamID - 2 : 0) : highestRemoteStreamID
    }

    /// The peer ended its side of a stream.
    private mutating func receivedEnd(of id: UInt32) {
        guard var stream = streams[id] else { return }
        if stream.phase == .halfClosedLocal {
            removeStream(id)
            emit(.streamClosed(streamID: id, .completed))
        } else {
            stream.phase = .halfClosedRemote
            streams[id] = stream
        }
    }

    mutating func removeStream(_ id: UInt32) {
        guard let stream = streams.removeValue(forKey: id) else { return }
        if stream.isLocallyInitiated { locallyInitiatedCount -= 1 } else { remotelyInitiatedCount -= 1 }
        if stream.pendingByteCount > 0 || stream.hasPendingTrailers { pendingOutput[id] = nil }
        pendingSendBytes -= stream.pendingByteCount
        // Or a peer resetting blocked streams grows the list every flush walks (a stream can
        // stay listed with nothing pending, once its own window let everything out).
        blocked.remove(id)
    }

    /// A stream error: RST_STREAM goes out, the stream is dropped and its end reported.
    mutating func resetStream(_ id: UInt32, because violation: HTTP2ProtocolViolation) {
        if !isLocallyInitiated(id), !resets.take(at: receivedAt) { forcedResetsExceeded = true }
        HTTP2FrameEncoder.writeRSTStream(violation.code, streamID: id, into: &output)
        recentlyReset.insert(id)
        removeStream(id)
        emit(.streamClosed(streamID: id, .resetHere(violation)))
    }

    /// Refuses a stream the peer tried to open; nothing above ever heard of it.
    private mutating func resetUnknown(_ id: UInt32, _ violation: HTTP2ProtocolViolation) {
        HTTP2FrameEncoder.writeRSTStream(violation.code, streamID: id, into: &output)
        recentlyReset.insert(id)
    }

    /// A connection error: GOAWAY goes out and everything ends.
    mutating func fail(_ violation: HTTP2ProtocolViolation) {
        guard failure == nil else { return }
        // A GOAWAY after a graceful one repeats its last stream: the id may not go up
        // (RFC 9113 §6.8), and streams opened past it were never processed.
        let last = min(goAwaySent ?? .max, highestRemoteStreamID)
        HTTP2FrameEncoder.write(HTTP2Frame(streamID: 0, payload: .goAway(lastStreamID: last, code: violation.code,
                                                                          debugData: Array(violation.reason.utf8.prefix(256)))), into: &output)
        goAwaySent = last
        failure = violation
        headerBlock = nil
        frameDecoder.discardBuffered()
        closeAllStreams(.connectionEnded(violation.description))
        emit(.connectionFailed(violation))
    }

    private mutating func closeAllStreams(_ closure: HTTP2StreamClosure) {
        for id in streams.keys.sorted() { emit(.streamClosed(streamID: id, closure)) }
        streams.removeAll()
        pendingOutput.removeAll()
        pendingSendBytes = 0
        locallyInitiatedCount = 0
        remotelyInitiatedCount = 0
        blocked.removeAll()
    }
}
