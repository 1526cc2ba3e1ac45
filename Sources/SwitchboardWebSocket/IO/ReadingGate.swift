import Foundation
import SwitchboardIO

/// Turns reading of a connection's socket on and off, and keeps count of the time it spent
/// off: a peer is not timed out for bytes this side's own backpressure kept it from sending.
final class ReadingGate: @unchecked Sendable {
    private let lock = NSLock()
    private let channel: any ByteChannel
    private var pausedSince: ContinuousClock.Instant?
    private var endedPauses = Duration.zero

    init(channel: any ByteChannel) {
        self.channel = channel
    }

    /// Reads (`true`) or stops reading (`false`).
    func setReading(_ on: Bool) {
        lock.withLock {
            if on, let since = pausedSince {
                endedPauses += ContinuousClock.now - since
                pausedSince = nil
            } else if !on, pausedSince == nil {
                pausedSince = .now
            }
            // Under the lock, so two callers' calls cannot cross on the way to the channel.
            channel.setReading(on)
        }
    }

    /// Whether reading is off now.
    var isPaused: Bool { lock.withLock { pausedSince != nil } }

    /// The time reading has been off in all, up to `now`.
    func pausedTime(upTo now: ContinuousClock.Instant) -> Duration {
        lock.withLock { endedPauses + (pausedSince.map { now - $0 } ?? .zero) }
    }
}
