import Foundation
import SwitchboardHTTP2
import SwitchboardIO
import SwitchboardRuntime

/// Connects that failed in a row, and how long calls then fail at once rather than dial
/// again (``GRPCClientOptions/connectBackoff``). A connect counts as succeeded once the
/// server's SETTINGS arrive, as gRPC's clients count it, not when TCP connects: a server that
/// accepts and closes at once (overloaded, or not HTTP/2) is a failure.
///
/// Its own object, held by the transport and by its connections' handlers, so that those
/// handlers hold neither the transport nor, weakly, anything (a weak reference gives an
/// object a side table, and makes its every retain dearer).
final class GRPCConnectBackoff: @unchecked Sendable {
    private let lock = AdaptiveLock()
    private let policy: RetryBackoff
    private var failures = 0
    private var lastError: TransportError?
    private var nextAllowed: ContinuousClock.Instant?

    init(policy: RetryBackoff) {
        self.policy = policy
    }

    /// The last failure's error while its backoff lasts; nil when a connect may start.
    func refusal(now: ContinuousClock.Instant = .now) -> TransportError? {
        lock.withLock {
            guard let nextAllowed, now < nextAllowed else { return nil }
            return lastError
        }
    }

    /// A connect failed with `error`: the next waits (2^n − 1) s, jittered.
    func failed(_ error: TransportError) {
        lock.withLock {
            failures += 1
            lastError = error
            let delay = policy.delay(failureCount: failures, jitter: Double.random(in: RetryBackoff.jitterRange))
            nextAllowed = ContinuousClock.now.advanced(by: delay)
        }
    }

    /// A connection's server spoke HTTP/2: the failures before it are forgotten.
    func succeeded() {
        lock.withLock {
            failures = 0
            lastError = nil
            nextAllowed = nil
        }
    }

    /// Counts `connection`'s outcome: its SETTINGS as a success, its end before them as a
    /// failed connect to `place`, unless this side closed it.
    func watch(_ connection: GRPCClientConnection, place: String) {
        connection.driver.whenEstablished { [self] in succeeded() }
        // Held until the connection ends, when the driver drops its handlers.
        connection.driver.whenClosed { [self, connection] reason in
            guard !connection.driver.state.isEstablished, !connection.wasClosedHere else { return }
            failed(.disconnected(reason: DisconnectReason("\(place) closed the connection before speaking HTTP/2: \(reason)")))
        }
    }
}
