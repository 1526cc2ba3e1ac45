import Foundation

/// An open WebSocket connection, client or server side.
///
/// A dedicated thread reads the socket and drives the sans-IO engine; messages arrive in
/// order on ``messages``. Sends are serialized and complete when the kernel has the bytes.
/// Pings are answered automatically. When the connection ends, ``messages`` finishes
/// after every message already received, so nothing accepted is lost.
public final class WebSocketConnection: @unchecked Sendable {
    /// Options shared by clients and servers.
    public struct Options: Sendable {
        public var configuration: WebSocketConnectionCore.Configuration
        /// How long `close` waits for the peer's close frame before dropping the connection.
        public var closeTimeout: Duration
        /// The largest read from the socket at once.
        public var readChunkSize: Int
        /// Hand messages to a handler on the reader thread (``deliverMessages(to:)``) instead
        /// of ``messages``; saves a thread-to-task hop per message for consumers that only
        /// route them, such as an RPC layer matching responses to waiting callers.
        public var deliversMessagesDirectly: Bool

        public init(configuration: WebSocketConnectionCore.Configuration = .init(), closeTimeout: Duration = .seconds(5), readChunkSize: Int = 64 * 1024,
                    deliversMessagesDirectly: Bool = false) {
            self.configuration = configuration
            self.closeTimeout = closeTimeout
            self.readChunkSize = readChunkSize
            self.deliversMessagesDirectly = deliversMessagesDirectly
        }
    }

    /// Messages from the peer, in order. Finishes when the connection closes. Empty when the
    /// options deliver messages directly.
    public let messages: AsyncStream<WebSocketMessage>
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

    private let stream: any ByteStream
    private let options: Options
    private let lock = NSLock()
    private var core: WebSocketConnectionCore
    private var finalInfo: WebSocketCloseInfo?
    private var closeWaiters: [CheckedContinuation<WebSocketCloseInfo, Never>] = []
    private let writeQueue = DispatchQueue(label: "switchboard.websocket.write")
    private let writeLock = NSLock()
    /// Writes waiting on the queue; the fast path must not overtake them.
    private let queuedWrites = LockedCounter()
    private let messageContinuation: AsyncStream<WebSocketMessage>.Continuation
    private let pongContinuation: AsyncStream<[UInt8]>.Continuation

    init(stream: any ByteStream, role: WebSocketConnectionCore.Role, options: Options, initialBytes: [UInt8],
         handshakeHeaders: [HTTPHeaderField], path: String, subprotocol: String?) {
        self.stream = stream
        self.options = options
        self.core = WebSocketConnectionCore(role: role, configuration: options.configuration)
        self.handshakeHeaders = handshakeHeaders
        self.path = path
        self.subprotocol = subprotocol
        (messages, messageContinuation) = AsyncStream.makeStream(of: WebSocketMessage.self)
        directSink = options.deliversMessagesDirectly ? DirectMessageSink() : nil
        (pongs, pongContinuation) = AsyncStream.makeStream(of: [UInt8].self, bufferingPolicy: .bufferingNewest(16))
        let pending = initialBytes
        Thread.detachNewThread { [self] in
            if !pending.isEmpty { process(core: { $0.receive(pending) }) }
            readLoop()
        }
    }

