import Foundation
import SwitchboardIO

/// Turns reading of a connection's socket on and off for several parties at once (the
/// received-message budget, direct delivery's buffer, the application), reading only while
/// none of them holds it paused: one party resuming must not undo another's pause. Keeps count
/// of the time reading was off, so a peer is not timed out for bytes this side's own
/// backpressure kept it from sending.
final class ReadingGate: @unchecked Sendable {
    /// Who pauses reading.
    enum Party: UInt8 {
        case inboundBudget = 1
        case directSink = 2
        case application = 4
    }

    private let lock = AdaptiveLock()
    private let channel: any ByteChannel
    /// The parties holding reading paused, one bit each.
    private var pausedBy: UInt8 = 0
    /// Closing: reading stays on whoever asks otherwise, for the peer's close frame.
    private var isForcedOn = false
    private var isStarted = false
    private var pausedSince: ContinuousClock.Instant?
    private var endedPauses = Duration.zero

    init(channel: any ByteChannel) {
        self.channel = channel
    }

    /// Starts reading, unless a party paused it already.
    func start() {
        update { isStarted = true }
        // Whatever the channel did before it was handed over, it now does as the parties say.
        lock.withLock { channel.setReading(isReading) }
    }

    /// `party` pauses reading (`true`) or lets it go on (`false`).
    func setPaused(_ paused: Bool, by party: Party) {
        update {
            if paused { pausedBy |= party.rawValue } else { pausedBy &= ~party.rawValue }
        }
    }

    /// Reads from now on, whatever any party asks: the connection is closing, and the peer's
    /// close frame may sit behind messages nobody will take.
    func forceOn() {
        update { isForcedOn = true }
    }

    private func update(_ change: () -> Void) {
        lock.withLock {
            let wasReading = isReading
            change()
            let reading = isReading
            let paused = isStarted && !reading
            if paused, pausedSince == nil {
                pausedSince = .now
            } else if !paused, let since = pausedSince {
                endedPauses += ContinuousClock.now - since
                pausedSince = nil
            }
            // Under the lock, so two parties' calls cannot cross on the way to the channel.
            if reading != wasReading { channel.setReading(reading) }
        }
    }

    private var isReading: Bool { isStarted && (isForcedOn || pausedBy == 0) }

    /// Whether a party holds reading off now.
    var isPaused: Bool { lock.withLock { isStarted && !isReading } }

    /// The time reading has been off in all, up to `now`.
    func pausedTime(upTo now: ContinuousClock.Instant) -> Duration {
        lock.withLock { endedPauses + (pausedSince.map { now - $0 } ?? .zero) }
    }
}
