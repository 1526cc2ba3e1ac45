import Foundation

extension ProtoDuration {
    /// The longest span protobuf's Duration allows either way: 10,000 years of seconds.
    public static let maximumSeconds: Int64 = 315_576_000_000

    /// Whether the value is one protobuf allows: at most ``maximumSeconds`` either way, nanos
    /// within a second and of the same sign as the seconds. JSON refuses anything else; the
    /// binary form carries any value, as protobuf's does.
    @inlinable
    public var isValid: Bool {
        guard seconds >= -Self.maximumSeconds, seconds <= Self.maximumSeconds,
              nanos > -1_000_000_000, nanos < 1_000_000_000 else { return false }
        return (seconds <= 0 && nanos <= 0) || (seconds >= 0 && nanos >= 0)
    }

    /// The duration of a Swift `Duration`, to the nanosecond (attoseconds below are dropped,
    /// toward zero, as protobuf's own conversions do).
    public init(_ duration: Swift.Duration) {
        let (seconds, attoseconds) = duration.components
        var nanos = attoseconds / 1_000_000_000
        var whole = seconds
        // Swift keeps attoseconds non-negative; protobuf wants nanos with the sign of seconds.
        if whole < 0 && nanos > 0 {
            whole += 1
            nanos -= 1_000_000_000
        }
        self.init(seconds: whole, nanos: Int32(nanos))
    }

    /// The duration as a Swift `Duration`.
    public var duration: Swift.Duration {
        .seconds(seconds) + .nanoseconds(Int64(nanos))
    }

    /// The duration in seconds, as near as a `Double` holds it.
    public var timeInterval: TimeInterval { Double(seconds) + Double(nanos) / 1e9 }
}

extension ProtoDuration {
    /// Not an object of its fields in JSON.
    public static var jsonIsFieldObject: Bool { false }

    /// Seconds with a fraction of 0, 3, 6 or 9 digits and an `s`: `"1.500s"`, `"-0.000000001s"`.
    /// A value outside ``isValid`` cannot be written.
    public func encodeJSON(into writer: inout JSONWriter) throws(JSONEncodingError) {
        guard isValid else { throw .durationOutOfRange(seconds: seconds, nanos: nanos) }
        var text: [UInt8] = [UInt8(ascii: "\"")]
        if seconds < 0 || nanos < 0 { text.append(UInt8(ascii: "-")) }
        text.append(contentsOf: String(seconds.magnitude).utf8)
        RFC3339.appendFraction(nanos: Int32(nanos.magnitude), to: &text)
        text.append(contentsOf: "s\"".utf8)
        writer.writeRawValue(text)
    }

    /// Reads `[-]seconds[.fraction]s` with up to nine fraction digits, within ``isValid``.
    public mutating func decodeJSON(from reader: inout JSONReader) throws(JSONDecodingError) {
        reader.skipWhitespace()
        let offset = reader.offset
        let text = try reader.readName()
        guard let parsed = text.withUnsafeBytes({ Self.parse($0) }) else { throw .invalidDuration(offset: offset) }
        self.seconds = parsed.seconds
        self.nanos = parsed.nanos
    }

    static func parse(_ text: UnsafeRawBufferPointer) -> (seconds: Int64, nanos: Int32)? {
        var index = 0
        let negative = text.first == UInt8(ascii: "-")
        if negative { index = 1 }
        var seconds: Int64 = 0
        var digits = 0
        while index < text.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(text[index]) {
            // Twelve digits already exceed the limit; more cannot overflow what is checked below.
            guard digits < 13 else { return nil }
            seconds = seconds * 10 + Int64(text[index] - UInt8(ascii: "0"))
            digits += 1
            index += 1
        }
        guard digits > 0 else { return nil }
        var nanos: Int32 = 0
        if index < text.count, text[index] == UInt8(ascii: ".") {
            index += 1
            var fractionDigits = 0
            while index < text.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(text[index]) {
                guard fractionDigits < 9 else { return nil }
                nanos = nanos * 10 + Int32(text[index] - UInt8(ascii: "0"))
                fractionDigits += 1
                index += 1
            }
            guard fractionDigits > 0 else { return nil }
            for _ in fractionDigits..<9 { nanos *= 10 }
        }
        guard index == text.count - 1, text[index] == UInt8(ascii: "s") else { return nil }
        guard seconds <= maximumSeconds else { return nil }
        return negative ? (-seconds, -nanos) : (seconds, nanos)
    }
}
