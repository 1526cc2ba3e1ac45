import Foundation
#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// A blocking socket listening on a free loopback port, for a hand-written peer: the
/// descriptor (the caller accepts on it and closes it) and its port.
public func loopbackListener(backlog: Int32 = 4) throws -> (descriptor: Int32, port: Int) {
    let descriptor = TestSockets.stream()
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = descriptor >= 0 && withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(descriptor, $0, length) == 0 && listen(descriptor, backlog) == 0 && getsockname(descriptor, $0, &length) == 0
        }
    }
    guard bound else {
        if descriptor >= 0 { _ = close(descriptor) }
        throw CocoaError(.fileReadUnknown)
    }
    return (descriptor, Int(UInt16(bigEndian: address.sin_port)))
}
