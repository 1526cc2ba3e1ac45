import Foundation

/// A point in time as protobuf's `google.protobuf.Timestamp`: seconds and
/// nanoseconds since the Unix epoch, normalised so `nanos` is in `0..<1e9`.
public struct TimestampParts: Sendable, Hashable {
    /// Whole seconds since 1970-01-01T00:00:00Z; negative before it.
    public var seconds: Int64
    /// Nanoseconds after `seconds`, in `0..<1_000_000_000`.
    public var nanos: Int32

    /// Whether the value is one protobuf's Timestamp allows: 0001-01-01 to 9999-12-31, and
    /// nanos in `0..<1_000_000_000`.
    @inlinable public var isValid: Bool {
        seconds >= RFC3339.minimumSeconds && seconds <= RFC3339.maximumSeconds && nanos >= 0 && nanos < 1_000_000_000
    }

    /// Creates parts from their values.
    public init(seconds: Int64, nanos: Int32) {
        self.seconds = seconds
        self.nanos = nanos
    }

    /// Splits a date, rounding to the nearest microsecond.
    ///
    /// `Date` is a `Double` of seconds since 2001, which resolves about 0.1 µs for
    /// present-day dates; digits below a microsecond are rounding noise, so they are
    /// dropped. Timestamps written with whole microseconds therefore survive
    /// decode and re-encode exactly (for dates between 1933 and 2069).
    @inlinable
    public init(_ date: Date) {
        let interval = date.timeIntervalSince1970
        guard interval.isFinite else {
            self.init(seconds: interval < 0 ? RFC3339.minimumSeconds : RFC3339.maximumSeconds, nanos: 0)
            return
        }
        let clamped = min(max(interval, -9.2e18), 9.2e18)
        let whole = clamped.rounded(.down)
        var seconds = Int64(whole)
        var micros = Int64(((clamped - whole) * 1e6).rounded())
        if micros >= 1_000_000 {
            // Rounding must not carry the last second of 9999 out of what a Timestamp holds.
            if seconds == RFC3339.maximumSeconds {
                self.init(seconds: seconds, nanos: 999_999_000)
                return
            }
            seconds += 1
            micros -= 1_000_000
        }
        // Near year 10000 a Double cannot tell 9999-12-31T23:59:59.999999 from the next
        // second; the decoder may have read the former, so that is what is written back.
        if seconds == RFC3339.maximumSeconds + 1 && micros == 0 {
            self.init(seconds: RFC3339.maximumSeconds, nanos: 999_999_000)
            return
        }
        self.init(seconds: seconds, nanos: Int32(micros * 1000))
    }

    /// The date these parts describe.
    @inlinable
    public var date: Date {
        Date(timeIntervalSince1970: Double(seconds) + Double(nanos) / 1e9)
    }
}

/// `timestamp`: encoded as a nested `google.protobuf.Timestamp` (seconds = 1, nanos = 2)
/// and as RFC 3339 text in JSON. The Swift value is `Date`; the default is the epoch.
public enum TimestampCodec: FieldCodec {
    public static var wireType: WireType { .lengthDelimited }
    public static var defaultValue: Date { Date(timeIntervalSince1970: 0) }
    @inlinable public static func isDefault(_ value: Date) -> Bool { value.timeIntervalSince1970 == 0 }

    @inlinable
    static func payloadSize(_ parts: TimestampParts) -> Int {
        (parts.seconds == 0 ? 0 : 1 + WireSize.varint(UInt64(bitPattern: parts.seconds)))
            + (parts.nanos == 0 ? 0 : 1 + WireSize.varint(UInt64(bitPattern: Int64(parts.nanos))))
    }

    @inlinable public static func encodedSize(of value: Date) -> Int {
        WireSize.lengthDelimited(payloadSize(TimestampParts(value)))
    }

