import Foundation
internal import SwitchboardThreads

/// A blocking ``ByteStream`` served as a ``ByteChannel``: for a stream whose I/O another
/// library owns (Network.framework's TLS on Apple platforms). A thread of its own reads it
/// and hands each chunk to the loop, waiting until the loop has taken it (so reading keeps
/// pace with the connection, and pausing stops it); writes go straight to the stream when
/// it can take them at once, else in order on a serial queue.
final class PumpedChannel: ByteChannel, @unchecked Sendable {
    let loop: EventLoop
    private let stream: any ByteStream
    private let condition = NSCondition()
    private var delegate: (any ChannelDelegate)?
    private var isReading = true
    private var isStarted = false
    private var isClosed = false
    private var queued = 0
    private let writes = DispatchQueue(label: "switchboard.pumped.write")

    init(stream: any ByteStream, loop: EventLoop) {
        self.stream = stream
        self.loop = loop
    }

    var queuedByteCount: Int { condition.withLock { queued } }

    var negotiatedProtocol: String? { stream.negotiatedProtocol }

    func activate(delegate: any ChannelDelegate, handshakeDone: (@Sendable (String?) -> Void)?) {
        let start: Bool = condition.withLock {
            self.delegate = delegate
            defer { isStarted = true }
            return !isStarted && !isClosed
        }
        if start {
            do throws(SystemThread.StartError) {
                try SystemThread.start(stackSize: 1 << 20) { [self] in pump() }
            } catch {
                // No thread to read with: the channel ends now, not never, and whoever waits
                // for it to be ready hears why.
                let reason = "\(error)"
                close(reason: reason)
                loop.execute { [self] in condition.withLock { self.delegate }?.channelEnded(reason: reason) }
                handshakeDone?(reason)
                return
            }
        }
        handshakeDone?(nil)
    }

    private func pump() {
        while true {
            let proceed: Bool = condition.withLock {
                while !isReading && !isClosed { condition.wait() }
                return !isClosed
            }
            guard proceed else { return }
            let chunk: [UInt8]
            var failure: String?
            do throws(NetworkError) {
                chunk = try stream.read(maximum: EventLoop.readBufferSize)
            } catch {
                chunk = []
                failure = error.description
            }
            // The loop takes the chunk before the next read: the connection sets the pace.
            let taken = DispatchSemaphore(value: 0)
            loop.execute { [self, failure] in
                let delegate = condition.withLock { self.delegate }
                if chunk.isEmpty {
                    delegate?.channelEnded(reason: failure)
                } else {
                    chunk.withUnsafeBytes { delegate?.channelRead($0) }
                }
                taken.signal()
            }
            taken.wait()
            if chunk.isEmpty { return }
        }
    }

    func write(_ bytes: [UInt8], completion: (@Sendable (String?) -> Void)?) -> SocketChannel.WriteResult {
        condition.lock()
        defer { condition.unlock() }
        guard !isClosed else { return .failed("the stream is closed") }
        var offset = 0
        if queued == 0 {
            do throws(NetworkError) {
                offset = try stream.writeWithoutBlocking(bytes, from: 0)
            } catch {
                return .failed(error.description)
            }
            if offset == bytes.count { return .written }
        }
        let rest = offset == 0 ? bytes : Array(bytes[offset...])
        queued += rest.count
        writes.async { [self] in
            var failure: String?
            do throws(NetworkError) {
                try stream.write(rest)
            } catch {
                failure = error.description
            }
            condition.withLock { queued -= rest.count }
            if let completion {
                completion(failure)
            } else if let failure {
                loop.execute { [self] in condition.withLock { delegate }?.channelWriteFailed(failure) }
            }
        }
        return .queued
    }

    func setReading(_ on: Bool) {
        condition.withLock {
            isReading = on
            condition.broadcast()
        }
    }

    func closeAfterFlushing(timeout: Duration) {
        writes.async { [self] in close(reason: nil) }
        loop.schedule(after: timeout) { [self] in close(reason: "close timed out") }
    }

    func close(reason: String?) {
        let first: Bool = condition.withLock {
            defer {
                isClosed = true
                condition.broadcast()
            }
            return !isClosed
        }
        guard first else { return }
        stream.close()
        // The delegate often holds this channel: let it go once the pump is done with it.
        loop.execute { [self] in condition.withLock { delegate = nil } }
    }
}
