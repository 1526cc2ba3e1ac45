import Foundation

extension ProtoTimestamp {
    /// The earliest value protobuf's Timestamp allows, 0001-01-01T00:00:00Z.
    public static let minimum = ProtoTimestamp(seconds: RFC3339.minimumSeconds, nanos: 0)
    /// The latest value protobuf's Timestamp allows, 9999-12-31T23:59:59.999999999Z.
    public static let maximum = ProtoTimestamp(seconds: RFC3339.maximumSeconds, nanos: 999_999_999)

    /// Whether the value is one protobuf allows: years 1 to 9999, nanos in `0..<1_000_000_000`.
    /// JSON refuses anything else, reading and writing; the binary form carries any value
    /// exactly, as protobuf's does (its conformance suite requires a binary out-of-range
    /// value to parse, and to fail only when written as JSON).
    @inlinable
    public var isValid: Bool {
        seconds >= RFC3339.minimumSeconds && seconds <= RFC3339.maximumSeconds && nanos >= 0 && nanos < 1_000_000_000
    }

    /// The timestamp of a date, to the microsecond.
    ///
    /// `Date` is a `Double` of seconds since 2001, which resolves about 0.1 µs for
    /// present-day dates; digits below a microsecond are rounding noise, so they are dropped.
    /// Dates outside what a Timestamp holds saturate at ``minimum`` and ``maximum``.
    public init(date: Date) {
        let interval = date.timeIntervalSince1970
        guard interval.isFinite, interval >= Double(RFC3339.minimumSeconds) else {
            self = interval.isNaN || interval < 0 ? .minimum : .maximum
            return
        }
        guard interval < Double(RFC3339.maximumSeconds + 1) else {
            self = .maximum
            return
        }
        let whole = interval.rounded(.down)
        var seconds = Int64(whole)
        var micros = Int64(((interval - whole) * 1e6).rounded())
        if micros >= 1_000_000 {
            seconds += 1
            micros -= 1_000_000
        }
        guard seconds <= RFC3339.maximumSeconds else {
            self = .maximum
            return
        }
        self.init(seconds: seconds, nanos: Int32(micros * 1000))
    }

    /// The current time.
    public static var now: ProtoTimestamp { ProtoTimestamp(date: Date()) }

    /// The date this timestamp names, as near as a `Date` can hold it.
    public var date: Date {
        Date(timeIntervalSince1970: Double(seconds) + Double(nanos) / 1e9)
    }
}

extension ProtoTimestamp: Comparable {
    /// Earlier timestamps sort first.
    public static func < (lhs: ProtoTimestamp, rhs: ProtoTimestamp) -> Bool {
        (lhs.seconds, lhs.nanos) < (rhs.seconds, rhs.nanos)
    }
}

extension ProtoTimestamp {
    /// Not an object of its fields in JSON.
    public static var jsonIsFieldObject: Bool { false }

    /// RFC 3339 text in UTC, such as `"1972-01-01T10:00:20.021Z"`; fractions take 0, 3, 6 or 9
    /// digits. A value outside ``isValid`` cannot be written.
    public func encodeJSON(into writer: inout JSONWriter) throws(JSONEncodingError) {
        var text: [UInt8] = [UInt8(ascii: "\"")]
        guard isValid, RFC3339.format(seconds: seconds, nanos: nanos, into: &text) else {
            throw .timestampOutOfRange(secondsSince1970: seconds)
        }
        text.append(UInt8(ascii: "\""))
        writer.writeRawValue(text)
    }

    /// Reads RFC 3339 text with any offset, uppercase `T` and `Z` only, years 1 to 9999.
    public mutating func decodeJSON(from reader: inout JSONReader) throws(JSONDecodingError) {
        let parts = try reader.readTimestamp()
        seconds = parts.seconds
        nanos = parts.nanos
    }
}