    @inlinable public static func write(_ value: Date, to writer: inout WireWriter) {
        let parts = TimestampParts(value)
        writer.writeVarint(UInt64(payloadSize(parts)))
        if parts.seconds != 0 {
            writer.writeByte(0x08)
            writer.writeVarint(UInt64(bitPattern: parts.seconds))
        }
        if parts.nanos != 0 {
            writer.writeByte(0x10)
            writer.writeVarint(UInt64(bitPattern: Int64(parts.nanos)))
        }
    }

    /// Reads the nested message; fields other than seconds and nanos are skipped,
    /// because a `Date` has nowhere to keep them.
    @inlinable public static func read(from reader: inout WireReader) throws(WireDecodingError) -> Date {
        try reader.withLengthDelimited { (inner: inout WireReader) throws(WireDecodingError) -> Date in
            var parts = TimestampParts(seconds: 0, nanos: 0)
            var ignored = UnknownFields()
            while let tag = try inner.nextTag() {
                switch tag.rawValue {
                case 0x08: parts.seconds = Int64(bitPattern: try inner.readVarint())
                case 0x10: parts.nanos = Int32(truncatingIfNeeded: try inner.readVarint())
                default: try inner.skipField(tag, into: &ignored)
                }
            }
            // Protobuf's Timestamp covers years 1 to 9999 with nanos in 0..<1e9; anything
            // else has no meaning (and would not survive a round trip through Date).
            guard parts.isValid else { throw .invalidTimestamp(seconds: parts.seconds, nanos: parts.nanos) }
            return parts.date
        }
    }

    public static func writeJSON(_ value: Date, to writer: inout JSONWriter) throws(JSONEncodingError) {
        let parts = TimestampParts(value)
        var text: [UInt8] = [UInt8(ascii: "\"")]
        guard RFC3339.format(seconds: parts.seconds, nanos: parts.nanos, into: &text) else {
            throw .timestampOutOfRange(secondsSince1970: parts.seconds)
        }
        text.append(UInt8(ascii: "\""))
        writer.writeRawValue(text)
    }

    public static func readJSON(from reader: inout JSONReader) throws(JSONDecodingError) -> Date? {
        if reader.readNull() { return nil }
        let parts = try reader.readTimestamp()
        return TimestampParts(seconds: parts.seconds, nanos: parts.nanos).date
    }
}

/// `timestamp(millis)`: milliseconds since the Unix epoch as an `int64` varint, the
/// form Signal's server uses; a quoted integer in JSON. The Swift value is `Date`.
public enum UnixMillisTimestampCodec: FieldCodec {
    public static var wireType: WireType { .varint }
    public static var defaultValue: Date { Date(timeIntervalSince1970: 0) }
    @inlinable public static func isDefault(_ value: Date) -> Bool { millis(value) == 0 }

    /// The date rounded to whole milliseconds, saturating at the ends of `Int64`.
    @inlinable
    public static func millis(_ date: Date) -> Int64 {
        let value = (date.timeIntervalSince1970 * 1000).rounded()
        guard value.isFinite else { return value < 0 ? .min : .max }
        if value >= 9.2e18 { return .max }
        if value <= -9.2e18 { return .min }
        return Int64(value)
    }

    @inlinable public static func encodedSize(of value: Date) -> Int {
        WireSize.varint(UInt64(bitPattern: millis(value)))
    }
    @inlinable public static func write(_ value: Date, to writer: inout WireWriter) {
        writer.writeVarint(UInt64(bitPattern: millis(value)))
    }
    @inlinable public static func read(from reader: inout WireReader) throws(WireDecodingError) -> Date {
        Date(timeIntervalSince1970: Double(Int64(bitPattern: try reader.readVarint())) / 1000)
    }
    public static func writeJSON(_ value: Date, to writer: inout JSONWriter) {
        writer.writeQuotedNumber(millis(value))
    }
    public static func readJSON(from reader: inout JSONReader) throws(JSONDecodingError) -> Date? {
        if reader.readNull() { return nil }
        return Date(timeIntervalSince1970: Double(try reader.readInteger(in: Int64.min...Int64.max)) / 1000)
    }
}
