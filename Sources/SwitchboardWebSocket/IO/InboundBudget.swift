import Foundation
import SwitchboardIO

/// Bytes received but not yet taken by the application, against a limit: over it, reading
/// pauses; at half of it, reading resumes. The gap keeps a consumer hovering at the limit
/// from toggling the reader on every message.
final class InboundBudget: @unchecked Sendable {
    private let lock = AdaptiveLock()
    private let limit: Int
    private var buffered = 0
    private var isPaused = false
    private let pause: @Sendable () -> Void
    private let resume: @Sendable () -> Void

    /// `pause` and `resume` are called under the budget's lock, so they cannot cross.
    init(limit: Int, pause: @escaping @Sendable () -> Void, resume: @escaping @Sendable () -> Void) {
        self.limit = max(1, limit)
        self.pause = pause
        self.resume = resume
    }

    /// What a message counts for: its payload, and at least 64 bytes, so that a flood of
    /// empty messages is bounded too.
    static func cost(of message: WebSocketMessage) -> Int {
        switch message {
        case let .text(text): return max(64, text.utf8.count)
        case let .binary(data): return max(64, data.count)
        }
    }

    /// Readers parked in `next()`, waiting for a message.
    private var waitingReaders = 0
    private var hasDelivered = false

    /// Whether the application may still owe an answer to a message: one was delivered, and
    /// either some wait untaken or no reader is back waiting for the next (it is still busy
    /// with the last, or not reading at all).
    var mayOweAnswers: Bool { lock.withLock { hasDelivered && (buffered > 0 || waitingReaders == 0) } }

    /// A reader waits for the next message.
    func readerWaits() { lock.withLock { waitingReaders += 1 } }

    /// A reader got a message, or the end.
    func readerWoke() { lock.withLock { waitingReaders -= 1 } }

    /// A message was handed to the stream.
    func take(_ bytes: Int) {
        lock.withLock {
            hasDelivered = true
            buffered += bytes
            if !isPaused && buffered > limit {
                isPaused = true
                pause()
            }
        }
    }

    /// Nobody will take what waits (the stream ended): none of it counts any more.
    func releaseAll() {
        lock.withLock {
            buffered = 0
            if isPaused {
                isPaused = false
                resume()
            }
        }
    }

    /// The application took a message.
    func release(_ bytes: Int) {
        lock.withLock {
            buffered -= bytes
            if isPaused && buffered <= limit / 2 {
                isPaused = false
                resume()
            }
        }
    }
}
