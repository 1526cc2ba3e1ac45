import Foundation
import SwitchboardIO

/// Reads one upgrade request from a freshly accepted channel, on its loop, and answers it:
/// the server side of the opening handshake without a thread of its own. Bytes that follow
/// the request belong to the WebSocket and go to the connection it creates.
final class ServerHandshake: ChannelDelegate, @unchecked Sendable {
    /// What the handshake ends in: a connection, or nothing (refused, failed, timed out,
    /// cancelled).
    typealias Completion = @Sendable (ServerHandshake, WebSocketConnection?) -> Void

    private let channel: any ByteChannel
    private let options: WebSocketConnection.Options
    private let decide: @Sendable (WebSocketHandshake.ServerRequest) -> WebSocketServer.UpgradeDecision
    private let lock = AdaptiveLock()
    private var received: [UInt8] = []
    /// Empty lines skipped before the request line (two at most).
    private var emptyLinesSkipped = 0
    private var completion: Completion?
    private var timer: LoopTimer?

    init(channel: any ByteChannel, options: WebSocketConnection.Options,
         decide: @escaping @Sendable (WebSocketHandshake.ServerRequest) -> WebSocketServer.UpgradeDecision, completion: @escaping Completion) {
        self.channel = channel
        self.options = options
        self.decide = decide
        self.completion = completion
    }

    /// Starts reading (after TLS, if the channel has it), giving up after `timeout`.
    func start(timeout: Duration) {
        let timer = channel.loop.schedule(after: timeout) { [self] in fail() }
        // Under the lock: a server stopping on another thread may `take()` at the same time,
        // and a handshake already over must not keep its timer.
        let over = lock.withLock { () -> Bool in
            guard completion != nil else { return true }
            self.timer = timer
            return false
        }
        if over { timer.cancel() }
        channel.activate(delegate: self) { [self] failure in
            if failure != nil { fail() }
        }
    }

    func channelRead(_ bytes: UnsafeRawBufferPointer) {
        guard lock.withLock({ completion != nil }) else { return }
        var searched = max(0, received.count - 3)
        received.append(contentsOf: bytes)
        // An empty line before the request line (a client's stray CRLF after an earlier
        // message) is ignored, as RFC 9112 §2.2 asks of a server: up to two.
        while emptyLinesSkipped < 2, received.first == 13 {
            guard received.count >= 2 else { return }
            guard received[1] == 10 else { break }
            received.removeFirst(2)
            emptyLinesSkipped += 1
            searched = 0
        }
        // A request starts with a method's capital letters; anything else (a TLS ClientHello
        // sent to a plain port, say) is answered at once, not after the handshake timeout, so
        // the client can tell what went wrong.
        if let first = received.first, !(UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(first) {
            reject(WebSocketHandshake.rejectResponse(status: 400, reason: "Bad Request", body: Array("not an HTTP request".utf8)))
            return
        }
        let parsed: (head: HTTPHead, consumed: Int)?
        do throws(WebSocketError) {
            parsed = try HTTPHead.parse(received, searchingFrom: searched, limits: options.handshakeHeadLimits)
        } catch {
            // Answered, not dropped: a browser or a proxy in front then knows what went wrong
            // (RFC 6455 §4.2.1); a head past the limits is 431.
            let tooLarge: Bool = if case let .invalidHTTP(reason) = error { reason.contains("larger than") || reason.contains("more than") } else { false }
            let status = tooLarge ? 431 : 400
            reject(WebSocketHandshake.rejectResponse(status: status, reason: WebSocketHandshake.reasonPhrase(for: status), body: Array("\(error)".utf8)))
            return
        }
        guard let (head, consumed) = parsed else { return }
        let request: WebSocketHandshake.ServerRequest
        do throws(WebSocketError) {
            request = try WebSocketHandshake.parseUpgrade(head)
        } catch {
            if case let .upgradeRejected(status, headers, body) = error {
                reject(WebSocketHandshake.rejectResponse(status: status, reason: WebSocketHandshake.reasonPhrase(for: status), headers: headers, body: body))
            } else {
                fail()
            }
            return
        }
        let decision = decide(request)
        // Headers from the application go on the wire only if they are valid HTTP, and a
        // subprotocol only if the client offered it (RFC 6455 §4.2.2); otherwise the client
        // gets a plain 500 rather than a smuggled header or a doomed upgrade.
        guard WebSocketServer.isSendable(decision, for: request) else {
            reject(WebSocketHandshake.rejectResponse(status: 500, reason: "Internal Server Error"))
            return
        }
        switch decision {
        case let .reject(status, reason, headers, body):
            reject(WebSocketHandshake.rejectResponse(status: status, reason: reason, headers: headers, body: body))
        case let .accept(headers, subprotocol, context):
            guard let done = take() else { return }
            // With a completion, so the response is sent now rather than collected for the end
            // of the loop's turn: whether the client can still be told must be known before the
            // application is handed a connection for it.
            let response = WebSocketHandshake.acceptResponse(for: request, subprotocol: subprotocol, headers: headers)
            if case .failed = channel.write(response, completion: { _ in }) {
                channel.close(reason: "the upgrade response could not be sent")
                done(self, nil)
                return
            }
            // On the loop, inside this read: the connection takes the channel over before
            // the next byte is read.
            let connection = WebSocketConnection(channel: channel, role: .server, options: options, initialBytes: Array(received[consumed...]),
                                                 handshakeHeaders: request.headers, path: request.path, subprotocol: subprotocol,
                                                 upgradeContext: context)
            done(self, connection)
        }
    }

    func channelEnded(reason: String?) { fail() }

    func channelWriteFailed(_ reason: String) { fail() }

    /// Gives up now (the server is stopping), on the channel's loop.
    func cancel() {
        channel.loop.execute { [self] in fail() }
    }

    /// Answers with `response`, then closes once it is written.
    private func reject(_ response: [UInt8]) {
        guard let done = take() else { return }
        _ = channel.write(response, completion: nil)
        channel.closeAfterFlushing(timeout: .seconds(2))
        done(self, nil)
    }

    private func fail() {
        guard let done = take() else { return }
        // Nothing of ours waits to be read: closed at once, not lingering (which would hold
        // the connection's slot for seconds more).
        channel.close(reason: "the upgrade did not complete")
        done(self, nil)
    }

    /// The completion, once; stops the timer.
    private func take() -> Completion? {
        let (done, timer): (Completion?, LoopTimer?) = lock.withLock {
            defer {
                completion = nil
                self.timer = nil
            }
            return (completion, self.timer)
        }
        timer?.cancel()
        return done
    }
}

/// Tells a client past the connection limit to come back later: reads its request (so
/// closing sends no reset that could destroy the answer), answers 503 with `Retry-After`,
/// and closes; all on the loop.
final class ServerRefusal: ChannelDelegate, @unchecked Sendable {
    private let channel: any ByteChannel
    private let lock = AdaptiveLock()
    private var head: RefusedRequestHead
    private var done: (@Sendable () -> Void)?

