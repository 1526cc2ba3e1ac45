import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Two connected local stream sockets, the first non-blocking (for a loop to watch); `nil`
/// if the system refuses.
func nonBlockingSocketPair() -> (watched: Int32, peer: Int32)? {
    var pair: [Int32] = [0, 0]
    #if canImport(Glibc)
    guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0 else { return nil }
    #else
    guard socketpair(AF_UNIX, SOCK_STREAM, 0, &pair) == 0 else { return nil }
    #endif
    _ = fcntl(pair[0], F_SETFL, fcntl(pair[0], F_GETFL) | O_NONBLOCK)
    return (pair[0], pair[1])
}
