import Foundation

/// Holds what a channel reads while nobody owns it yet (a TLS handshake finishing, a
/// preconnected socket waiting for its upgrade), up to a limit, and notices if it ends.
package final class ParkedReader: ChannelDelegate, @unchecked Sendable {
    private let lock = AdaptiveLock()
    private let limit: Int
    private let peerClosed: String
    private var buffered: [UInt8] = []
    private var ended: String?
    /// The channel it holds bytes for, closed once the limit is passed.
    private weak var channel: (any ByteChannel)?

    /// Keeps at most `limit` bytes (a peer that says more before it is heard ends the
    /// channel: ``endReason`` says so); `peerClosed` is the end reason when the peer closes,
    /// with or without TLS's close_notify.
    package init(limit: Int, peerClosed: String = "the peer closed the connection") {
        self.limit = limit
        self.peerClosed = peerClosed
    }

    /// Activates `channel` with this reader as its delegate (and `handshakeDone`, if any).
    package func hold(_ channel: any ByteChannel, handshakeDone: (@Sendable (String?) -> Void)? = nil) {
        lock.withLock { self.channel = channel }
        channel.activate(delegate: self, handshakeDone: handshakeDone)
    }

    package func channelRead(_ bytes: UnsafeRawBufferPointer) {
        let overflowed: (any ByteChannel)? = lock.withLock {
            guard ended == nil else { return nil }
            guard bytes.count <= limit - buffered.count else {
                // Cutting the stream short would corrupt it for whoever reads it next: the
                // channel ends instead, with the reason.
                ended = "the peer sent more than \(limit) bytes before they could be read"
                buffered = []
                return channel
            }
            buffered.append(contentsOf: bytes)
            return nil
        }
        // The stream is lost already: the channel closes, so a peer streaming data at a parked
        // socket (a preconnect may wait a long time) is not read and dropped at line rate, nor
        // holds its descriptor.
        overflowed?.close(reason: "the peer sent more than \(limit) bytes before they could be read")
    }

    package func channelEnded(reason: String?) {
        // A close without TLS's close_notify is still the peer closing: said in this reader's
        // words, which name the moment, with the missing close_notify after.
        let why = reason == SocketChannel.uncleanShutdown ? "\(peerClosed) (without TLS close_notify)" : reason ?? peerClosed
        // The first reason stays (an overflow, then the close it caused).
        lock.withLock { ended = ended ?? why }
    }

    package func channelWriteFailed(_ reason: String) {
        lock.withLock { ended = ended ?? reason }
    }

    /// Why the channel ended while parked, if it did.
    package var endReason: String? { lock.withLock { ended } }

    /// The bytes held so far; the reader holds none after.
    package func take() -> [UInt8] {
        lock.withLock {
            defer { buffered = [] }
            return buffered
        }
    }
}
