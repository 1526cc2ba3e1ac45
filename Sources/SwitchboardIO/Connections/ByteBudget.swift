import Foundation

/// Bytes a server holds for requests in progress across all its connections, against one
/// limit. Per-connection limits alone let memory grow with connections times requests; this
/// bounds the whole server (the chat server's requests in handlers, the gRPC server's
/// request messages).
package final class ByteBudget: @unchecked Sendable {
    private let lock = AdaptiveLock()
    private let limit: Int
    private var used = 0

    package init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// Takes `bytes`; `false`, taking nothing, when they would pass the limit.
    package func take(_ bytes: Int) -> Bool {
        lock.withLock {
            guard bytes <= limit - used else { return false }
            used += bytes
            return true
        }
    }

    /// Gives back what `take` took.
    package func give(_ bytes: Int) {
        lock.withLock { used -= bytes }
    }

    /// Bytes taken now.
    package var inUse: Int { lock.withLock { used } }
}
