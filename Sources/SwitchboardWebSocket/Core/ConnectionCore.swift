import Foundation

/// A complete WebSocket message.
public enum WebSocketMessage: Sendable, Hashable {
    /// A text message, carried as UTF-8.
    case text(String)
    /// A binary message, carried as is.
    case binary(Data)
}

/// The sans-IO protocol engine of one connection: feed it received bytes and it returns
/// what to send, what to deliver and when to close the transport. It reassembles
/// fragments, validates UTF-8 as it arrives, answers pings, enforces size limits before
/// allocating, and runs the close handshake (RFC 6455 §5-§7). The same engine serves
/// both roles; only masking differs.
public struct WebSocketConnectionCore: Sendable {
    /// Which side of the connection this is.
    public enum Role: Sendable {
        /// Masks the frames it sends and expects the peer's unmasked.
        case client
        /// Sends unmasked frames and expects the peer's masked.
        case server
    }

    /// Limits and behaviour.
    public struct Configuration: Sendable, Hashable {
        /// The largest message, reassembled, that is accepted; larger ones fail with 1009.
        public var maximumMessageSize: Int
        /// The largest single frame accepted: the message limit unless set lower, however
        /// and whenever either is set (a frame larger than a message could never be accepted),
        /// and never below 125 bytes, the largest control frame.
        public var maximumFrameSize: Int {
            get { max(125, min(frameSizeLimit ?? maximumMessageSize, maximumMessageSize)) }
            set { frameSizeLimit = newValue }
        }
        private var frameSizeLimit: Int?

        /// Defaults: 512 KiB messages, as Signal's server allows; frames up to the message limit.
        public init(maximumMessageSize: Int = 512 * 1024, maximumFrameSize: Int? = nil) {
            self.maximumMessageSize = maximumMessageSize
            self.frameSizeLimit = maximumFrameSize
        }
    }

    /// Something the I/O layer must do.
    public enum Action: Sendable, Hashable {
        /// Write these bytes to the transport.
        case send([UInt8])
        /// Hand a message to the application.
        case deliver(ReceivedWebSocketMessage)
        /// A pong arrived (for liveness checks).
        case pong([UInt8])
        /// The connection is over: close the transport. `info` says why.
        case closeTransport(WebSocketCloseInfo)
        /// The peer sent a close. The application may still send what it owes (an echo, say);
        /// the close reply goes out when it calls `close()`.
        case peerClosed(WebSocketCloseInfo)
        /// The peer broke the protocol after messages delivered by the same call. Nothing more
        /// is read; the application may still answer those messages, and the close with the
        /// violation's code goes out when it calls `close()`.
        case failurePending(WebSocketCloseInfo)
    }

    enum State: Sendable, Equatable {
        case open
        /// We sent a close and wait for the peer's.
        case closeSent(WebSocketCloseInfo)
        /// The peer sent a close; we have not answered yet.
        case closeReceived(WebSocketCloseInfo)
        /// The peer broke the protocol; we owe it a close with `info`'s code once the
        /// application has answered what came before.
        case failing(WebSocketCloseInfo)
        case closed
    }

    /// Which side of the connection this is.
    public let role: Role
    /// The limits this connection enforces.
    public let configuration: Configuration
    private var parser: FrameParser
    private(set) var state: State = .open

    // The data message being reassembled.
    private var messageOpcode: WebSocketOpcode?
    private var messageBuffer: [UInt8] = []
    /// A message whose whole payload arrived in one chunk (the common case): kept as that
    /// chunk, a slice of the parser's buffer, and delivered without a copy.
    private var wholeMessage: ArraySlice<UInt8>?
    private var validator = UTF8StreamValidator()
    // The frame being read.
    private var frameHeader: FrameHeader?
    private var controlPayload: [UInt8] = []
    /// Data messages and control frames outside them received in full so far.
    public private(set) var completedMessages = 0

    /// Creates an engine for an open connection.
    public init(role: Role, configuration: Configuration = .init()) {
        self.role = role
        self.configuration = configuration
        parser = FrameParser(expectMasked: role == .server, maximumFrameSize: UInt64(clamping: configuration.maximumFrameSize))
    }

