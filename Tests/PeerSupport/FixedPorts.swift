#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Ports for tests that bind one port twice (a server that comes back) or expect nothing to
/// listen on a port they freed. A port from binding port 0 lies in the kernel's ephemeral
/// range, from which every other test's outgoing connections and port-0 binds draw too: once
/// freed, one of them may take it before the test binds it again. These lie below that range
/// (32768–60999 on Linux, 49152–65535 on Apple platforms), where only explicit binds go.
public enum FixedPorts {
    /// The range drawn from: below both kernels' ephemeral ranges, above the well-known ports.
    public static let range = 20_000..<32_000

    /// A port in ``range`` that nothing holds now (checked by binding it, with `SO_REUSEADDR`
    /// as servers bind). Fails the process only if 200 random picks are all taken.
    public static func free() -> Int {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            let port = Int.random(in: range, using: &generator)
            if isFree(port) { return port }
        }
        fatalError("no free port in \(range)")
    }

    private static func isFree(_ port: Int) -> Bool {
        let descriptor = TestSockets.stream()
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var reuse: Int32 = 1
        _ = setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        #if canImport(Darwin)
        address.sin_len = UInt8(MemoryLayout<sockaddr_in>.size)
        #endif
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr = in_addr(s_addr: inet_addr("127.0.0.1"))
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}
