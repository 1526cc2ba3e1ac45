import Foundation
#if canImport(Glibc)
import Glibc
private func systemConnect(_ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 { Glibc.connect(fd, address, length) }
private func systemClose(_ fd: Int32) { _ = Glibc.close(fd) }
#else
import Darwin
private func systemConnect(_ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 { Darwin.connect(fd, address, length) }
private func systemClose(_ fd: Int32) { _ = Darwin.close(fd) }
#endif

/// A loopback listener (backlog 0) whose accept queue one connection fills and that never
/// accepts: the kernel drops later SYNs, so a connect to it hangs until its own timeout.
public final class FullListenQueue: @unchecked Sendable {
    /// The queue could not be set up.
    public struct SetupError: Error {}

    private let listener: Int32
    private let filler: Int32
    /// The port to connect to, in vain.
    public let port: Int

    /// Listens on a free loopback port and fills its queue.
    public init() throws {
        let listener = TestSockets.stream()
        let filler = TestSockets.stream()
        self.listener = listener
        self.filler = filler
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let listening = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, length) == 0 && listen(listener, 0) == 0 && getsockname(listener, $0, &length) == 0
            }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        let filled = listening && withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { systemConnect(filler, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        guard filled else {
            systemClose(filler)
            systemClose(listener)
            throw SetupError()
        }
    }

    /// Stops listening.
    public func close() {
        systemClose(filler)
        systemClose(listener)
    }
}