    var masks: Bool { role == .client }
    /// Keys not yet used. A copy of the core shares them, so only one copy may send.
    private var maskingKeys = MaskingKeys()

    /// A fresh key for the client's next frame; servers do not mask.
    private mutating func nextMaskingKey() -> UInt32? {
        masks ? maskingKeys.next() : nil
    }

    /// Whether the connection still accepts application messages.
    public var isOpen: Bool { state == .open }

    /// Whether outgoing messages may still be sent (also after the peer's close or a
    /// violation, before our close goes out).
    var canSend: Bool {
        switch state {
        case .open, .closeReceived, .failing: return true
        default: return false
        }
    }

    /// Whether part of a message has arrived and the rest has not: a frame cut short, or a
    /// fragmented message missing its final frame.
    public var isInsideMessage: Bool { messageOpcode != nil || parser.isInsideFrame }

    /// Whether received bytes are still parsed: not after a violation, nor once closed, nor
    /// after the peer's close, which ends what it sends (RFC 6455 §1.4: later data is
    /// discarded, so junk after it cannot turn its clean close into our protocol error).
    var isReading: Bool {
        switch state {
        case .failing, .closed, .closeReceived: return false
        default: return true
        }
    }

    // MARK: Sending

    /// The frame for an outgoing message; nil once closing has begun.
    public mutating func frame(for message: WebSocketMessage) -> [UInt8]? {
        guard canSend else { return nil }
        switch message {
        case let .text(text): return FrameWriter.frame(opcode: .text, payload: Array(text.utf8), maskingKey: nextMaskingKey())
        case let .binary(data): return FrameWriter.frame(opcode: .binary, payload: data, maskingKey: nextMaskingKey())
        }
    }

    /// The frame for a binary message of `count` bytes that `writePayload` writes in place
    /// (every one of them: the buffer is not cleared first); nil once closing has begun.
    public mutating func binaryFrame(count: Int, writePayload: (UnsafeMutableRawBufferPointer) -> Void) -> [UInt8]? {
        guard canSend else { return nil }
        return FrameWriter.frame(opcode: .binary, payloadCount: count, maskingKey: nextMaskingKey(), writePayload: writePayload)
    }

    /// The frame for a ping (payload at most 125 bytes).
    public mutating func pingFrame(_ payload: [UInt8] = []) -> [UInt8]? {
        guard state == .open else { return nil }
        return FrameWriter.frame(opcode: .ping, payload: payload.prefix(125), maskingKey: nextMaskingKey())
    }

    /// Starts the close handshake. Codes that are never sent (1005, 1006, 1015) become 1000.
    /// After the peer's close, this answers it with the peer's code instead; after a
    /// violation, it sends the violation's code and ends the connection.
    public mutating func close(code: WebSocketCloseCode = .normalClosure, reason: String = "") -> [Action] {
        if case let .failing(info) = state {
            state = .closed
            return [
                .send(FrameWriter.frame(opcode: .close, payload: FrameWriter.closePayload(code: info.code, reason: info.reason), maskingKey: nextMaskingKey())),
                .closeTransport(info),
            ]
        }
        if case let .closeReceived(info) = state {
            // Answer the peer's close, echoing its code (1000 when it sent none).
            let echo = info.code == .noStatusReceived ? WebSocketCloseCode.normalClosure : info.code
            state = .closed
            return [
                .send(FrameWriter.frame(opcode: .close, payload: FrameWriter.closePayload(code: echo, reason: ""), maskingKey: nextMaskingKey())),
                .closeTransport(info),
            ]
        }
        guard state == .open else { return [] }
        let sent = code.isValidOnTheWire ? code : .normalClosure
        state = .closeSent(WebSocketCloseInfo(code: sent, reason: reason, wasClean: true))
        return [.send(FrameWriter.frame(opcode: .close, payload: FrameWriter.closePayload(code: sent, reason: reason), maskingKey: nextMaskingKey()))]
    }

