/// The `grpc-timeout` header: at most eight digits and a unit (H, M, S, m, u, n).
public enum GRPCTimeout {
    private static let maximum = 99_999_999
    private static let units: [(unit: UInt8, nanoseconds: Int64)] = [
        (UInt8(ascii: "n"), 1), (UInt8(ascii: "u"), 1_000), (UInt8(ascii: "m"), 1_000_000), (UInt8(ascii: "S"), 1_000_000_000),
        (UInt8(ascii: "M"), 60_000_000_000), (UInt8(ascii: "H"), 3_600_000_000_000),
    ]

    /// The significant digits a value keeps: it is rounded up to them, at most 1% later.
    static let significantDigits = 3

    /// The header value for `duration`: rounded up to three significant digits (so the server
    /// never sees a shorter deadline than the caller's, and at most 1% longer), in the
    /// coarsest unit that holds the rounded value exactly within eight digits.
    ///
    /// Rounded because a call's remaining time is measured afresh each call: to the
    /// nanosecond, every request would carry a different value, and the request's header
    /// block would never be the one the peer's HPACK decoder just read (the block memory
    /// then matches only the fields before it). Rounded, calls with the same timeout send the
    /// same text ("30S" for 30 s) as long as they encode it within a unit of its third digit
    /// after setting their deadline (0.1 s of 30 s; between 0.1% and 1% of a timeout of three
    /// significant digits, as defaults are), which a busy client's calls queued behind one
    /// another stay within. The client still ends a call at its own deadline, exactly, with
    /// RST_STREAM.
    public static func encode(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0, duration > .zero else { return "1n" }
        let nanoseconds = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        let sum = nanoseconds.partialValue.addingReportingOverflow(attoseconds / 1_000_000_000 + (attoseconds % 1_000_000_000 == 0 ? 0 : 1))
        let total = nanoseconds.overflow || sum.overflow ? Int64.max : sum.partialValue
        let rounded = roundedUp(total)
        // Coarsest first: the shortest text for a value that a unit holds exactly. Unrolled
        // with constant divisors (a multiply each), not a loop over a table: this runs for
        // every call that has a deadline.
        if let count = whole(rounded, in: 3_600_000_000_000) { return text(count, unit: UInt8(ascii: "H")) }
        if let count = whole(rounded, in: 60_000_000_000) { return text(count, unit: UInt8(ascii: "M")) }
        if let count = whole(rounded, in: 1_000_000_000) { return text(count, unit: UInt8(ascii: "S")) }
        if let count = whole(rounded, in: 1_000_000) { return text(count, unit: UInt8(ascii: "m")) }
        if let count = whole(rounded, in: 1_000) { return text(count, unit: UInt8(ascii: "u")) }
        if let count = whole(rounded, in: 1) { return text(count, unit: UInt8(ascii: "n")) }
        // Finer units cannot hold it in eight digits: the finest that can, rounded up.
        for (unit, size) in units {
            let count = (rounded / size) + (rounded % size == 0 ? 0 : 1)
            if count <= maximum { return text(count, unit: unit) }
        }
        return text(Int64(maximum), unit: UInt8(ascii: "H"))
    }

    /// `value` in units of `size`, if it is a whole number of them within eight digits.
    @inline(__always)
    private static func whole(_ value: Int64, in size: Int64) -> Int64? {
        let (count, remainder) = value.quotientAndRemainder(dividingBy: size)
        return remainder == 0 && count <= maximum ? count : nil
    }

    /// `nanoseconds` rounded up to ``significantDigits`` significant digits (saturating).
    static func roundedUp(_ nanoseconds: Int64) -> Int64 {
        // The scale is the power of ten that leaves the significant digits; found by
        // multiplying the limit up, not by dividing the value (a division per digit).
        var limit: Int64 = 1
        for _ in 0..<significantDigits { limit *= 10 }
        var scale: Int64 = 1
        while nanoseconds >= limit {
            scale *= 10
            let (next, overflow) = limit.multipliedReportingOverflow(by: 10)
            // Past Int64: every value is below the next limit.
            if overflow { break }
            limit = next
        }
        guard scale > 1 else { return nanoseconds }
        let (whole, remainder) = nanoseconds.quotientAndRemainder(dividingBy: scale)
        let product = (whole + (remainder == 0 ? 0 : 1)).multipliedReportingOverflow(by: scale)
        return product.overflow ? Int64.max : product.partialValue
    }

    /// `count` in decimal, then `unit`: at most nine ASCII bytes, written in place into a
    /// small string (an interpolation cost a `Range` metadata lookup and two string buffers).
    private static func text(_ count: Int64, unit: UInt8) -> String {
        precondition((0...Int64(maximum)).contains(count), "a grpc-timeout count of eight digits at most")
        return String(unsafeUninitializedCapacity: 9) { buffer in
            var digits = 1
            var rest = count / 10
            while rest > 0 { digits += 1; rest /= 10 }
            var value = count
            var index = digits
            while index > 0 {
                index -= 1
                buffer[index] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: value % 10)
                value /= 10
            }
            buffer[digits] = unit
            return digits + 1
        }
    }

    /// The duration a header value gives, or nil if it is not a valid `grpc-timeout`.
    public static func decode(_ text: String) -> Duration? {
        var text = text
        // Over the borrowed bytes: the collection methods of the UTF-8 view (`last`,
        // `dropLast`) and a search of the unit table cost several times the parse itself.
        return text.withUTF8 { bytes -> Duration? in
            guard (2...9).contains(bytes.count) else { return nil }
            let size: Int64
            switch bytes[bytes.count - 1] {
            case UInt8(ascii: "n"): size = 1
            case UInt8(ascii: "u"): size = 1_000
            case UInt8(ascii: "m"): size = 1_000_000
            case UInt8(ascii: "S"): size = 1_000_000_000
            case UInt8(ascii: "M"): size = 60_000_000_000
            case UInt8(ascii: "H"): size = 3_600_000_000_000
            default: return nil
            }
            var count: Int64 = 0
            for index in 0 ..< bytes.count - 1 {
                let byte = bytes[index]
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                count = count * 10 + Int64(byte - UInt8(ascii: "0"))
            }
            let nanoseconds = count.multipliedReportingOverflow(by: size)
            return .nanoseconds(nanoseconds.overflow ? Int64.max : nanoseconds.partialValue)
        }
    }
}
