import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Counts of what the test process holds open, read from the kernel, for leak tests.
public enum OpenSockets {
    /// How many of this process's descriptors are sockets bound to local `port`: a server's
    /// listener and the connections it accepted, whether or not they are still connected
    /// (a socket shut down but never released still counts). Other suites' sockets, on
    /// other ports, do not. `nil` where descriptors cannot be listed.
    public static func count(port: Int) -> Int? {
        guard let descriptors = openDescriptors else { return nil }
        var count = 0
        for descriptor in descriptors where localPort(of: descriptor) == port { count += 1 }
        return count
    }

    /// How many descriptors this process has open.
    public static var descriptorCount: Int? { openDescriptors?.count }

    /// How many threads this process runs (Linux only).
    public static var threadCount: Int? {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task"))?.count
    }

    private static var openDescriptors: [Int32]? {
        #if os(Linux)
        let directory = "/proc/self/fd"
        #else
        let directory = "/dev/fd"
        #endif
        return (try? FileManager.default.contentsOfDirectory(atPath: directory))?.compactMap { Int32($0) }
    }

    /// The local TCP port of a socket descriptor, or `nil` for anything else.
    private static func localPort(of descriptor: Int32) -> Int? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let status = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard status == 0 else { return nil }
        let family = Int32(storage.ss_family)
        return withUnsafePointer(to: &storage) { pointer -> Int? in
            switch family {
            case AF_INET: return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin_port)) }
            case AF_INET6: return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin6_port)) }
            default: return nil
            }
        }
    }
}