    /// The transport ended. Returns the final close info if the engine had not closed yet:
    /// 1006 if no close frame was received, ours sent or not (RFC 6455 §7.1.5).
    public mutating func transportClosed() -> WebSocketCloseInfo? {
        defer { state = .closed }
        switch state {
        case .open: return WebSocketCloseInfo(code: .abnormalClosure, reason: "connection lost", wasClean: false)
        case let .closeSent(info):
            // The code we sent is not the close code: the peer never agreed to it. It stays
            // in the reason, for whoever reads why the connection ended.
            let detail = info.reason.isEmpty ? "" : " (\(info.reason))"
            let reason = "sent \(info.code.rawValue)\(detail), no close received"
            return WebSocketCloseInfo(code: .abnormalClosure, reason: reason, wasClean: false)
        case let .closeReceived(info): return WebSocketCloseInfo(code: info.code, reason: info.reason, wasClean: false)
        case let .failing(info): return info
        case .closed: return nil
        }
    }

    // MARK: Receiving

    /// Processes received bytes.
    public mutating func receive(_ bytes: some Sequence<UInt8>) -> [Action] {
        guard isReading else { return [] }
        parser.append(bytes)
        var actions: [Action] = []
        parseBuffered(into: &actions)
        return actions
    }

    /// Feeds received bytes from memory the caller reuses; they are copied once, into the
    /// parser's buffer.
    public mutating func receive(_ bytes: UnsafeRawBufferPointer) -> [Action] {
        var actions: [Action] = []
        receive(bytes, into: &actions)
        return actions
    }

    /// Feeds received bytes and appends the resulting actions to `actions`: a reader that
    /// keeps one array for them allocates nothing per read. `unansweredMessages` says that
    /// messages delivered by earlier calls may still await the application's answer, so a
    /// violation now waits for it (``Action/failurePending(_:)``) as it would for messages
    /// delivered by this call.
    /// (`unansweredMessages` is asked only when a violation arrives, so reads pay nothing for it.)
    public mutating func receive(_ bytes: UnsafeRawBufferPointer, into actions: inout [Action], unansweredMessages: () -> Bool = { false }) {
        guard isReading else { return }
        parser.append(bytes)
        parseBuffered(into: &actions, unansweredMessages: unansweredMessages)
    }

    /// Feeds received bytes; an array is taken without a copy when nothing is pending.
    public mutating func receive(_ bytes: [UInt8]) -> [Action] {
        guard isReading else { return [] }
        parser.append(bytes)
        var actions: [Action] = []
        parseBuffered(into: &actions)
        return actions
    }

    private mutating func parseBuffered(into actions: inout [Action], unansweredMessages: () -> Bool = { false }) {
        let delivered = actions.count
        do throws(WebSocketError) {
            while isReading, let event = try parser.next() {
                try handle(event, into: &actions)
            }
        } catch {
            guard case let .protocolViolation(code, reason) = error else { return }
            // Messages that came before the violation in this read are delivered first, and
            // the application may answer them (an echo) before the close goes out.
            let deliveredFirst = actions[delivered...].contains { if case .deliver = $0 { true } else { false } } || unansweredMessages()
            if deliveredFirst, state == .open {
                let info = WebSocketCloseInfo(code: code, reason: reason, wasClean: false)
                state = .failing(info)
                actions.append(.failurePending(info))
            } else {
                actions += fail(code, reason)
            }
        }
    }

    /// Fails the connection: send a close with `code` and stop reading.
    mutating func fail(_ code: WebSocketCloseCode, _ reason: String) -> [Action] {
        let info = WebSocketCloseInfo(code: code, reason: reason, wasClean: false)
        var actions: [Action] = []
        if state == .open || { if case .closeReceived = state { return true } else { return false } }() {
            actions.append(.send(FrameWriter.frame(opcode: .close, payload: FrameWriter.closePayload(code: code, reason: reason), maskingKey: nextMaskingKey())))
        }
        state = .closed
        actions.append(.closeTransport(info))
        return actions
    }

