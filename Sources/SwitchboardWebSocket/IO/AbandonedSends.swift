import Foundation

/// Bytes of awaited sends still queued whose callers stopped waiting (cancelled).
///
/// An awaited send always queues, because each waiting caller holds one frame back. A caller
/// that gives up no longer does: a loop that sends with a timeout to a peer that never reads
/// would queue a frame per turn. While any such bytes wait, an awaited send past
/// `maximumQueuedBytes` is refused as one nobody awaits is (found by review).
final class AbandonedSends: @unchecked Sendable {
    private let lock = NSLock()
    private var bytes = 0

    /// Whether any abandoned frame is still queued.
    var any: Bool { lock.withLock { bytes > 0 } }

    /// One awaited frame: abandoned by its caller or finished by the socket, whichever is first.
    final class Frame: @unchecked Sendable {
        private let lock = NSLock()
        private var size = 0
        private var abandoned = false
        private var finished = false
        private let owner: AbandonedSends

        init(owner: AbandonedSends) { self.owner = owner }

        /// The frame's size, once made (before the socket can finish it).
        func made(size: Int) { lock.withLock { self.size = size } }

        /// Its caller stopped waiting: counted until the socket finishes it.
        func abandon() {
            let count: Int? = lock.withLock {
                guard !finished, !abandoned else { return nil }
                abandoned = true
                return size
            }
            if let count { owner.lock.withLock { owner.bytes += count } }
        }

        /// The socket took it, or failed: no longer counted.
        func finish() {
            let count: Int? = lock.withLock {
                guard !finished else { return nil }
                finished = true
                return abandoned ? size : nil
            }
            if let count { owner.lock.withLock { owner.bytes -= count } }
        }
    }
}
