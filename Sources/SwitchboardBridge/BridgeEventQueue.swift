import Foundation

/// The bridge's ordered, bounded queue of pushes for the host to take, bounded in events and
/// in bytes (a push re-encoded as JSON can be several times its size on the wire).
///
/// Producers (the connections' push handlers) wait for room, so a host that stops taking
/// events holds the server back instead of growing the queue; a push acknowledged after
/// handling waits until the host has taken it. The host takes events with a blocking call,
/// as a foreign core's receive loop on its own thread does.
final class BridgeEventQueue: @unchecked Sendable {
    /// What a take found.
    enum Taken: Equatable {
        case event(String)
        case timedOut
        case closed
    }

    private struct Entry {
        let document: String
        /// Resumed with `true` once taken, `false` if the queue closes first.
        let taken: CheckedContinuation<Bool?, Never>?
    }

    let capacity: Int
    /// The most bytes of documents queued at once; one document larger than this still
    /// passes when the queue is empty, or it could never be handed over.
    let byteCapacity: Int
    // Every field below is guarded by `condition`.
    private let condition = NSCondition()
    private var entries: [Entry] = []
    /// Index of the oldest entry: taking is O(1), the array is compacted now and then.
    private var head = 0
    private var roomWaiters: [CheckedContinuation<Bool, Never>] = []
    private var isClosed = false
    /// Bytes of the documents queued now.
    private var bytes = 0

    init(capacity: Int, byteCapacity: Int = .max) {
        self.capacity = max(1, capacity)
        self.byteCapacity = max(1, byteCapacity)
    }

    private var count: Int { entries.count - head }

    /// Whether a document of `size` bytes fits now; called with the lock held.
    private func hasRoom(for size: Int) -> Bool {
        count == 0 || (count < capacity && size <= byteCapacity - bytes)
    }

    /// Queues `document` once there is room. With `waitUntilTaken`, returns when the host
    /// has taken it. `false` if the queue closed first (the event was not handed over).
    func put(_ document: String, waitUntilTaken: Bool) async -> Bool {
        let size = document.utf8.count
        while true {
            let roomMade = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                condition.lock()
                if isClosed || hasRoom(for: size) {
                    let open = !isClosed
                    condition.unlock()
                    continuation.resume(returning: open)
                } else {
                    roomWaiters.append(continuation)
                    condition.unlock()
                }
            }
            guard roomMade else { return false }
            if waitUntilTaken {
                // nil: another producer took the room first; wait for room again.
                let outcome: Bool? = await withCheckedContinuation { (continuation: CheckedContinuation<Bool?, Never>) in
                    condition.lock()
                    if isClosed {
                        condition.unlock()
                        continuation.resume(returning: false)
                    } else if !hasRoom(for: size) {
                        condition.unlock()
                        continuation.resume(returning: nil)
                    } else {
                        entries.append(Entry(document: document, taken: continuation))
                        bytes += size
                        condition.signal()
                        condition.unlock()
                    }
                }
                if let outcome { return outcome }
            } else if let added = append(document, size: size) {
                return added
            }
        }
    }

    /// Appends an event acknowledged on receipt: `nil` when another producer took the room first.
    private func append(_ document: String, size: Int) -> Bool? {
        condition.lock()
        defer { condition.unlock() }
        if isClosed { return false }
        guard hasRoom(for: size) else { return nil }
        entries.append(Entry(document: document, taken: nil))
        bytes += size
        condition.signal()
        return true
    }

    /// Lets a waiting ``take(until:cancellation:)`` give up; guarded by the queue's lock.
    final class TakeCancellation: @unchecked Sendable {
        fileprivate var isCancelled = false
        init() {}
    }

    /// Makes the take waiting with `cancellation` return `.timedOut` without an event, now or
    /// when it starts waiting.
    func cancel(_ cancellation: TakeCancellation) {
        condition.lock()
        cancellation.isCancelled = true
        condition.broadcast()
        condition.unlock()
    }

    /// Takes the oldest event, waiting at most until `deadline` (`nil`: until an event
    /// arrives or the queue closes). A cancelled take takes nothing, so no event is lost to a
    /// receiver that has gone.
    func take(until deadline: ContinuousClock.Instant?, cancellation: TakeCancellation? = nil) -> Taken {
        condition.lock()
        while count == 0 && !isClosed && cancellation?.isCancelled != true {
            if let deadline {
                // The wait takes a wall-clock date, which moves when the system clock is set:
                // it is redone from the monotonic deadline, a second at most at a time.
                let left = ContinuousClock.now.duration(to: deadline)
                guard left > .zero else { break }
                let seconds = min(1, Double(left.components.seconds) + Double(left.components.attoseconds) / 1e18)
                _ = condition.wait(until: Date(timeIntervalSinceNow: seconds))
            } else {
                condition.wait()
            }
        }
        guard !isClosed else {
            condition.unlock()
            return .closed
        }
        guard count > 0, cancellation?.isCancelled != true else {
            condition.unlock()
            return .timedOut
        }
        let entry = entries[head]
        head += 1
        bytes -= entry.document.utf8.count
        if head > 1024 && head * 2 > entries.count {
            entries.removeFirst(head)
            head = 0
        }
        // Every producer waiting looks again: room in bytes may fit several small events,
        // and one that still does not fit waits again.
        let waiters = roomWaiters
        roomWaiters = []
        condition.unlock()
        for waiter in waiters { waiter.resume(returning: true) }
        entry.taken?.resume(returning: true)
        return .event(entry.document)
    }

    /// Closes the queue: waiting takes answer `.closed`, producers learn their events were
    /// not handed over, and events not yet taken are dropped.
    func close() {
        condition.lock()
        guard !isClosed else {
            condition.unlock()
            return
        }
        isClosed = true
        let waiters = roomWaiters
        let untaken = entries[head...].compactMap(\.taken)
        roomWaiters = []
        entries = []
        head = 0
        bytes = 0
        condition.broadcast()
        condition.unlock()
        for waiter in waiters { waiter.resume(returning: false) }
        for entry in untaken { entry.resume(returning: false) }
    }
}