    private mutating func handle(_ event: FrameParser.Event, into actions: inout [Action]) throws(WebSocketError) {
        switch event {
        case let .header(header):
            frameHeader = header
            if header.opcode.isControl {
                controlPayload = []
                return
            }
            if header.opcode == .continuation {
                guard messageOpcode != nil else { throw .protocolViolation(code: .protocolError, reason: "continuation frame with nothing to continue") }
            } else {
                guard messageOpcode == nil else { throw .protocolViolation(code: .protocolError, reason: "new data frame inside a fragmented message") }
                messageOpcode = header.opcode
                messageBuffer = []
                validator = UTF8StreamValidator()
            }
            // Check the size before any payload memory is allocated.
            guard UInt64(messageBuffer.count) + header.payloadLength <= UInt64(clamping: configuration.maximumMessageSize) else {
                throw .protocolViolation(code: .messageTooBig, reason: "message exceeds \(configuration.maximumMessageSize) bytes")
            }
        case let .payload(chunk):
            guard let header = frameHeader else { return }
            if header.opcode.isControl {
                controlPayload += chunk
            } else {
                if messageOpcode == .text, !validator.feed(chunk) {
                    throw .protocolViolation(code: .invalidPayload, reason: "invalid UTF-8 in a text message")
                }
                if header.fin, messageBuffer.isEmpty, wholeMessage == nil, UInt64(chunk.count) == header.payloadLength {
                    wholeMessage = chunk
                } else {
                    messageBuffer += chunk
                }
            }
        case .frameEnd:
            guard let header = frameHeader else { return }
            frameHeader = nil
            if header.opcode.isControl {
                // A ping inside a fragmented message does not restart the message's clock.
                if messageOpcode == nil { completedMessages &+= 1 }
                try handleControl(header.opcode, controlPayload, into: &actions)
                return
            }
            guard header.fin, let opcode = messageOpcode else { return }
            messageOpcode = nil
            completedMessages &+= 1
            let payload = wholeMessage ?? messageBuffer[...]
            wholeMessage = nil
            messageBuffer = []
            guard state == .open else { return }
            if opcode == .text {
                guard validator.isComplete else { throw .protocolViolation(code: .invalidPayload, reason: "text message ends inside a UTF-8 sequence") }
            }
            actions.append(.deliver(ReceivedWebSocketMessage(isText: opcode == .text, payload: payload)))
        }
    }

    private mutating func handleControl(_ opcode: WebSocketOpcode, _ payload: [UInt8], into actions: inout [Action]) throws(WebSocketError) {
        switch opcode {
        case .ping:
            // Answered until the peer's Close arrives (RFC 6455 §5.5.2): after sending ours,
            // control frames may still go out; only data frames may not.
            var answers = state == .open
            if case .closeSent = state { answers = true }
            if answers {
                actions.append(.send(FrameWriter.frame(opcode: .pong, payload: payload, maskingKey: nextMaskingKey())))
            }
        case .pong where state != .open:
            break
        case .pong:
            actions.append(.pong(payload))
        case .close:
            var code = WebSocketCloseCode.noStatusReceived
            var reason = ""
            if payload.count == 1 { throw .protocolViolation(code: .protocolError, reason: "close frame with a 1-byte payload") }
            if payload.count >= 2 {
                code = WebSocketCloseCode(UInt16(payload[0]) << 8 | UInt16(payload[1]))
                guard code.isValidOnTheWire else { throw .protocolViolation(code: .protocolError, reason: "invalid close code \(code.rawValue)") }
                var reasonValidator = UTF8StreamValidator()
                let reasonBytes = payload[2...]
                guard reasonValidator.feed(reasonBytes), reasonValidator.isComplete else {
                    throw .protocolViolation(code: .invalidPayload, reason: "close reason is not UTF-8")
                }
                reason = String(decoding: reasonBytes, as: UTF8.self)
            }
            switch state {
            case .open:
                // Let the application finish what it owes before the reply (RFC 6455 §7.1.1 allows it).
                let info = WebSocketCloseInfo(code: code, reason: reason, wasClean: true)
                state = .closeReceived(info)
                actions.append(.peerClosed(info))
            case .closeSent:
                state = .closed
                actions.append(.closeTransport(WebSocketCloseInfo(code: code, reason: reason, wasClean: true)))
            case .closeReceived, .failing, .closed:
                break
            }
        default:
            break
        }
    }
}
