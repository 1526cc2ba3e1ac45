import Foundation
import SwitchboardHTTP2
import SwitchboardIO
import SwitchboardRuntime

/// One HTTP/2 connection of a ``GRPCClientTransport`` and the deadlines of the calls on it.
///
/// The deadlines share one timer on the connection's loop: a timer per call would be
/// scheduled from the caller's thread and wake the loop on every call.
final class GRPCClientConnection: @unchecked Sendable {
    let driver: HTTP2ChannelDriver
    private let deadlines = Deadlines()
    private let timer: DeadlineTimer
    /// This side closed it (the transport's `close()`, or a newer connection replacing it):
    /// its end says nothing about the server.
    private let closedHere = Locked(false)

    init(driver: HTTP2ChannelDriver) {
        self.driver = driver
        // The timer's closures hold the deadlines, not the connection: a weak reference to
        // the connection would give it a side table, making each of its retains (several a
        // call) several times dearer.
        let deadlines = deadlines
        timer = DeadlineTimer(loop: driver.loop) { now in deadlines.expire(now: now) } next: { deadlines.earliest }
    }

    /// Whether this side closed it.
    var wasClosedHere: Bool { closedHere.withLock { $0 } }

    /// Closes it gracefully, as this side's decision.
    func close() {
        closedHere.withLock { $0 = true }
        driver.close()
    }

    /// Another connection replaces it. One the server sent GOAWAY on is left to end by itself
    /// once its last call does (found by review: closing it here gave the calls the server was
    /// still answering only the graceful-close timeout, 5 s, instead of their deadlines); one
    /// that is not going away (its stream ids ran out, say) is closed gracefully.
    func retire() {
        guard !driver.peerWentAway else { return }
        close()
    }

    /// Tells `call` once `deadline` has passed, unless it is forgotten first.
    func watch(_ call: GRPCUnaryCall, until deadline: ContinuousClock.Instant) {
        deadlines.add(call, deadline)
        timer.watch(deadline)
    }

    /// Stops watching `call`'s deadline (it has ended).
    func forget(_ call: GRPCUnaryCall) {
        deadlines.remove(call)
    }

    /// The deadlines of the connection's calls.
    private final class Deadlines: @unchecked Sendable {
        private let lock = AdaptiveLock()
        // Reached only under its lock, which already makes each access exclusive:
        // `@exclusivity(unchecked)` drops the runtime's own check (docs/performance.md).
        @exclusivity(unchecked) private var calls: [ObjectIdentifier: (call: GRPCUnaryCall, deadline: ContinuousClock.Instant)] = [:]

        func add(_ call: GRPCUnaryCall, _ deadline: ContinuousClock.Instant) {
            lock.withLock { calls[ObjectIdentifier(call)] = (call, deadline) }
        }

        func remove(_ call: GRPCUnaryCall) {
            lock.withLock { _ = calls.removeValue(forKey: ObjectIdentifier(call)) }
        }

        var earliest: ContinuousClock.Instant? {
            lock.withLock { calls.values.lazy.map(\.deadline).min() }
        }

        func expire(now: ContinuousClock.Instant) {
            let due: [GRPCUnaryCall] = lock.withLock {
                let due = calls.filter { $0.value.deadline <= now }
                for key in due.keys { calls.removeValue(forKey: key) }
                return due.values.map(\.call)
            }
            for call in due { call.deadlinePassed() }
        }
    }
}
