/// Pushes read from the socket but not yet taken by the push handler, against a limit.
///
/// The reader cannot pause for pushes, because a push handler may be waiting for a response
/// on the same socket; so a server that pushes past the limit is cut off instead. Once cut
/// off, nothing more is admitted: a later push handled before an earlier, dropped one would
/// break the order within the connection.
struct PushBudget: Sendable {
    /// How many pushes may wait.
    let maximumCount: Int
    /// How many envelope bytes they may hold together.
    let maximumBytes: Int
    private(set) var count = 0
    private(set) var bytes = 0
    /// Set by the first push refused; from then on every push is refused.
    private(set) var isCutOff = false

    init(maximumCount: Int, maximumBytes: Int) {
        self.maximumCount = maximumCount
        self.maximumBytes = maximumBytes
    }

    /// Counts a push of `size` envelope bytes in, or refuses it. An empty queue always takes
    /// one push, however large: the WebSocket's message limit bounds it already.
    mutating func admit(size: Int) -> Bool {
        guard !isCutOff else { return false }
        guard count == 0 || (count < maximumCount && bytes + size <= maximumBytes) else {
            isCutOff = true
            return false
        }
        count += 1
        bytes += size
        return true
    }

    /// The push handler took a push of `size` bytes.
    mutating func release(size: Int) {
        count -= 1
        bytes -= size
    }
}
