import Foundation

/// A callback scheduled on an event loop for a moment; cancel it from any thread.
public final class LoopTimer: @unchecked Sendable {
    /// When it fires.
    public let deadline: ContinuousClock.Instant
    private let lock = AdaptiveLock()
    private var body: (@Sendable () -> Void)?

    init(deadline: ContinuousClock.Instant, body: @escaping @Sendable () -> Void) {
        self.deadline = deadline
        self.body = body
    }

    /// Stops it from firing if it has not yet; its closure is released at once, after the lock
    /// (what the closure captured may cancel this timer again from its `deinit`).
    public func cancel() {
        _ = take()
    }

    /// Whether it was cancelled (or has fired).
    public var isCancelled: Bool { lock.withLock { body == nil } }

    /// Takes the callback, once.
    func take() -> (@Sendable () -> Void)? {
        lock.withLock {
            defer { body = nil }
            return body
        }
    }
}

/// The loop's timers by deadline, earliest first: a binary min-heap, so scheduling and
/// firing cost O(log n) however many timers wait. Cancelled timers leave when they reach
/// the top, or all at once when they outnumber the live ones.
///
/// Deadlines are kept as offsets from one instant: `ContinuousClock.Instant`'s layout is not
/// fixed outside the standard library, so a heap of instants was copied, compared and
/// destroyed through the runtime's metadata and value witnesses, several times on every loop
/// turn (about 1,000 instructions a call); `Duration`'s layout is fixed.
struct TimerHeap {
    private struct Item {
        let deadline: Duration
        let sequence: UInt64
        let timer: LoopTimer
    }

    /// The instant offsets count from.
    private static let epoch = ContinuousClock.now
    private var items: [Item] = []
    private var nextSequence: UInt64 = 0
    private static let smallestCompactionCheck = 128
    private var nextCompactionCheck = smallestCompactionCheck

    var isEmpty: Bool { items.isEmpty }
    var count: Int { items.count }
    /// The timers not cancelled (a scan: for tests).
    var liveCount: Int { items.reduce(0) { $0 + ($1.timer.isCancelled ? 0 : 1) } }

    private static func offset(of instant: ContinuousClock.Instant) -> Duration { instant - epoch }

    /// Adds a timer; timers with one deadline fire in the order they were added.
    mutating func insert(_ timer: LoopTimer) {
        items.append(Item(deadline: Self.offset(of: timer.deadline), sequence: nextSequence, timer: timer))
        nextSequence &+= 1
        siftUp(items.count - 1)
    }

    /// The time from now to the earliest live deadline (not positive once it has passed),
    /// dropping cancelled timers on the way; `nil` with no timer.
    mutating func timeToNextDeadline() -> Duration? {
        while let first = items.first, first.timer.isCancelled { removeFirst() }
        guard let first = items.first else { return nil }
        return first.deadline - Self.offset(of: .now)
    }

    /// Removes and returns the timers due at `now`, earliest first.
    mutating func popDue(now: ContinuousClock.Instant) -> [LoopTimer] {
        let now = Self.offset(of: now)
        var due: [LoopTimer] = []
        while let first = items.first, first.deadline <= now {
            removeFirst()
            if !first.timer.isCancelled { due.append(first.timer) }
        }
        return due
    }

    /// Empties the heap, returning the timers still live.
    mutating func removeAll() -> [LoopTimer] {
        defer { items = [] }
        return items.filter { !$0.timer.isCancelled }.map(\.timer)
    }

    /// Drops every cancelled timer when they are more than half the heap. Looks only once
    /// the heap has doubled since the last look, so the scan costs O(1) per timer amortized
    /// (a loop calls this on every turn).
    mutating func compactIfMostlyCancelled() {
        guard items.count >= nextCompactionCheck else { return }
        let live = items.filter { !$0.timer.isCancelled }
        if live.count * 2 < items.count {
            items = []
            for item in live.sorted(by: { ($0.deadline, $0.sequence) < ($1.deadline, $1.sequence) }) { items.append(item) }
        }
        nextCompactionCheck = max(Self.smallestCompactionCheck, 2 * items.count)
    }

    private mutating func removeFirst() {
        let last = items.removeLast()
        guard !items.isEmpty else { return }
        items[0] = last
        siftDown(0)
    }

    private func precedes(_ a: Int, _ b: Int) -> Bool {
        (items[a].deadline, items[a].sequence) < (items[b].deadline, items[b].sequence)
    }

    private mutating func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard precedes(child, parent) else { return }
            items.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < items.count && precedes(left, smallest) { smallest = left }
            if right < items.count && precedes(right, smallest) { smallest = right }
            guard smallest != parent else { return }
            items.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
