/// One open stream as the connection tracks it: where it is in its life, its two windows,
/// and what waits to be sent. Closed streams are dropped from the connection's table.
struct HTTP2StreamState: Sendable {
    /// Which sides may still send (RFC 9113 §5.1, without the push-only reserved states).
    enum Phase: Sendable, Equatable {
        case open, halfClosedLocal, halfClosedRemote
    }

    /// How far the peer's header blocks have got on this stream.
    enum Headers: Sendable, Equatable {
        /// Nothing yet (or only 1xx responses): DATA is not allowed.
        case awaitingInitial
        /// The request or final response arrived: DATA and trailers may follow.
        case receivedInitial
    }

    let id: UInt32
    let isLocallyInitiated: Bool
    var phase: Phase
    var headers: Headers
    /// What this side may still send on the stream (may go negative after SETTINGS shrink it).
    var sendWindow: Int
    /// What the peer may still send before this side refills it.
    var receiveWindow: Int
    /// Bytes received and consumed but not yet returned to the peer with WINDOW_UPDATE.
    var unacknowledgedReceived = 0
    /// The peer's `content-length`, checked against the DATA it sends.
    var expectedContentLength: Int?
    var receivedContentLength = 0

    /// Bytes waiting for window; they are held in the connection's ``HTTP2PendingOutput``
    /// table, so this state holds no references and is copied as plain memory (each change
    /// to a stream copies it; copying buffers meant a retain and release each, every time).
    var pendingByteCount = 0
    /// END_STREAM goes out once the pending bytes are sent (with trailers if there are any).
    var pendingEnd = false
    /// Trailers wait in the connection's pending output, to go after the data.
    var hasPendingTrailers = false

    var hasPendingOutput: Bool { pendingByteCount > 0 || pendingEnd }
    var canSend: Bool { (phase == .open || phase == .halfClosedRemote) && !pendingEnd }
    var canReceive: Bool { phase == .open || phase == .halfClosedLocal }
}

/// What a stream could not send yet: bytes waiting for window, and trailers to send after
/// them (encoded only when written, so the HPACK table changes in wire order).
struct HTTP2PendingOutput: Sendable {
    var bytes: [UInt8] = []
    /// Where the unsent bytes start.
    var offset = 0
    var trailers: [HPACKHeader]?
}

/// Stream ids reset here recently, so the peer's frames still in flight for them are
/// dropped quietly rather than treated as errors. Bounded: the oldest are forgotten, and
/// any id up to the highest forgotten one counts as possibly reset here, so a burst of more
/// resets than the memory holds (a deadline storm) cannot turn the peer's late frames into a
/// connection error that ends every other stream.
struct RecentStreamIDs: Sendable {
    private var members: Set<UInt32> = []
    private var order: [UInt32] = []
    private var next = 0
    /// The highest forgotten id of each parity (odd: the client's streams, even: the
    /// server's): an id of the other parity was never reset here by being below it, and a
    /// frame on it still meets the idle-stream checks (RFC 9113 §5.1.1).
    private var forgottenOddThrough: UInt32 = 0
    private var forgottenEvenThrough: UInt32 = 0
    let capacity: Int

    init(capacity: Int) { self.capacity = max(1, capacity) }

    func contains(_ id: UInt32) -> Bool {
        members.contains(id) || id <= (id & 1 == 1 ? forgottenOddThrough : forgottenEvenThrough)
    }

    mutating func insert(_ id: UInt32) {
        guard members.insert(id).inserted else { return }
        if order.count < capacity {
            order.append(id)
        } else {
            let forgotten = order[next]
            members.remove(forgotten)
            if forgotten & 1 == 1 {
                forgottenOddThrough = max(forgottenOddThrough, forgotten)
            } else {
                forgottenEvenThrough = max(forgottenEvenThrough, forgotten)
            }
            order[next] = id
            next = (next + 1) % capacity
        }
    }
}
