import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Whoever a channel hands what it reads. Called on the channel's loop, one call at a time.
package protocol ChannelDelegate: AnyObject, Sendable {
    /// Bytes arrived (plaintext, past TLS); valid only during the call.
    func channelRead(_ bytes: UnsafeRawBufferPointer)
    /// Nothing more will be read: the peer closed (`reason` nil) or the stream failed. Once.
    /// A ``SocketChannel`` with TLS reports a peer that ends TCP without close_notify, while
    /// the channel is open, as a failure (``SocketChannel/uncleanShutdown``).
    func channelEnded(reason: String?)
    /// A write nobody awaited failed after it was queued; the channel is closing.
    func channelWriteFailed(_ reason: String)
}

/// One non-blocking socket served by an event loop: reads when the loop says it is
/// readable and hands the bytes (decrypted, with TLS) to its delegate; writes go straight
/// to the kernel from whichever thread sends, and what the kernel does not take at once
/// waits in order until the loop says there is room. So no thread ever blocks on it.
///
/// Writes nobody awaits made on the loop's own thread (a server answering what one read
/// brought, callers pinned to the loop) are collected and sent together by the loop, once it
/// has served its ready sockets and again before it waits: one system call for many frames.
package final class SocketChannel: IOHandler, @unchecked Sendable {
    /// What became of a write.
    package enum WriteResult: Sendable {
        /// The kernel took all of it.
        case written
        /// Part or all of it waits for room; its completion reports the outcome.
        case queued
        /// The channel is closed or the socket refused it.
        case failed(String)
    }

    private struct PendingWrite {
        var bytes: [UInt8]
        var offset: Int
        let completion: (@Sendable (String?) -> Void)?
    }

    private enum State { case idle, handshaking, open, closing, closed }

    /// Why a TLS channel ended when the peer closed TCP without TLS's close_notify.
    package static let uncleanShutdown = "the peer closed the connection without TLS close_notify: what it sent may have been cut short"

    /// The loop that reads this socket and runs its delegate.
    package let loop: EventLoop
    private let handle: SocketDescriptor
    private let tls: TLSSession?

    private let lock = AdaptiveLock()
    // Stored state below is reached only under its lock or on the loop's thread, which
    // already makes each access exclusive: `@exclusivity(unchecked)` drops the runtime's own
    // check, about 80 instructions an access and 5% of a call (docs/performance.md).
    @exclusivity(unchecked) private var state = State.idle
    @exclusivity(unchecked) private var pending: [PendingWrite] = []
    @exclusivity(unchecked) private var pendingStart = 0
    @exclusivity(unchecked) private var queued = 0
    /// Bytes the TLS session wrote on its own since the queue last drained.
    @exclusivity(unchecked) private var unsentSessionOutput = 0
    /// Written on the loop's thread this turn, sent as one by the loop
    /// (``flushCorked()``). Empty whenever `pending` holds anything, so bytes keep their order.
    @exclusivity(unchecked) private var corked: [UInt8] = []
    /// `send` system calls made (tests check that one turn's writes share one).
    @exclusivity(unchecked) private var sendCalls = 0
    @exclusivity(unchecked) private var interest: IOInterest = []
    @exclusivity(unchecked) private var wantsRead = true
    @exclusivity(unchecked) private var token: UInt64 = 0
    /// Closed gracefully, the sending side shut (or left open for the peer to end first):
    /// what the peer still sends is read and dropped until it closes too, or the linger ends.
    @exclusivity(unchecked) private var lingering = false
    /// A graceful close leaves the first FIN to the peer (``letPeerCloseFirst()``).
    @exclusivity(unchecked) private var peerClosesFirst = false
    /// How long this channel's linger lasts (``lingerTimeout`` unless a test shortens or
    /// lengthens it).
    @exclusivity(unchecked) private var lingerLimit = SocketChannel.lingerTimeout
    /// Run once the descriptor is closed (after any linger): a server frees the connection's
    /// slots only then, so sockets closing slowly still count against its limits.
    @exclusivity(unchecked) private var releaseHandlers: [@Sendable () -> Void] = []
    @exclusivity(unchecked) private var isReleased = false
    @exclusivity(unchecked) private var lingerTimer: LoopTimer?
    @exclusivity(unchecked) private var lingeredBytes = 0
    /// How long a graceful close reads and drops what the peer still sends, and how much:
    /// closing a TCP socket with unread data sends a reset, which can destroy the end of what
    /// this side sent (a 503, a close frame) before the peer reads it.
    package static let lingerTimeout: Duration = .seconds(2)
    package static let lingerByteLimit = 1 << 20
    @exclusivity(unchecked) private var delegate: (any ChannelDelegate)?
    @exclusivity(unchecked) private var handshakeDone: (@Sendable (String?) -> Void)?
    /// Plaintext written before TLS finished (a server that speaks first, as HTTP/2 does):
    /// sealed and sent, in order, once the handshake is done.
    @exclusivity(unchecked) private var beforeHandshake: [(bytes: [UInt8], completion: (@Sendable (String?) -> Void)?)] = []
    @exclusivity(unchecked) private var closeTimer: LoopTimer?
    /// `closeAfterFlushing` came during the TLS handshake: what was written before it is
    /// still sent once the handshake completes, and the close follows.
    @exclusivity(unchecked) private var closeAfterHandshake = false
    /// The delegate has heard that reading is over; nothing more is read or reported.
    @exclusivity(unchecked) private var readEnded = false
    /// An end that came while reading was paused (close_notify or a TLS failure among the
    /// records of one read): the delegate hears it when it resumes reading.
    @exclusivity(unchecked) private var deferredEnd: String??
    /// The end of reading a delegate has heard (peer's FIN, close_notify, a read error), for a
    /// delegate that takes the open channel over later.
    @exclusivity(unchecked) private var heardEnd: String??

    /// Wraps a connected socket (the channel owns it from now on, and makes it non-blocking),
    /// with `tls` to encrypt and decrypt, served by `loop`. Nothing is read until ``activate``.
    package init(descriptor: Int32, loop: EventLoop, tls: TLSSession? = nil) {
        self.loop = loop
        self.handle = SocketDescriptor(descriptor)
        self.tls = tls
        let flags = fcntl(descriptor, F_GETFL, 0)
        _ = fcntl(descriptor, F_SETFL, flags | O_NONBLOCK)
        var yes: Int32 = 1
        setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &yes, socklen_t(MemoryLayout<Int32>.size))
        #if canImport(Darwin)
        setsockopt(descriptor, SOL_SOCKET, SO_NOSIGPIPE, &yes, socklen_t(MemoryLayout<Int32>.size))
        #endif
    }

    /// The descriptor's number, for socket options in tests; valid while the channel is open.
    package var descriptor: Int32 { handle.number }

    /// Bytes waiting for room in the kernel.
    package var queuedByteCount: Int { lock.withLock { queued } }

    /// The most one turn's writes collect before they go out at once: a task that writes a
    /// lot without suspending still sends as it goes.
    package static let corkLimit = 64 * 1024

    /// How many `send` system calls the channel has made so far.
    package var sendCallCount: Int { lock.withLock { sendCalls } }

    /// Whether the channel has closed.
    package var isClosed: Bool { lock.withLock { state == .closed } }

    /// The protocol TLS's ALPN settled on (after the handshake), or nil without TLS or ALPN.
    package var negotiatedProtocol: String? {
        guard let tls else { return nil }
        return lock.withLock { tls.engine.negotiatedProtocol }
    }

    // MARK: Starting

    /// Registers with the loop and starts reading for `delegate`. With TLS, runs the
    /// handshake first: `handshakeDone` gets `nil` when it completes, or why it failed
    /// (the channel is closed then); reading for the delegate starts after it.
    package func activate(delegate: any ChannelDelegate, handshakeDone: (@Sendable (String?) -> Void)? = nil) {
        loop.executeHere { [self] in
            var endedBefore: String??
            let starting: Bool? = lock.withLock {
                // Already reading: the new delegate takes over from the next byte.
                if state == .open || state == .closing {
                    self.delegate = delegate
                    // Reading ended before it took over (the peer's FIN in the read that
                    // brought an upgrade): it hears so too, or it would wait for bytes for ever.
                    if readEnded { endedBefore = heardEnd }
                    return false
                }
                // Closed before it started: whoever waits for the handshake hears so below.
                guard state == .idle else { return state == .closed ? nil : false }
                self.delegate = delegate
                self.handshakeDone = handshakeDone
                state = tls == nil ? .open : .handshaking
                interest = wantsRead || tls != nil ? .read : []
                if !pending.isEmpty { interest.insert(.write) }
                return true
            }
            guard let starting else {
                // Ended before this delegate took over (a TLS failure in the read that also
                // brought an upgrade's answer, told to the delegate before it): it hears so too,
                // or it would take the connection for open for ever (found by review).
                if let handshakeDone { handshakeDone("the socket is closed") } else { delegate.channelEnded(reason: "the socket is closed") }
                return
            }
            guard starting else {
                if let endedBefore { delegate.channelEnded(reason: endedBefore) }
                return
            }
            let registeredInterest = lock.withLock { interest }
            let registered: UInt64? = handle.withDescriptor { number in
                try? loop.register(number, interest: registeredInterest, handler: self)
            } ?? nil
            guard let registered else {
                close(reason: "cannot watch the socket")
                return
            }
            // `setReading` or `write` from another thread between reading the interest for
            // `register` and setting the token changed only the variable: watch what is wanted now.
            lock.withLock {
                token = registered
                interest = registeredInterest
                updateInterest()
            }
            if tls != nil { continueHandshake() } else { handshakeDone?(nil) }
        }
    }

    // MARK: Reading

    package func readable() {
        if lock.withLock({ lingering }) {
            dropLingeringBytes()
            return
        }
        // Reading paused (backpressure) or over: a hangup reported anyway is not a reason to
        // read past the pause.
        guard let delegate = lock.withLock({ () -> (any ChannelDelegate)? in
            guard state == .handshaking || ((state == .open || state == .closing) && wantsRead) else { return nil }
            return self.delegate
        }) else { return }
        let buffer = loop.readBuffer
        let count = receive(into: buffer)
        if count < 0 {
            if errno == EAGAIN || errno == EWOULDBLOCK { return }
            let reason = String(cString: strerror(errno))
            if !endHandshake(reason) { end(reason: reason, delegate: delegate) }
            return
        }
        if count == 0 {
            if !endHandshake("the peer closed the connection during the TLS handshake") {
                // Anyone on the path can end TCP; only close_notify says the TLS stream is
                // whole (RFC 8446 section 6.1), so its absence is a failure, as swift-nio-ssl's
                // unclean shutdown is. Not when we closed first: a peer need not answer ours.
                let truncated = tls != nil && lock.withLock { state == .open }
                end(reason: truncated ? Self.uncleanShutdown : nil, delegate: delegate)
            }
            return
        }
        let bytes = UnsafeRawBufferPointer(rebasing: buffer[0..<count])
        guard let tls else {
            delegate.channelRead(bytes)
            return
        }
        lock.withLock { tls.engine.feed(bytes) }
        if lock.withLock({ state == .handshaking }) {
            continueHandshake()
            // A peer may send application data right behind its last handshake message.
            if lock.withLock({ state != .open && state != .closing }) { return }
        }
        decryptAvailable(tls)
    }

    /// Hands the delegate every whole record fed so far, one at a time, outside the lock (the
    /// delegate may write, which takes it). The delegate is looked up for each record: one
    /// that hands the channel over (a server's upgrade to a WebSocket connection) must not
    /// be given the records that follow.
    private func decryptAvailable(_ tls: TLSSession) {
        while true {
            let (result, current) = lock.withLock { (tls.engine.read(into: tls.plaintext), self.delegate) }
            guard let delegate = current else { return }
            switch result {
            case let .bytes(count):
                delegate.channelRead(UnsafeRawBufferPointer(rebasing: tls.plaintext[0..<count]))
            case .wantInput:
                flushSessionOutput()
                return
            case .closed:
                end(reason: nil, delegate: delegate)
                return
            case let .failed(reason):
                // The session is dead: send the alert OpenSSL queued for the peer, and close
                // rather than let later writes go to a failed session. The session's failure
                // is the reason given, whether or not the alert could be sent.
                _ = sendSessionOutput()
                fail(reason: reason)
                return
            }
        }
    }

    /// The stream is over for reading: stop watching it for reads and tell the delegate once,
    /// now, or when it resumes reading if it has paused.
    private func end(reason: String?, delegate: any ChannelDelegate) {
        let first: Bool = lock.withLock {
            guard !readEnded else { return false }
            guard wantsRead || interest.contains(.read) else {
                // Paused in the middle of one read's records: dropped, this end would leave the
                // delegate waiting, or let the peer's later FIN pass for a truncation.
                if deferredEnd == nil { deferredEnd = .some(reason) }
                return false
            }
            readEnded = true
            heardEnd = .some(reason)
            wantsRead = false
            updateInterest()
            return true
        }
        if first { delegate.channelEnded(reason: reason) }
    }

    /// Closes for a failure the channel found itself (a dead TLS session, output it could not
    /// send, a socket it could not watch). The delegate hears it at once, paused or not: the
    /// channel is released now, so a resume would never come to deliver a deferred end, and
    /// the delegate would hold its connection open for ever.
    private func fail(reason: String) {
        let told: (any ChannelDelegate)? = lock.withLock {
            guard !readEnded, state != .closed, let current = delegate else { return nil }
            readEnded = true
            deferredEnd = nil
            return current
        }
        close(reason: reason)
        // Never from inside the caller: it may hold its own lock around the failing write.
        if let told { loop.execute { told.channelEnded(reason: reason) } }
    }

    /// Its loop shut down with the channel open: it fails as if the socket had.
    package func loopStopped() {
        fail(reason: "the event loop shut down")
    }

    /// Stops or resumes reading (backpressure); safe from any thread. Resuming after an end
    /// that came while paused reports that end, on the loop.
    package func setReading(_ on: Bool) {
        let deferred: (reason: String?, delegate: any ChannelDelegate)? = lock.withLock {
            if on, !readEnded, let reason = deferredEnd, let delegate {
                deferredEnd = nil
                readEnded = true
                heardEnd = .some(reason)
                return (reason, delegate)
            }
            guard state != .closed, !readEnded, wantsRead != on else { return nil }
            wantsRead = on
            updateInterest()
            return nil
        }
        if let deferred { loop.execute { deferred.delegate.channelEnded(reason: deferred.reason) } }
    }

    /// Called with the lock held: watches for what is wanted now.
    private func updateInterest() {
        var wanted: IOInterest = []
        if wantsRead || state == .handshaking { wanted.insert(.read) }
        if pendingStart < pending.count { wanted.insert(.write) }
        guard wanted != interest, token != 0, state != .closed else {
            if token == 0 { interest = wanted }
            return
        }
        let previous = interest
        interest = wanted
        let watched = handle.withDescriptor { number in loop.reregister(number, token: token, from: previous, to: wanted) } ?? true
        // Refused: no event would ever come for it, so the connection would stall until some
        // timeout. It ends now instead (not here: the lock is held).
        if !watched { loop.execute { [weak self] in self?.fail(reason: "cannot watch the socket") } }
    }

    // MARK: TLS handshake

    /// The stream ended while the TLS handshake was under way: the handshake fails with
    /// `reason` (once), and the channel closes. Whether it was under way.
    private func endHandshake(_ reason: String) -> Bool {
        let (handshaking, done): (Bool, (@Sendable (String?) -> Void)?) = lock.withLock {
            guard state == .handshaking else { return (false, nil) }
            defer { handshakeDone = nil }
            return (true, handshakeDone)
        }
        guard handshaking else { return false }
        close(reason: reason)
        done?(reason)
        return true
    }

    /// Advances the handshake with what has been fed.
    private func continueHandshake() {
        guard let tls else { return }
        let step = lock.withLock { tls.engine.handshake() }
        if let sendFailure = sendSessionOutput() {
            // A server's handshake is complete once it has read the client's Finished; what
            // it sends then (TLS 1.3 session tickets) a client that sent a request with its
            // Finished and left never reads. The request is still read.
            if step == .done && tls.engine.isServer {
                openWithBrokenWrites(sendFailure)
            } else {
                close(reason: sendFailure)
            }
            return
        }
        switch step {
        case .wantInput:
            return
        case .done:
            var failure: String?
            var closeNow = false
            // Early writers were told `.queued`: their completions are their only answer.
            var sent: [@Sendable (String?) -> Void] = []
            var unsent: [@Sendable (String?) -> Void] = []
            let done: (@Sendable (String?) -> Void)? = lock.withLock {
                guard state == .handshaking else { return nil }
                state = .open
                for (index, early) in beforeHandshake.enumerated() {
                    let sealed = early.bytes.withUnsafeBytes { tls.engine.write($0) }
                    let result = sealed ? sendOrQueue(tls.engine.takeOutput(), completion: early.completion) : .failed("TLS write failed")
                    switch result {
                    case .written: if let completion = early.completion { sent.append(completion) }
                    case .queued: break
                    case let .failed(reason): failure = reason
                    }
                    if failure != nil {
                        unsent = beforeHandshake[index...].compactMap(\.completion)
                        break
                    }
                }
                queued -= beforeHandshake.reduce(0) { $0 + $1.bytes.count }
                beforeHandshake = []
                if failure == nil && closeAfterHandshake {
                    switch startClosing() {
                    case .closeNow: closeNow = true
                    case .waitForFlush: break
                    case let .failed(reason): failure = reason
                    }
                }
                updateInterest()
                defer { handshakeDone = nil }
                return handshakeDone
            }
            for completion in sent { completion(nil) }
            if let failure {
                for completion in unsent { completion(failure) }
                close(reason: failure)
                done?(failure)
                return
            }
            done?(nil)
            if closeNow { close(reason: nil) }
        case let .failed(reason):
            let done = lock.withLock { () -> (@Sendable (String?) -> Void)? in
                defer { handshakeDone = nil }
                return handshakeDone
            }
            close(reason: reason)
            done?(reason)
        }
    }

    /// The server's handshake completed but the socket no longer takes writes: the channel
    /// opens, as a TCP connection whose peer left does, so that what the peer sent is read to
    /// its end; writes made before the handshake fail with `reason`, later ones as they are made.
    private func openWithBrokenWrites(_ reason: String) {
        let (opened, done, early, closing): (Bool, (@Sendable (String?) -> Void)?, [@Sendable (String?) -> Void], Bool) = lock.withLock {
            guard state == .handshaking else { return (false, nil, [], false) }
            state = .open
            let early = beforeHandshake.compactMap(\.completion)
            queued -= beforeHandshake.reduce(0) { $0 + $1.bytes.count }
            beforeHandshake = []
            updateInterest()
            defer { handshakeDone = nil }
            return (true, handshakeDone, early, closeAfterHandshake)
        }
        guard opened else { return }
        for completion in early { completion(reason) }
        done?(nil)
        // Asked to close once the handshake was done: nothing more can be sent.
        if closing { close(reason: reason) }
    }

    /// Sends what the TLS session has queued itself (handshake, alerts, tickets); returns
    /// why that failed.
    private func sendSessionOutput() -> String? {
        guard let tls else { return nil }
        return lock.withLock {
            let output = tls.engine.takeOutput()
            guard !output.isEmpty else { return nil }
            if case let .failed(reason) = sendOrQueue(output, completion: nil) { return reason }
            // What the session writes on its own (an alert refusing each renegotiation, an
            // answer to each key update) is no layer's write, so no layer's output limit sees
            // it: a peer that sends such records and never reads made it queue without end
            // (found by review). Counted while the queue does not drain, and bounded.
            if pendingStart < pending.count {
                unsentSessionOutput += output.count
                if unsentSessionOutput > Self.maximumUnsentSessionOutput {
                    return "the peer sends TLS records that need answers and does not read them"
                }
            }
            return nil
        }
    }

    /// Bytes the TLS session may write on its own while the peer reads none of them: 64 KiB,
    /// some two thousand alerts, far more than any handshake or ticket needs.
    static let maximumUnsentSessionOutput = 64 * 1024

    /// Sends what the TLS session has queued itself, and closes if that fails.
    private func flushSessionOutput() {
        if let failure = sendSessionOutput() { fail(reason: failure) }
    }

    // MARK: Writing

    /// Sends `bytes` (encrypted first, with TLS) from the calling thread: what the kernel
    /// takes now goes now, the rest waits in order for the loop. `completion` (for `.queued`)
    /// runs once the last byte is handed over, with the failure if it is not. Without a
    /// completion, on the loop's thread, the bytes go when the loop sends what its turn
    /// collected (`.written`; a failure then reaches the delegate's
    /// ``ChannelDelegate/channelWriteFailed(_:)``).
    package func write(_ bytes: [UInt8], completion: (@Sendable (String?) -> Void)?) -> WriteResult {
        // Only a write nobody awaits is collected: an awaited one would suspend its caller
        // for a completion that a direct send makes needless.
        let collect = completion == nil && loop.inEventLoop
        return lock.withLock {
            guard state == .open || state == .idle || state == .handshaking else { return .failed("the socket is closed") }
            guard !closeAfterHandshake else { return .failed("the socket is closing") }
            guard let tls else { return collect ? collectOrSend(bytes) : sendOrQueue(bytes, completion: completion) }
            if state != .open {
                beforeHandshake.append((bytes, completion))
                queued += bytes.count
                return .queued
            }
            let sealed = bytes.withUnsafeBytes { tls.engine.write($0) }
            guard sealed else { return .failed("TLS write failed") }
            let output = tls.engine.takeOutput()
            return collect ? collectOrSend(output) : sendOrQueue(output, completion: completion)
        }
    }

    /// Called with the lock held, on the loop's thread: keeps `bytes` for the loop to send
    /// while nothing waits for room and the turn has not collected ``corkLimit`` bytes.
    private func collectOrSend(_ bytes: [UInt8]) -> WriteResult {
        guard state == .open, pendingStart == pending.count, corked.count + bytes.count <= Self.corkLimit else {
            return sendOrQueue(bytes, completion: nil)
        }
        if corked.isEmpty {
            loop.scheduleFlush(self)
            // Most turns write once: that write's own buffer is sent, not copied.
            corked = bytes
        } else {
            corked.append(contentsOf: bytes)
        }
        return .written
    }

    /// On the loop, between its sockets and its jobs and before it waits: sends what was
    /// collected. A failure is reported as a queued write's is: the writers were told it went.
    package func flushCorked() {
        if let failure = lock.withLock({ sendCorked() }) { writeFailed(failure) }
    }

    /// Bytes the channel had already accepted (collected or queued) could not be sent: the
    /// delegate hears it, and the channel closes. Not with the lock held.
    private func writeFailed(_ reason: String) {
        lock.withLock { self.delegate }?.channelWriteFailed(reason)
        close(reason: reason)
    }

    /// Called with the lock held: hands what this turn collected to the kernel, queuing what
    /// it does not take; why that failed, if it did.
    private func sendCorked() -> String? {
        guard !corked.isEmpty else { return nil }
        switch sendNow(corked, from: 0) {
        case let .failure(reason):
            corked = []
            return reason.description
        case let .success(sent):
            if sent < corked.count {
                pending.append(PendingWrite(bytes: corked, offset: sent, completion: nil))
                queued += corked.count - sent
                corked = []
                updateInterest()
            } else {
                // Not kept: an idle connection holds no buffer.
                corked = []
            }
            return nil
        }
    }

    /// Called with the lock held, before anything else is sent: what this turn collected goes
    /// first. A failure ends the channel later, on the loop (the lock is held here).
    private func sendCorkedFirst() -> String? {
        guard !corked.isEmpty, let failure = sendCorked() else { return nil }
        loop.execute { [self] in writeFailed(failure) }
        return failure
    }

    /// Called with the lock held. Writes only while nothing waits, so bytes keep their order.
    private func sendOrQueue(_ bytes: [UInt8], completion: (@Sendable (String?) -> Void)?) -> WriteResult {
        if let failure = sendCorkedFirst() { return .failed(failure) }
        var offset = 0
        if pendingStart == pending.count {
            switch sendNow(bytes, from: 0) {
            case let .success(sent): offset = sent
            case let .failure(reason): return .failed(reason.description)
            }
            if offset == bytes.count { return .written }
        }
        pending.append(PendingWrite(bytes: bytes, offset: offset, completion: completion))
        queued += bytes.count - offset
        updateInterest()
        return .queued
    }

    /// Sends what the kernel takes without blocking; called with the lock held.
    private func sendNow(_ bytes: [UInt8], from start: Int) -> Result<Int, WriteFailure> {
        let outcome: Result<Int, WriteFailure>? = handle.withDescriptor { number in
            var offset = start
            while offset < bytes.count {
                let sent = bytes.withUnsafeBytes { buffer in
                    send(number, buffer.baseAddress! + offset, bytes.count - offset, Self.sendFlags)
                }
                sendCalls &+= 1
                if sent < 0 {
                    if errno == EINTR { continue }
                    if errno == EAGAIN || errno == EWOULDBLOCK { break }
                    return .failure(WriteFailure("write failed: \(String(cString: strerror(errno)))"))
                }
                offset += sent
            }
            return .success(offset - start)
        }
        return outcome ?? .failure(WriteFailure("write failed: the socket is closed"))
    }

    package func writable() {
        var finished: [(@Sendable (String?) -> Void, String?)] = []
        var failure: String?
        let closeNow: Bool = lock.withLock {
            while pendingStart < pending.count {
                let item = pending[pendingStart]
                switch sendNow(item.bytes, from: item.offset) {
                case let .failure(reason):
                    failure = reason.description
                case let .success(sent):
                    pending[pendingStart].offset += sent
                    queued -= sent
                }
                if failure != nil { break }
                guard pending[pendingStart].offset == item.bytes.count else { break }
                if let completion = item.completion { finished.append((completion, nil)) }
                pendingStart += 1
            }
            if let failure {
                for item in pending[pendingStart...] { if let completion = item.completion { finished.append((completion, failure)) } }
                pending = []
                pendingStart = 0
                queued = 0
            } else if pendingStart == pending.count {
                pending.removeAll(keepingCapacity: pending.capacity <= 64)
                pendingStart = 0
                unsentSessionOutput = 0
            } else if pendingStart > 64 && pendingStart * 2 > pending.count {
                pending.removeFirst(pendingStart)
                pendingStart = 0
            }
            updateInterest()
            return state == .closing && pendingStart == pending.count
        }
        for (completion, error) in finished { completion(error) }
        if let failure {
            writeFailed(failure)
        } else if closeNow {
            close(reason: nil)
        }
    }

    // MARK: Closing

    /// Closes once what is queued has been written, or after `timeout` at the latest
    /// (a peer that stops reading cannot hold the socket); safe from any thread.
    package func closeAfterFlushing(timeout: Duration) {
        enum Next { case alreadyClosing, closeNow, waitForFlush, writeFailed(String) }
        let next: Next = lock.withLock {
            guard state != .closed && state != .closing && !closeAfterHandshake else { return .alreadyClosing }
            if tls != nil && (state == .idle || state == .handshaking) {
                closeAfterHandshake = true
                return .waitForFlush
            }
            switch startClosing() {
            case .closeNow: return .closeNow
            case .waitForFlush: return .waitForFlush
            case let .failed(reason): return .writeFailed(reason)
            }
        }
        switch next {
        case .alreadyClosing: return
        case .closeNow: close(reason: nil); return
        // Reported as a queued write's failure is, on the loop (a caller may hold a lock the
        // delegate takes), with the delegate still listening: not closed gracefully first,
        // which would let it go.
        case let .writeFailed(reason):
            loop.execute { [self] in writeFailed(reason) }
            return
        case .waitForFlush: break
        }
        let timer = loop.schedule(after: timeout) { [weak self] in self?.close(reason: "close timed out") }
        let keep: Bool = lock.withLock {
            guard state == .closing || ((state == .idle || state == .handshaking) && closeAfterHandshake) else { return false }
            closeTimer = timer
            return true
        }
        if !keep { timer.cancel() }
    }

    /// Called with the lock held on an open channel: queues TLS's close_notify, then either
    /// says to close now (nothing waits) or moves to `.closing` until the queue drains.
    private func startClosing() -> ClosingStart {
        if let tls {
            tls.engine.shutdown()
            let output = tls.engine.takeOutput()
            if !output.isEmpty, case let .failed(reason) = sendOrQueue(output, completion: nil) { return .failed(reason) }
        }
        // Sent here, not through `sendCorkedFirst`: its report, left to the loop, would find the
        // delegate already gone once the close below had begun.
        if let failure = sendCorked() { return .failed(failure) }
        guard pendingStart < pending.count else { return .closeNow }
        state = .closing
        return .waitForFlush
    }

    /// What ``startClosing()`` left to do: close now (everything went), wait for the queued
    /// bytes to drain, or report bytes already accepted that could not be sent.
    private enum ClosingStart {
        case closeNow
        case waitForFlush
        case failed(String)
    }

    /// Closes: queued writes fail and the socket is released on the loop, after it stops
    /// watching it. With a reason (a failure, an abort) the socket is shut down now, so the
    /// peer sees the end at once; without one (graceful) it lingers first, its sending side
    /// shut unless the peer is to close first. Safe from any thread.
    package func close(reason: String? = nil) {
        var unheard: (any ChannelDelegate)?
        var linger = false
        var waitForPeer = false
        var wasLingering: Bool?
        let (dropped, early, timer, handshake): ([PendingWrite], [(@Sendable (String?) -> Void)?], LoopTimer?, (@Sendable (String?) -> Void)?) = lock.withLock {
            guard state != .closed else {
                wasLingering = lingering
                return ([], [], nil, nil)
            }
            // Closed in the middle of the TLS handshake: whoever waits for it hears why now,
            // not at its own timeout.
            let handshake = state == .handshaking ? handshakeDone : nil
            // Nobody waits for the handshake (a server's, whose delegate starts with it), or
            // the socket could not be watched at all: the delegate hears that the stream is
            // over, or it would hold the connection until a timeout of its own.
            if (state == .handshaking && handshakeDone == nil) || (token == 0 && state != .idle), !readEnded {
                unheard = delegate
                readEnded = true
            }
            // A graceful end of an open stream lingers; a failure, an abort or a handshake
            // that never finished closes at once.
            linger = reason == nil && token != 0 && (state == .open || state == .closing)
            waitForPeer = peerClosesFirst
            // Set now, not when the loop starts the linger: an abort in between must see it.
            if linger { lingering = true }
            // Its writers were told it went: the kernel takes what it can, as it would have then.
            _ = sendCorked()
            state = .closed
            defer {
                pending = []
                pendingStart = 0
                queued = 0
                closeTimer = nil
                handshakeDone = nil
                beforeHandshake = []
            }
            return (Array(pending[pendingStart...]), beforeHandshake.map(\.completion), closeTimer, handshake)
        }
        if let wasLingering {
            // Closed already: a graceful close again changes nothing (the object that owned
            // the channel going away, say), and an abort cuts a linger short.
            if wasLingering && reason != nil {
                handle.shutdownNow()
                loop.executeHere { [self] in finishLingering() }
            }
            return
        }
        timer?.cancel()
        handshake?(reason ?? "the socket closed during the TLS handshake")
        if let unheard {
            // Never from inside the caller: it may hold its own lock around this close.
            loop.execute { unheard.channelEnded(reason: reason ?? "the socket closed during the TLS handshake") }
        }
        let lingers = linger
        if !lingers {
            handle.shutdownNow()
        } else if !waitForPeer {
            handle.shutdownWrite()
        }
        for item in dropped { item.completion?(reason ?? "the socket is closed") }
        for completion in early { completion?(reason ?? "the socket is closed") }
        loop.executeHere { [self] in
            if lingers && startLingering() { return }
            release()
        }
    }

    /// One `recv` into `buffer`, retried on EINTR: the count, 0 at the peer's end, or -1 with
    /// `errno` set (0 too once the socket is released).
    private func receive(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        handle.withDescriptor { number in
            while true {
                let count = recv(number, buffer.baseAddress, buffer.count, 0)
                if count >= 0 || errno != EINTR { return count }
            }
        } ?? 0
    }

    /// On the loop: stops watching the socket and releases it.
    private func release() {
        let (registered, watched) = lock.withLock { (token, interest) }
        if registered != 0 {
            _ = handle.withDescriptor { number in loop.deregister(number, token: registered, interest: watched) }
        }
        handle.close()
        // The delegate often holds this channel: let it go.
        let handlers = lock.withLock { () -> [@Sendable () -> Void] in
            delegate = nil
            isReleased = true
            defer { releaseHandlers = [] }
            return releaseHandlers
        }
        for handler in handlers { handler() }
    }

    /// A channel let go without `close()` (its descriptor closes with it) still releases its
    /// owner's slots.
    deinit {
        let handlers = lock.withLock { () -> [@Sendable () -> Void] in
            guard !isReleased else { return [] }
            isReleased = true
            return releaseHandlers
        }
        for handler in handlers { handler() }
    }

    /// Runs `handler` once the descriptor has been closed, after a graceful close's linger
    /// (at once if it has been already). A server holds a connection's slots until then: a
    /// peer that closes many connections slowly must not hold descriptors nobody counts.
    package func whenReleased(_ handler: @escaping @Sendable () -> Void) {
        let now = lock.withLock { () -> Bool in
            if isReleased { return true }
            releaseHandlers.append(handler)
            return false
        }
        if now { handler() }
    }

    /// On the loop, after a graceful close shut the sending side (or left it to the peer to
    /// end first): watches for reads only, to
    /// drop them, until the peer's end, the byte limit or the timeout. Whether it started.
    private func startLingering() -> Bool {
        let started: Bool = lock.withLock {
            guard token != 0, lingering else {
                lingering = false
                return false
            }
            delegate = nil
            let previous = interest
            interest = .read
            if previous != .read {
                let watched = handle.withDescriptor { number in loop.reregister(number, token: token, from: previous, to: .read) } ?? true
                if !watched { loop.execute { [weak self] in self?.finishLingering() } }
            }
            return true
        }
        guard started else { return false }
        let timer = loop.schedule(after: lock.withLock { lingerLimit }) { [weak self] in self?.finishLingering() }
        let keep = lock.withLock {
            if lingering { lingerTimer = timer }
            return lingering
        }
        if !keep { timer.cancel() }
        return true
    }

    /// From now on a graceful close does not shut the sending side: the socket stays open,
    /// reading and dropping, until the peer closes, for at most ``lingerTimeout``. A WebSocket
    /// client's close, so that the server's end closes first and holds TIME_WAIT
    /// (RFC 6455 §7.1.1); an abort or a failure still closes at once.
    package func letPeerCloseFirst() {
        lock.withLock { peerClosesFirst = true }
    }

    /// Sets how long this channel's linger lasts (tests).
    package func setLingerTimeout(_ timeout: Duration) {
        lock.withLock { lingerLimit = timeout }
    }

    /// On the loop: reads and drops what the peer sent; its end, an error or the byte limit
    /// ends the linger.
    private func dropLingeringBytes() {
        let count = receive(into: loop.readBuffer)
        if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return }
        let done: Bool = lock.withLock {
            if count > 0 { lingeredBytes += count }
            return count <= 0 || lingeredBytes > Self.lingerByteLimit
        }
        if done { finishLingering() }
    }

    /// On the loop: the linger is over; the socket goes (once).
    private func finishLingering() {
        let timer: LoopTimer?? = lock.withLock {
            guard lingering else { return nil }
            lingering = false
            defer { lingerTimer = nil }
            return .some(lingerTimer)
        }
        guard let timer else { return }
        timer?.cancel()
        release()
    }

    #if canImport(Glibc)
    static let sendFlags = Int32(MSG_NOSIGNAL)
    #else
    static let sendFlags: Int32 = 0
    #endif
}

/// A write failure's words.
struct WriteFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A TLS session and the plaintext space its channel decrypts into.
package final class TLSSession: @unchecked Sendable {
    let engine: TLSEngine
    /// One record's worth: TLS decrypts a record at a time.
    let plaintext: UnsafeMutableRawBufferPointer

    /// Wraps an engine for one channel.
    package init(_ engine: TLSEngine) {
        self.engine = engine
        plaintext = .allocate(byteCount: 16 * 1024 + 256, alignment: 16)
    }

    deinit { plaintext.deallocate() }
}