    /// Hands every message, in order, to `handler` on the reader thread: first those that
    /// arrived before this call, then each as it comes. `handler` must return quickly (it
    /// holds up reading); it runs until the connection ends. Needs `deliversMessagesDirectly`.
    public func deliverMessages(to handler: @escaping @Sendable (WebSocketMessage) -> Void) {
        precondition(directSink != nil, "deliverMessages(to:) needs Options.deliversMessagesDirectly")
        directSink?.attach(handler)
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

    /// Sends a message; fails with `closed` once closing has begun.
    public func send(_ message: WebSocketMessage) async throws(WebSocketError) {
        guard let frame = lock.withLock({ core.frame(for: message) }) else { throw .closed(closeInfo ?? WebSocketCloseInfo(code: .normalClosure, reason: "closing", wasClean: false)) }
        try await write(frame)
    }

    /// Sends a ping; the pong arrives on ``pongs``.
    public func ping(_ payload: [UInt8] = []) async throws(WebSocketError) {
        guard let frame = lock.withLock({ core.pingFrame(payload) }) else { throw .closed(closeInfo ?? WebSocketCloseInfo(code: .normalClosure, reason: "closing", wasClean: false)) }
        try await write(frame)
    }

    /// Sends a binary message without waiting for the socket: what the socket does not take
    /// now is written in the background, in order. For request traffic whose callers wait on
    /// answers and deadlines rather than on the write, so a peer that stops reading cannot
    /// hold them. A background write failure ends the connection (code 1006).
    public func sendWithoutWaiting(binary: Data) throws(WebSocketError) {
        guard let frame = lock.withLock({ core.frame(for: .binary(binary)) }) else { throw .closed(closeInfo ?? WebSocketCloseInfo(code: .normalClosure, reason: "closing", wasClean: false)) }
        writeInBackground(frame)
    }

    /// Sends a ping without waiting for the socket; the pong arrives on ``pongs``.
    public func pingWithoutWaiting(_ payload: [UInt8] = []) throws(WebSocketError) {
        guard let frame = lock.withLock({ core.pingFrame(payload) }) else { throw .closed(closeInfo ?? WebSocketCloseInfo(code: .normalClosure, reason: "closing", wasClean: false)) }
        writeInBackground(frame)
    }

    private func writeInBackground(_ bytes: [UInt8]) {
        let offset: Int
        do throws(WebSocketError) {
            offset = try writeWithoutWaiting(bytes)
        } catch {
            failWrite(error)
            return
        }
        if offset == bytes.count { return }
        writeQueue.async { [self] in
            writeLock.lock()
            defer {
                writeLock.unlock()
                queuedWrites.withLock { $0 -= 1 }
            }
            do throws(WebSocketError) {
                try stream.write(offset == 0 ? bytes : Array(bytes[offset...]))
            } catch {
                failWrite(error)
            }
        }
    }

    /// Ends the connection after a write failed, off the write queue (`finish` drains it).
    private func failWrite(_ error: WebSocketError) {
        DispatchQueue.global().async { [self] in
            finish(WebSocketCloseInfo(code: .abnormalClosure, reason: "write failed: \(error.description)", wasClean: false))
        }
    }

    private func write(_ bytes: [UInt8]) async throws(WebSocketError) {
        // Fast path: when no write is queued and the socket buffer has room, send right here;
        // a full buffer falls back to the write queue, which may block, so the task waits there.
        let offset = try writeWithoutWaiting(bytes)
        if offset == bytes.count { return }
        let result: Result<Void, WebSocketError> = await withCheckedContinuation { continuation in
            writeQueue.async { [self] in
                writeLock.lock()
                defer {
                    writeLock.unlock()
                    queuedWrites.withLock { $0 -= 1 }
                }
                do throws(WebSocketError) {
                    try stream.write(offset == 0 ? bytes : Array(bytes[offset...]))
                    continuation.resume(returning: .success(()))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        }
        try result.get()
    }

    /// Writes what the socket takes right now, unless another write holds the socket or is
    /// queued. When not everything went out, the rest counts as queued before the socket is
    /// released, so no other fast-path write can slip into the middle of this frame; the
    /// caller must then queue the rest.
    private func writeWithoutWaiting(_ bytes: [UInt8]) throws(WebSocketError) -> Int {
        guard writeLock.try() else {
            queuedWrites.withLock { $0 += 1 }
            return 0
        }
        defer { writeLock.unlock() }
        guard queuedWrites.withLock({ $0 == 0 }) else {
            queuedWrites.withLock { $0 += 1 }
            return 0
        }
        let written = try stream.writeWithoutBlocking(bytes, from: 0)
        if written < bytes.count { queuedWrites.withLock { $0 += 1 } }
        return written
    }

    /// Frames the engine asks for (pongs, close frames): behind any queued write, never
    /// blocking the reader thread on a peer that stopped reading.
    private func writeNow(_ bytes: [UInt8]) {
        writeInBackground(bytes)
    }

    // MARK: Closing

    /// Starts the close handshake and waits for it to finish, or for the close timeout.
    @discardableResult
    public func close(code: WebSocketCloseCode = .normalClosure, reason: String = "") async -> WebSocketCloseInfo {
        process(core: { $0.close(code: code, reason: reason) })
        let timeout = options.closeTimeout
        let watchdog = Task { [self] in
            try? await Task.sleep(for: timeout)
            if !Task.isCancelled { finish(WebSocketCloseInfo(code: .abnormalClosure, reason: "close timed out", wasClean: false)) }
        }
        let info = await waitUntilClosed()
        watchdog.cancel()
        return info
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

    /// Drops the connection without a close handshake.
    public func abort() {
        finish(WebSocketCloseInfo(code: .abnormalClosure, reason: "aborted", wasClean: false))
    }

    // MARK: Reading

    private func readLoop() {
        while closeInfo == nil {
            let bytes: [UInt8]
            do throws(WebSocketError) {
                bytes = try stream.read(maximum: options.readChunkSize)
            } catch {
                transportEnded()
                return
            }
            if bytes.isEmpty {
                transportEnded()
                return
            }
            process(core: { $0.receive(bytes) })
        }
    }

    /// The socket ended under the reader. If the engine had already closed, the thread that
    /// closed it is about to report the real close code; reporting 1006 here would race it.
    private func transportEnded() {
        guard let info = lock.withLock({ core.transportClosed() }) else { return }
        finish(info)
    }

    /// Runs the engine under the lock, then performs its actions in order.
    private func process(core step: (inout WebSocketConnectionCore) -> [WebSocketConnectionCore.Action]) {
        let actions = lock.withLock { step(&core) }
        for action in actions {
            switch action {
            case let .send(bytes): writeNow(bytes)
            case let .deliver(message):
                if let directSink { directSink.receive(message) } else { messageContinuation.yield(message) }
            case let .pong(payload): pongContinuation.yield(payload)
            case let .closeTransport(info): finish(info)
            case .peerClosed:
                // No more messages will come; after the grace period, answer for the application.
                messageContinuation.finish()
                let grace = options.closeTimeout
                Task { [self] in
                    try? await Task.sleep(for: grace)
                    process(core: { $0.close() })
                }
            }
        }
    }

    private func finish(_ info: WebSocketCloseInfo) {
        let waiters: [CheckedContinuation<WebSocketCloseInfo, Never>]? = lock.withLock {
            guard finalInfo == nil else { return nil }
            finalInfo = info
            _ = core.transportClosed()
            defer { closeWaiters = [] }
            return closeWaiters
        }
        guard let waiters else { return }
        // An abnormal end closes the socket first, which also frees a write blocked on a peer
        // that stopped reading; a clean one lets queued writes (our close frame) go out first.
        if !info.wasClean { stream.close() }
        writeQueue.sync {}
        stream.close()
        messageContinuation.finish()
        pongContinuation.finish()
        for waiter in waiters { waiter.resume(returning: info) }
    }
}

/// A small lock-protected integer.
final class LockedCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0

    func withLock<T>(_ body: (inout Int) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
}

/// Messages for a direct handler; kept in order until the handler is attached.
final class DirectMessageSink: @unchecked Sendable {
    private let lock = NSLock()
    private var buffered: [WebSocketMessage] = []
    private var handler: (@Sendable (WebSocketMessage) -> Void)?

    func receive(_ message: WebSocketMessage) {
        // The lock is held while handling, so a concurrent attach cannot reorder messages.
        lock.lock()
        defer { lock.unlock() }
        if let handler { handler(message) } else { buffered.append(message) }
    }

    func attach(_ newHandler: @escaping @Sendable (WebSocketMessage) -> Void) {
        lock.lock()
        defer { lock.unlock() }
        for message in buffered { newHandler(message) }
        buffered = []
        handler = newHandler
    }
}
