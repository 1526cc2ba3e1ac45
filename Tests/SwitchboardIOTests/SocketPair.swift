import Foundation
import PeerSupport
@testable import SwitchboardIO
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Two connected local stream sockets, the first non-blocking (for a loop to watch); `nil`
/// if the system refuses.
func nonBlockingSocketPair() -> (watched: Int32, peer: Int32)? {
    guard let (watched, peer) = TestSockets.pair() else { return nil }
    _ = fcntl(watched, F_SETFL, fcntl(watched, F_GETFL) | O_NONBLOCK)
    return (watched, peer)
}

/// A TCP connection on loopback accepted through an `Acceptor` on `loop`: the client's
/// blocking socket and the server side's raw, non-blocking descriptor (the caller owns both).
func acceptedConnection(on loop: EventLoop) async throws -> (client: TCPSocket, server: Int32, listener: TCPListener, acceptor: Acceptor) {
    final class Accepted: @unchecked Sendable {
        let lock = NSLock()
        var descriptor: Int32?
    }
    let listener = try TCPListener()
    let accepted = Accepted()
    let acceptor = Acceptor(listener: listener, loop: loop) { descriptor in accepted.lock.withLock { accepted.descriptor = descriptor } }
    acceptor.start()
    let client = try TCPSocket.connect(host: "127.0.0.1", port: listener.port, timeout: .seconds(5))
    for _ in 0..<500 {
        if let server = accepted.lock.withLock({ accepted.descriptor }) { return (client, server, listener, acceptor) }
        try await Task.sleep(for: .milliseconds(10))
    }
    acceptor.stop()
    listener.close()
    client.close()
    throw NetworkError.timeout("accepting a loopback connection")
}
