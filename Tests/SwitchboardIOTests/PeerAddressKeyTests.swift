@testable import SwitchboardIO
import Testing

/// IPv6 peers count by /64 (one host is routinely given a whole /64 and could pick a fresh
/// address for every connection), and IPv4-mapped ones as their IPv4 address (from the I/O
/// review: both slipped past the per-address limit).
struct PeerAddressKeyTests {
    @Test func ipv6CountsByItsSlash64AndMappedIPv4AsIPv4() {
        let host = [UInt8](repeating: 0x20, count: 8)
        let first = PeerAddressLimit.key(ipv6: host + [0, 0, 0, 0, 0, 0, 0, 1])
        let second = PeerAddressLimit.key(ipv6: host + [9, 9, 9, 9, 9, 9, 9, 9])
        #expect(first == second, "one /64, one count")
        #expect(PeerAddressLimit.key(ipv6: [UInt8](repeating: 0x21, count: 8) + [0, 0, 0, 0, 0, 0, 0, 1]) != first, "another /64")
        let mapped = [UInt8](repeating: 0, count: 10) + [0xFF, 0xFF, 127, 0, 0, 1]
        #expect(PeerAddressLimit.key(ipv6: mapped) == [127, 0, 0, 1])
        #expect(first.count == 9, "never equal to an IPv4 key")
    }
}
