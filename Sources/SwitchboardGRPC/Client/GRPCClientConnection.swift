import Foundation
import SwitchboardHTTP2
import SwitchboardIO

/// One HTTP/2 connection of a ``GRPCClientTransport`` and the deadlines of the calls on it.
///
/// The deadlines share one timer on the connection's loop: a timer per call would be
/// scheduled from the caller's thread and wake the loop on every call.
final class GRPCClientConnection: @unchecked Sendable {
    let driver: HTTP2ChannelDriver

    private let lock = AdaptiveLock()
    // Stored state below is reached only under its lock or on the loop's thread, which
    // already makes each access exclusive: `@exclusivity(unchecked)` drops the runtime's own
    // check, about 80 instructions an access and 5% of a call (docs/performance.md).
    @exclusivity(unchecked) private var deadlines: [ObjectIdentifier: (call: GRPCUnaryCall, deadline: ContinuousClock.Instant)] = [:]
    @exclusivity(unchecked) private var timer: DeadlineTimer?

    init(driver: HTTP2ChannelDriver) {
        self.driver = driver
        timer = DeadlineTimer(loop: driver.loop) { [weak self] now in
            self?.expire(now: now)
        } next: { [weak self] in
            self?.earliestDeadline
        }
    }

    /// Tells `call` once `deadline` has passed, unless it is forgotten first.
    func watch(_ call: GRPCUnaryCall, until deadline: ContinuousClock.Instant) {
        lock.withLock { deadlines[ObjectIdentifier(call)] = (call, deadline) }
        timer?.watch(deadline)
    }

    /// Stops watching `call`'s deadline (it has ended).
    func forget(_ call: GRPCUnaryCall) {
        lock.withLock { _ = deadlines.removeValue(forKey: ObjectIdentifier(call)) }
    }

    private var earliestDeadline: ContinuousClock.Instant? {
        lock.withLock { deadlines.values.lazy.map(\.deadline).min() }
    }

    private func expire(now: ContinuousClock.Instant) {
        let due: [GRPCUnaryCall] = lock.withLock {
            let due = deadlines.filter { $0.value.deadline <= now }
            for key in due.keys { deadlines.removeValue(forKey: key) }
            return due.values.map(\.call)
        }
        for call in due { call.deadlinePassed() }
    }
}
