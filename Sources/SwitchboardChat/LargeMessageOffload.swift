import Foundation
import SwitchboardIO
import SwitchboardRuntime
import SwitchboardWebSocket

/// Keeps costly decoding off a connection's event loop, in order.
///
/// The loop serves many connections, so what one of them costs per message delays all the
/// others: a message larger than ``inlineLimit`` (a hostile envelope of a hundred thousand
/// header lines takes a while to decode) is handled on a serial queue instead, and so is
/// every message behind it until the queue is empty, so the order of messages never
/// changes. Small messages, the ordinary case, are handled right on the loop.
///
/// What waits in the queue is bounded: past `maximumQueuedBytes` (each message counted as
/// its payload plus ``perMessageCost``) or ``maximumQueuedMessages``, reading from the peer
/// pauses (`pause`), and it resumes once the queue is down to half, so a peer that sends
/// costly messages faster than they decode is held back by TCP. A small message queued
/// behind a large one is copied out of the parser's buffer: as a slice it would keep a whole
/// read buffer alive for a few bytes (a flood of empty frames behind one costly message).
final class LargeMessageOffload: @unchecked Sendable {
    /// Messages up to this size are handled on the loop.
    static let inlineLimit = 64 * 1024
    /// What a queued message costs beyond its payload (its copy, its closure, the queue's
    /// bookkeeping), as counted against `maximumQueuedBytes`.
    static let perMessageCost = 256
    /// The most messages queued before reading pauses, however small they are.
    static let maximumQueuedMessages = 4096

    private let lock = AdaptiveLock()
    private var queued = 0
    private var queuedBytes = 0
    private var isPaused = false
    private let maximumQueuedBytes: Int
    private let pause: @Sendable (Bool) -> Void
    private lazy var queue = DispatchQueue(label: "switchboard.chat.decode")
    private let handle: @Sendable (ReceivedWebSocketMessage) -> Void

    /// `pause(true)` stops reading from the peer, `pause(false)` resumes it.
    init(maximumQueuedBytes: Int, pause: @escaping @Sendable (Bool) -> Void, handle: @escaping @Sendable (ReceivedWebSocketMessage) -> Void) {
        self.maximumQueuedBytes = max(maximumQueuedBytes, Self.inlineLimit)
        self.pause = pause
        self.handle = handle
    }

    /// An offload for `socket`, pausing its reads, queueing at most its `maximumBufferedBytes`.
    convenience init(socket: WebSocketConnection, handle: @escaping @Sendable (ReceivedWebSocketMessage) -> Void) {
        self.init(maximumQueuedBytes: socket.maximumBufferedBytes, pause: { [weak socket] in socket?.setReadingPaused($0) }, handle: handle)
    }

    /// Handles `message` now, or after those queued before it.
    func receive(_ message: ReceivedWebSocketMessage) {
        let size = message.payload.count + Self.perMessageCost
        let offload: Bool = lock.withLock {
            guard queued > 0 || message.payload.count > Self.inlineLimit else { return false }
            queued += 1
            queuedBytes += size
            guard !isPaused, queuedBytes > maximumQueuedBytes || queued > Self.maximumQueuedMessages else { return true }
            isPaused = true
            // Applied under the lock, as the resume below is: applied after it, a resume
            // from the queue in between would leave reading paused for good with
            // `isPaused` false. (`pause` never calls back into this offload: the gate and
            // the channel only change what the loop watches.)
            pause(true)
            return true
        }
        guard offload else {
            handle(message)
            return
        }
        // Its own storage, unless it is the large one (which has a buffer of its own anyway).
        let kept = message.payload.count > Self.inlineLimit ? message : ReceivedWebSocketMessage(isText: message.isText, payload: ArraySlice(Array(message.payload)))
        let queue = lock.withLock { self.queue }
        queue.async { [self] in
            handle(kept)
            lock.withLock {
                queued -= 1
                queuedBytes -= size
                guard isPaused, queuedBytes <= maximumQueuedBytes / 2, queued <= Self.maximumQueuedMessages / 2 else { return }
                isPaused = false
                pause(false)
            }
        }
    }

    /// Waits until every message handed over so far has been handled.
    func waitUntilIdle() async {
        guard lock.withLock({ queued > 0 }) else { return }
        let queue = lock.withLock { self.queue }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            queue.async { continuation.resume() }
        }
    }
}
