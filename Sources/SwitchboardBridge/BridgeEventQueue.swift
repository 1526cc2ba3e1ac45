import Foundation

/// The bridge's ordered, bounded queue of pushes for the host to take, bounded in events and
/// in bytes (a push re-encoded as JSON can be several times its size on the wire).
///
/// Producers (the connections' push handlers) wait for room, so a host that stops taking
/// events holds the server back instead of growing the queue; a push acknowledged after
/// handling waits until the host has taken it. A producer whose task is cancelled stops
/// waiting and hands nothing over. The host takes events with a blocking call,
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
        /// The `put` waiting for the host to take this entry (acknowledged after handling).
        let producer: Producer?
        /// Resumed with `true` once taken, `false` if the queue closes or the producer is
        /// cancelled first.
        let taken: CheckedContinuation<Bool?, Never>?
    }

    /// One `put` in progress, so its task's cancellation finds what it waits on; its
    /// `isCancelled` is guarded by the queue's lock.
    private final class Producer: @unchecked Sendable {
        var isCancelled = false
        init() {}
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
    private var roomWaiters: [(producer: Producer, continuation: CheckedContinuation<Bool, Never>)] = []
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
    /// has taken it. `false` if the event was not handed over: the queue closed first, or the
    /// calling task was cancelled first (the push handler of a connection that ended). A
    /// cancelled put queues nothing, and one waiting for its event to be taken withdraws the
    /// event, so the host never sees it; an event the host has already taken stays `true`.
    func put(_ document: String, waitUntilTaken: Bool) async -> Bool {
        let producer = Producer()
        return await withTaskCancellationHandler {
            await put(document, waitUntilTaken: waitUntilTaken, producer: producer)
        } onCancel: {
            withdraw(producer)
        }
    }

    private func put(_ document: String, waitUntilTaken: Bool, producer: Producer) async -> Bool {
        let size = document.utf8.count
        while true {
            let roomMade = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                condition.lock()
                if isClosed || producer.isCancelled || hasRoom(for: size) {
                    let open = !isClosed && !producer.isCancelled
                    condition.unlock()
                    continuation.resume(returning: open)
                } else {
                    roomWaiters.append((producer: producer, continuation: continuation))
                    condition.unlock()
                }
            }
            guard roomMade else { return false }
            if waitUntilTaken {
                // nil: another producer took the room first; wait for room again.
                let outcome: Bool? = await withCheckedContinuation { (continuation: CheckedContinuation<Bool?, Never>) in
                    condition.lock()
                    if isClosed || producer.isCancelled {
                        condition.unlock()
                        continuation.resume(returning: false)
                    } else if !hasRoom(for: size) {
                        condition.unlock()
                        continuation.resume(returning: nil)
                    } else {
                        entries.append(Entry(document: document, producer: producer, taken: continuation))
                        bytes += size
                        condition.signal()
                        condition.unlock()
                    }
                }
                if let outcome { return outcome }
            } else if let added = append(document, size: size, producer: producer) {
                return added
            }
        }
    }

    /// Appends an event acknowledged on receipt: `nil` when another producer took the room first.
    private func append(_ document: String, size: Int, producer: Producer) -> Bool? {
        condition.lock()
        defer { condition.unlock() }
        if isClosed || producer.isCancelled { return false }
        guard hasRoom(for: size) else { return nil }
        entries.append(Entry(document: document, producer: nil, taken: nil))
        bytes += size
        condition.signal()
        return true
    }

    /// A cancelled `put`: stops waiting for room, or withdraws its event if the host has not
    /// taken it yet (its bytes and place freed for the producers waiting); `put` answers
    /// `false`. An event already taken is left alone, and a `put` not waiting yet sees
    /// `isCancelled` when it would.
    private func withdraw(_ producer: Producer) {
        condition.lock()
        producer.isCancelled = true
        var waiting: CheckedContinuation<Bool, Never>?
        var untaken: CheckedContinuation<Bool?, Never>?
        var waiters: [(producer: Producer, continuation: CheckedContinuation<Bool, Never>)] = []
        if let index = roomWaiters.firstIndex(where: { $0.producer === producer }) {
            waiting = roomWaiters.remove(at: index).continuation
        } else if let index = entries[head...].firstIndex(where: { $0.producer === producer }) {
            let entry = entries.remove(at: index)
            bytes -= entry.document.utf8.count
            untaken = entry.taken
            // Room was made: every producer waiting looks again, as after a take.
            waiters = roomWaiters
            roomWaiters = []
        }
        condition.unlock()
        waiting?.resume(returning: false)
        untaken?.resume(returning: false)
        for waiter in waiters { waiter.continuation.resume(returning: true) }
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
        for waiter in waiters { waiter.continuation.resume(returning: true) }
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
        for waiter in waiters { waiter.continuation.resume(returning: false) }
        for entry in untaken { entry.resume(returning: false) }
    }
}
