import Foundation
import SwitchboardRuntime
import SwitchboardWebSocket

/// Keeps costly decoding off a connection's event loop, in order.
///
/// The loop serves many connections, so what one of them costs per message delays all the
/// others: a message larger than ``inlineLimit`` (a hostile envelope of a hundred thousand
/// header lines takes a while to decode) is handled on a serial queue instead, and so is
/// every message behind it until the queue is empty, so the order of messages never
/// changes. Small messages, the ordinary case, are handled right on the loop.
final class LargeMessageOffload: @unchecked Sendable {
    /// Messages up to this size are handled on the loop.
    static let inlineLimit = 64 * 1024

    private let lock = NSLock()
    private var queued = 0
    private lazy var queue = DispatchQueue(label: "switchboard.chat.decode")
    private let handle: @Sendable (ReceivedWebSocketMessage) -> Void

    init(handle: @escaping @Sendable (ReceivedWebSocketMessage) -> Void) {
        self.handle = handle
    }

    /// Handles `message` now, or after those queued before it.
    func receive(_ message: ReceivedWebSocketMessage) {
        let offload: Bool = lock.withLock {
            guard queued > 0 || message.payload.count > Self.inlineLimit else { return false }
            queued += 1
            return true
        }
        guard offload else {
            handle(message)
            return
        }
        let queue = lock.withLock { self.queue }
        queue.async { [self] in
            handle(message)
            lock.withLock { queued -= 1 }
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
