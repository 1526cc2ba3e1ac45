import Foundation
@testable import SwitchboardIO
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A graceful close of a TCP channel whose peer is still sending: the peer reads everything
/// written before the close, then the end. Closing with unread data sent a reset, and a
/// peer that had not yet read the answer lost it (from the I/O review).
@Suite(.timeLimit(.minutes(1)))
struct LingeringCloseTests {
    final class Ignorer: ChannelDelegate, @unchecked Sendable {
        func channelRead(_ bytes: UnsafeRawBufferPointer) {}
        func channelEnded(reason: String?) {}
        func channelWriteFailed(_ reason: String) {}
    }

    @Test func thePeerReadsEverythingWrittenBeforeAGracefulClose() async throws {
        let loop = try EventLoop(name: "linger-test")
        let (client, server, listener, acceptor) = try await acceptedConnection(on: loop)
        defer { acceptor.stop(); listener.close() }
        let channel = SocketChannel(descriptor: server, loop: loop)
        channel.activate(delegate: Ignorer())
        // The server reads nothing of what the client sends (a request it refuses unread).
        channel.setReading(false)
        let upload = Thread.detachedResult { () -> Bool in
            (try? client.write([UInt8](repeating: 1, count: 1 << 20))) != nil
        }
        try await Task.sleep(for: .milliseconds(100))
        let answer = [UInt8](repeating: 2, count: 200_000)
        _ = channel.write(answer, completion: nil)
        channel.closeAfterFlushing(timeout: .seconds(5))
        // The client reads only later, after the close: a reset would have destroyed it.
        try await Task.sleep(for: .milliseconds(300))
        let received = await Thread.detachedResult { () -> Result<Int, NetworkError> in
            var total = 0
            do throws(NetworkError) {
                try client.setReadDeadline(.now + .seconds(10))
                while true {
                    let bytes = try client.read(maximum: 65_536)
                    if bytes.isEmpty { return .success(total) }
                    total += bytes.count
                }
            } catch {
                return .failure(error)
            }
        }.value
        #expect(try received.get() == 200_000)
        _ = await upload.value
        client.close()
        loop.shutdownBlocking()
    }

    /// A channel told to let its peer close first sends no FIN on a graceful close: the
    /// peer reads no end until it closes its own side, and only then is the socket released.
    @Test func aChannelThatLetsThePeerCloseFirstWaitsForThePeersEnd() async throws {
        let loop = try EventLoop(name: "peer-first-test")
        let (client, server, listener, acceptor) = try await acceptedConnection(on: loop)
        defer { acceptor.stop(); listener.close() }
        let (channel, released) = await peerFirstChannel(server, on: loop)
        // A long linger: only the peer's end can release the socket within this test.
        channel.setLingerTimeout(.seconds(60))
        _ = channel.write([1, 2, 3], completion: nil)
        channel.closeAfterFlushing(timeout: .seconds(5))
        // Closing again gracefully (the connection that owned the channel going away) changes
        // nothing; it used to shut the socket down.
        channel.close(reason: nil)
        // The peer gets what was written, then no end of stream while it keeps its side open.
        let early = await Thread.detachedResult { () -> Result<[UInt8], NetworkError> in
            do throws(NetworkError) {
                try client.setReadDeadline(.now + .seconds(5))
                var bytes: [UInt8] = []
                while bytes.count < 3 { bytes += try client.read(maximum: 16) }
                try client.setReadDeadline(.now + .milliseconds(400))
                return .success(bytes + (try client.read(maximum: 16)))
            } catch {
                return .failure(error)
            }
        }.value
        switch early {
        case let .success(bytes): Issue.record("the peer read \(bytes.count - 3) more bytes or an end: the channel closed first")
        case let .failure(error):
            guard case .timeout = error else { Issue.record("unexpected \(error)"); break }
        }
        #expect(!released.isSet)
        client.close()
        // The peer's end releases the socket, long before the linger would.
        var waited = 0
        while !released.isSet && waited < 1000 {
            try await Task.sleep(for: .milliseconds(10))
            waited += 1
        }
        #expect(released.isSet)
        loop.shutdownBlocking()
    }
}

extension LingeringCloseTests {
    /// An abort during that wait ends it at once: the peer reads the end.
    @Test func anAbortEndsTheWaitForThePeer() async throws {
        let loop = try EventLoop(name: "peer-first-abort-test")
        let (client, server, listener, acceptor) = try await acceptedConnection(on: loop)
        defer { acceptor.stop(); listener.close() }
        let (channel, released) = await peerFirstChannel(server, on: loop)
        channel.closeAfterFlushing(timeout: .seconds(5))
        channel.close(reason: "aborted")
        let end = await Thread.detachedResult { () -> Result<[UInt8], NetworkError> in
            do throws(NetworkError) {
                try client.setReadDeadline(.now + .seconds(1))
                return .success(try client.read(maximum: 16))
            } catch {
                return .failure(error)
            }
        }.value
        #expect((try? end.get()) == [], "the peer did not read the end within a second: \(end)")
        var waited = 0
        while !released.isSet && waited < 100 {
            try await Task.sleep(for: .milliseconds(10))
            waited += 1
        }
        #expect(released.isSet)
        client.close()
        loop.shutdownBlocking()
    }
}

extension LingeringCloseTests {
    /// A registered, open channel over `descriptor` that lets its peer close first, and a
    /// flag set when its socket is released.
    func peerFirstChannel(_ descriptor: Int32, on loop: EventLoop) async -> (SocketChannel, ReleaseFlag) {
        let channel = SocketChannel(descriptor: descriptor, loop: loop)
        channel.activate(delegate: Ignorer())
        // The loop runs work in order: past this, the channel is registered and open.
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in loop.execute { done.resume() } }
        let released = ReleaseFlag()
        channel.whenReleased { released.set() }
        channel.letPeerCloseFirst()
        return (channel, released)
    }
}

final class ReleaseFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    func set() { lock.withLock { value = true } }
    var isSet: Bool { lock.withLock { value } }
}

private extension Thread {
    /// Runs blocking `work` on a thread of its own.
    static func detachedResult<T: Sendable>(_ work: @escaping @Sendable () -> T) -> Task<T, Never> {
        Task {
            await withCheckedContinuation { continuation in
                Thread.detachNewThread { continuation.resume(returning: work()) }
            }
        }
    }
}
