/// Validates UTF-8 incrementally, so text split across frames or TCP reads fails at the
/// first bad byte (RFC 6455 §8.1, Autobahn 6.4) rather than at the end of the message.
public struct UTF8StreamValidator: Sendable, Hashable {
    /// Continuation bytes still expected for the current scalar.
    private var remaining = 0
    /// Allowed range for the next byte (tighter after E0, ED, F0, F4).
    private var lower: UInt8 = 0x80
    private var upper: UInt8 = 0xBF

    /// Creates a validator at a scalar boundary.
    public init() {}

    /// Feeds bytes; returns false at the first byte that cannot be part of valid UTF-8.
    public mutating func feed(_ bytes: some Sequence<UInt8>) -> Bool {
        for byte in bytes {
            if remaining == 0 {
                switch byte {
                case 0x00...0x7F: continue
                case 0xC2...0xDF: remaining = 1; lower = 0x80; upper = 0xBF
                case 0xE0: remaining = 2; lower = 0xA0; upper = 0xBF
                case 0xE1...0xEC, 0xEE...0xEF: remaining = 2; lower = 0x80; upper = 0xBF
                case 0xED: remaining = 2; lower = 0x80; upper = 0x9F
                case 0xF0: remaining = 3; lower = 0x90; upper = 0xBF
                case 0xF1...0xF3: remaining = 3; lower = 0x80; upper = 0xBF
                case 0xF4: remaining = 3; lower = 0x80; upper = 0x8F
                default: return false
                }
            } else {
                guard byte >= lower, byte <= upper else { return false }
                remaining -= 1
                lower = 0x80
                upper = 0xBF
            }
        }
        return true
    }

    /// Whether the bytes so far end on a scalar boundary (required at message end).
    public var isComplete: Bool { remaining == 0 }
}
