import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Counts a server's connections by the peer's IP address, so one host cannot take every
/// connection slot (and lock everyone else out) however many sockets it opens.
package final class PeerAddressLimit: @unchecked Sendable {
    /// The most connections one address may hold at once.
    package let limit: Int
    private let lock = AdaptiveLock()
    private var counts: [[UInt8]: Int] = [:]

    package init(limit: Int) { self.limit = max(1, limit) }

    /// Takes a slot for `descriptor`'s peer: its address (to give back with ``release(_:)``),
    /// or `nil` when that address holds `limit` connections already. A socket whose peer
    /// cannot be read (it left already) counts as one unknown address.
    package func admit(_ descriptor: Int32) -> [UInt8]? {
        let address = Self.peerAddress(descriptor)
        return lock.withLock {
            let count = counts[address, default: 0]
            guard count < limit else { return nil }
            counts[address] = count + 1
            return address
        }
    }

    /// Gives back a slot `admit` took.
    package func release(_ address: [UInt8]) {
        lock.withLock {
            guard let count = counts[address] else { return }
            counts[address] = count > 1 ? count - 1 : nil
        }
    }

    /// Connections one address holds now.
    package func count(of address: [UInt8]) -> Int { lock.withLock { counts[address, default: 0] } }

    /// What an IPv6 address counts as: an IPv4-mapped one (`::ffff:a.b.c.d`) as its IPv4
    /// address, any other as its /64 network, since one host is routinely given a whole /64
    /// and could otherwise pick a fresh address for every connection.
    static func key(ipv6 bytes: [UInt8]) -> [UInt8] {
        guard bytes.count == 16 else { return bytes }
        if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF { return Array(bytes[12...]) }
        return Array(bytes[..<8]) + [0x40]
    }

    /// The peer's address as counted: 4 bytes for IPv4 (mapped ones too), an IPv6 /64 network
    /// as 9 bytes, or empty if unknown.
    static func peerAddress(_ descriptor: Int32) -> [UInt8] {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let found = withUnsafeMutablePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(descriptor, $0, &length) == 0 }
        }
        guard found else { return [] }
        switch Int32(storage.ss_family) {
        case AF_INET:
            return withUnsafeBytes(of: &storage) { raw in
                raw.load(as: sockaddr_in.self).sin_addr.s_addr.bigEndian.bytes
            }
        case AF_INET6:
            return withUnsafeBytes(of: &storage) { raw in
                withUnsafeBytes(of: raw.load(as: sockaddr_in6.self).sin6_addr) { key(ipv6: Array($0)) }
            }
        default:
            return []
        }
    }
}

private extension UInt32 {
    var bytes: [UInt8] { [UInt8(self >> 24), UInt8(truncatingIfNeeded: self >> 16), UInt8(truncatingIfNeeded: self >> 8), UInt8(truncatingIfNeeded: self)] }
}
