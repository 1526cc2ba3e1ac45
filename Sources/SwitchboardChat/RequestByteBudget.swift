import Foundation

/// Bytes of requests in handlers across all of a server's clients, against a limit. Each
/// client's own limit is a count; without a shared one, many clients each at their limit
/// with large requests would hold memory in proportion to clients times requests.
final class RequestByteBudget: @unchecked Sendable {
    /// What a request counts for at least: its task and bookkeeping are not free, so a flood
    /// of empty requests is bounded too.
    static let minimumCost = 1024

    private let lock = NSLock()
    private let limit: Int
    private var used = 0

    init(limit: Int) {
        self.limit = max(Self.minimumCost, limit)
    }

    /// What a request of `byteCount` bytes on the wire counts for.
    static func cost(ofRequestBytes byteCount: Int) -> Int { max(minimumCost, byteCount) }

    /// Takes `cost`; `false`, taking nothing, when it would pass the limit.
    func take(_ cost: Int) -> Bool {
        lock.withLock {
            guard cost <= limit - used else { return false }
            used += cost
            return true
        }
    }

    /// Gives back what `take` took.
    func give(_ cost: Int) {
        lock.withLock { used -= cost }
    }

    /// Bytes taken now.
    var inUse: Int { lock.withLock { used } }
}
