import Foundation

/// The first of several offered outcomes (an error, or nil for success), handed to one
/// waiter: a write's completion or a handshake's end, whichever side comes first.
package final class FirstOutcome<Failure: Error & Sendable>: @unchecked Sendable {
    private let lock = AdaptiveLock()
    private var result: Failure??
    private var waiter: CheckedContinuation<Failure?, Never>?

    package init() {}

    /// Settles the outcome unless it is settled already.
    package func offer(_ error: Failure?) {
        let waiting: CheckedContinuation<Failure?, Never>? = lock.withLock {
            guard result == nil else { return nil }
            result = .some(error)
            defer { waiter = nil }
            return waiter
        }
        waiting?.resume(returning: error)
    }

    /// The outcome, once offered.
    package var value: Failure? {
        get async {
            await withCheckedContinuation { continuation in
                let ready: Failure?? = lock.withLock {
                    if let result { return result }
                    waiter = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        }
    }
}
