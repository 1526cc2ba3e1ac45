/// The `grpc-timeout` header: at most eight digits and a unit (H, M, S, m, u, n).
public enum GRPCTimeout {
    private static let maximum = 99_999_999
    private static let units: [(Character, Int64)] = [
        ("n", 1), ("u", 1_000), ("m", 1_000_000), ("S", 1_000_000_000), ("M", 60_000_000_000), ("H", 3_600_000_000_000),
    ]

    /// The header value for `duration`: the finest unit whose count fits eight digits,
    /// rounded up so the server never sees a shorter deadline than the caller's.
    public static func encode(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0, duration > .zero else { return "1n" }
        let nanoseconds = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        let total = nanoseconds.overflow ? Int64.max : nanoseconds.partialValue.addingReportingOverflow(attoseconds / 1_000_000_000).partialValue
        for (unit, size) in units {
            let count = (total / size) + (total % size == 0 ? 0 : 1)
            if count <= maximum { return "\(count)\(unit)" }
        }
        return "\(maximum)H"
    }

    /// The duration a header value gives, or nil if it is not a valid `grpc-timeout`.
    public static func decode(_ text: String) -> Duration? {
        guard let unit = text.last, (2...9).contains(text.count), let size = units.first(where: { $0.0 == unit })?.1 else { return nil }
        let digits = text.dropLast()
        guard digits.allSatisfy({ $0.isASCII && $0.isNumber }), let count = Int64(digits) else { return nil }
        let nanoseconds = count.multipliedReportingOverflow(by: size)
        return .nanoseconds(nanoseconds.overflow ? Int64.max : nanoseconds.partialValue)
    }
}