    init(channel: any ByteChannel, headLimits: HTTPHeadLimits, done: @escaping @Sendable () -> Void) {
        self.channel = channel
        head = RefusedRequestHead(limits: headLimits)
        self.done = done
    }

    func start(timeout: Duration) {
        channel.loop.schedule(after: timeout) { [self] in answer() }
        channel.activate(delegate: self, handshakeDone: nil)
    }

    func channelRead(_ bytes: UnsafeRawBufferPointer) {
        // Answered once the head is whole, or cannot be (malformed, or past the limits).
        if head.take(bytes) { answer() }
    }

    func channelEnded(reason: String?) { answer() }
    func channelWriteFailed(_ reason: String) { answer() }

    private func answer() {
        guard let done = lock.withLock({ () -> (@Sendable () -> Void)? in
            defer { self.done = nil }
            return self.done
        }) else { return }
        _ = channel.write(WebSocketHandshake.rejectResponse(status: 503, reason: "Service Unavailable",
                                                            headers: [HTTPHeaderField(name: "Retry-After", value: "1")]), completion: nil)
        channel.closeAfterFlushing(timeout: .seconds(2))
        done()
    }
}

/// A refused client's request as it arrives, kept only to tell when it has all come (or never
/// can): the 503 goes out then, so closing after it sends no reset that could destroy it.
struct RefusedRequestHead {
    let limits: HTTPHeadLimits
    /// The head so far, cut at the largest `limits` allows and the blank line after it.
    private(set) var bytes: [UInt8] = []
    /// Every byte read, kept or not.
    private(set) var received = 0
    /// Where the last search for the blank line began: past what the search before looked at
    /// (but for the 3 bytes a `\r\n\r\n` split across reads may start in), so a head trickled
    /// a byte at a time costs linear time on the loop, not quadratic.
    private(set) var searchedFrom = 0

    init(limits: HTTPHeadLimits) {
        self.limits = limits
    }

    /// Takes the next bytes read; whether the head is whole, or cannot be (malformed, or past
    /// the limits).
    mutating func take(_ chunk: UnsafeRawBufferPointer) -> Bool {
        searchedFrom = max(0, bytes.count - 3)
        bytes.append(contentsOf: chunk.prefix(max(0, limits.maximumSize + 4 - bytes.count)))
        received += chunk.count
        let ended: Bool
        do { ended = try HTTPHead.parse(bytes, searchingFrom: searchedFrom, limits: limits) != nil } catch { ended = true }
        return ended || received >= limits.maximumSize
    }
}
