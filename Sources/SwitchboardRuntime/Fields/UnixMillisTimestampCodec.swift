import Foundation

/// `timestamp(millis)`: milliseconds since the Unix epoch as an `int64` varint, the
/// form Signal's server uses; a quoted integer in JSON. The Swift value is `Date`.
public enum UnixMillisTimestampCodec: FieldCodec {
    /// The most milliseconds either side of 1970 a `Date` holds exactly (about ±31,700
    /// years). A larger count is read as this bound: no real clock gives one, and refusing it
    /// would drop a whole message (a Signal envelope carries its sender's timestamp) for one
    /// nonsensical field. Within the bound every count round-trips exactly.
    public static let maximumMilliseconds: Int64 = 1_000_000_000_000_000

    /// `milliseconds` within ±``maximumMilliseconds``.
    @inlinable
    public static func clamped(_ milliseconds: Int64) -> Int64 {
        min(max(milliseconds, -maximumMilliseconds), maximumMilliseconds)
    }

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
        Date(timeIntervalSince1970: Double(clamped(Int64(bitPattern: try reader.readVarint()))) / 1000)
    }
    public static func writeJSON(_ value: Date, to writer: inout JSONWriter) {
        writer.writeQuotedNumber(millis(value))
    }
    public static func readJSON(from reader: inout JSONReader) throws(JSONDecodingError) -> Date? {
        if reader.readNull() { return nil }
        return Date(timeIntervalSince1970: Double(clamped(try reader.readInteger(in: Int64.min...Int64.max))) / 1000)
    }
}
