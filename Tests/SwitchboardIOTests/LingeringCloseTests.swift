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
