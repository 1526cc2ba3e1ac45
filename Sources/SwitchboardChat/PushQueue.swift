import Foundation
import SwitchboardIO
import SwitchboardRuntime

/// A mailbox on the mock server that delivers the way Signal's server does: stored pushes
/// go out in order with up to `window` unacknowledged at once, each leaves the queue only
/// when the client acknowledges it with 2xx, and "queue empty" follows the pass. What the
/// client leaves unacknowledged (its handler threw, or the socket dropped) is delivered
/// again on the next pass, so tests can check that nothing is lost.
public final class PushQueue: @unchecked Sendable {
    /// What one pass achieved.
    public struct Pass: Sendable, Hashable {
        /// Pushes the client acknowledged with 2xx, now gone from the queue.
        public var acknowledged: Int
        /// Pushes sent but not acknowledged: refused, timed out, cut off by the socket, or
        /// failed by the server shutting down.
        public var unacknowledged: Int
        /// Whether "queue empty" was sent and acknowledged at the end of the pass.
        public var queueEmptyAcknowledged: Bool
    }

    /// Signal's `PUT /api/v1/queue/empty`.
    public static let queueEmpty = ServerRequest(verb: "PUT", path: "/api/v1/queue/empty")

    private let lock = AdaptiveLock()
    /// Keyed by arrival number, so order survives removals in any order.
    private var stored: [UInt64: ServerRequest] = [:]
    private var nextKey: UInt64 = 0

    /// A queue holding `pushes`, oldest first.
    public init(_ pushes: [ServerRequest] = []) {
        for push in pushes { append(push) }
    }

    /// Stores a push behind the others.
    public func append(_ push: ServerRequest) {
        lock.withLock {
            stored[nextKey] = push
            nextKey += 1
        }
    }

    /// The pushes not yet acknowledged, oldest first.
    public var pending: [ServerRequest] { lock.withLock { stored.sorted { $0.key < $1.key }.map(\.value) } }

    /// Delivers every stored push to `client` in order, up to `window` in flight, then sends
    /// `queueEmpty` if the connection is still open. Returns when every push is answered,
    /// timed out after `ackTimeout`, or cut off by the connection ending. Cancelling the
    /// calling task stops it sending: what is not yet sent stays stored, and `queueEmpty` is
    /// not sent.
    public func deliver(to client: ChatServer.Client, window: Int = 256, ackTimeout: Duration = .seconds(10),
                        queueEmpty: ServerRequest? = PushQueue.queueEmpty) async -> Pass {
        let batch = lock.withLock { stored.sorted { $0.key < $1.key } }
        let window = max(1, window)
        var pass = Pass(acknowledged: 0, unacknowledged: 0, queueEmptyAcknowledged: false)
        await withTaskGroup(of: (key: UInt64, acknowledged: Bool).self) { group in
            var inFlight = 0
            func collect(_ result: (key: UInt64, acknowledged: Bool)) {
                inFlight -= 1
                if result.acknowledged {
                    pass.acknowledged += 1
                    remove(result.key)
                } else {
                    pass.unacknowledged += 1
                }
            }
            for item in batch {
                while inFlight >= window, let result = await group.next() { collect(result) }
                // Cancelled: nothing more goes out (the rest stays stored for the next pass),
                // and no "queue empty" follows (found by review: every push went, then it).
                if Task.isCancelled { break }
                // Started here, in queue order; only the waiting happens concurrently.
                let started = client.start(item.value)
                inFlight += 1
                group.addTask {
                    let result = await client.answer(to: started, timeout: ackTimeout)
                    guard case let .success(response) = result else { return (item.key, false) }
                    return (item.key, response.isSuccess)
                }
            }
            while let result = await group.next() { collect(result) }
        }
        if let queueEmpty, client.socket.isOpen, !Task.isCancelled {
            pass.queueEmptyAcknowledged = await client.push(queueEmpty, timeout: ackTimeout)?.isSuccess == true
        }
        return pass
    }

    private func remove(_ key: UInt64) {
        _ = lock.withLock { stored.removeValue(forKey: key) }
    }
}
