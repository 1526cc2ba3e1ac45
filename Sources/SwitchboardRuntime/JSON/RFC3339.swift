/// RFC 3339 text for timestamps, as the protobuf JSON mapping writes them:
/// UTC with a `Z`, and 0, 3, 6 or 9 fractional digits.
public enum RFC3339 {
    /// The earliest second protobuf's Timestamp allows: 0001-01-01T00:00:00Z.
    public static let minimumSeconds: Int64 = -62_135_596_800
    /// The latest second protobuf's Timestamp allows: 9999-12-31T23:59:59Z.
    public static let maximumSeconds: Int64 = 253_402_300_799

    /// Appends the text of a timestamp, or returns false if it is out of range.
    public static func format(seconds: Int64, nanos: Int32, into output: inout [UInt8]) -> Bool {
        guard seconds >= minimumSeconds, seconds <= maximumSeconds, nanos >= 0, nanos < 1_000_000_000 else {
            return false
        }
        let days = floorDivide(seconds, 86_400)
        let secondOfDay = seconds - days * 86_400
        let (year, month, day) = civil(fromDays: days)
        appendDigits(year, count: 4, into: &output)
        output.append(UInt8(ascii: "-"))
        appendDigits(month, count: 2, into: &output)
        output.append(UInt8(ascii: "-"))
        appendDigits(day, count: 2, into: &output)
        output.append(UInt8(ascii: "T"))
        appendDigits(secondOfDay / 3600, count: 2, into: &output)
        output.append(UInt8(ascii: ":"))
        appendDigits(secondOfDay / 60 % 60, count: 2, into: &output)
        output.append(UInt8(ascii: ":"))
        appendDigits(secondOfDay % 60, count: 2, into: &output)
        appendFraction(nanos: nanos, to: &output)
        output.append(UInt8(ascii: "Z"))
        return true
    }

    /// Appends `.` and 3, 6 or 9 digits of `nanos` (in `0..<1e9`), as few as show it exactly;
    /// nothing for zero. Timestamps and durations share protobuf's rule.
    public static func appendFraction(nanos: Int32, to output: inout [UInt8]) {
        guard nanos != 0 else { return }
        output.append(UInt8(ascii: "."))
        if nanos % 1_000_000 == 0 {
            appendDigits(Int64(nanos / 1_000_000), count: 3, into: &output)
        } else if nanos % 1000 == 0 {
            appendDigits(Int64(nanos / 1000), count: 6, into: &output)
        } else {
            appendDigits(Int64(nanos), count: 9, into: &output)
        }
    }

    /// Parses RFC 3339 text with any UTC offset and up to 9 fractional digits.
    public static func parse(_ text: UnsafeRawBufferPointer) -> (seconds: Int64, nanos: Int32)? {
        var index = 0
        func number(_ digits: Int) -> Int64? {
            guard index + digits <= text.count else { return nil }
            var value: Int64 = 0
            for _ in 0..<digits {
                let byte = text[index]
                guard byte >= 48, byte <= 57 else { return nil }
                value = value * 10 + Int64(byte - 48)
                index += 1
            }
            return value
        }
        func expect(_ characters: String) -> Bool {
            guard index < text.count, characters.utf8.contains(text[index]) else { return false }
            index += 1
            return true
        }
        guard let year = number(4), expect("-"), let month = number(2), expect("-"), let day = number(2),
              expect("T"), let hour = number(2), expect(":"), let minute = number(2), expect(":"),
              let second = number(2)
        else { return nil }
        guard (1...12).contains(month), day >= 1, day <= daysInMonth(year: year, month: month),
              hour < 24, minute < 60, second < 60
        else { return nil }
        var nanos: Int64 = 0
        if index < text.count, text[index] == UInt8(ascii: ".") {
            index += 1
            var digits = 0
            while index < text.count, text[index] >= 48, text[index] <= 57 {
                guard digits < 9 else { return nil }
                nanos = nanos * 10 + Int64(text[index] - 48)
                digits += 1
                index += 1
            }
            guard digits > 0 else { return nil }
            for _ in digits..<9 { nanos *= 10 }
        }
        var offset: Int64 = 0
        guard index < text.count else { return nil }
        // Uppercase only, as protobuf's JSON mapping requires (RFC 3339 allows `t` and `z`).
        if text[index] == UInt8(ascii: "Z") {
            index += 1
        } else {
            let sign: Int64 = text[index] == UInt8(ascii: "-") ? -1 : 1
            guard expect("+-"), let offsetHours = number(2), expect(":"), let offsetMinutes = number(2),
                  offsetHours < 24, offsetMinutes < 60
            else { return nil }
            offset = sign * (offsetHours * 3600 + offsetMinutes * 60)
        }
        guard index == text.count else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset
        guard seconds >= minimumSeconds, seconds <= maximumSeconds else { return nil }
        return (seconds, Int32(nanos))
    }

    // Howard Hinnant's civil-calendar algorithms (proleptic Gregorian, days since 1970-01-01).
    static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = floorDivide(y, 400)
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    static func civil(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = floorDivide(z, 146_097)
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    static func daysInMonth(year: Int64, month: Int64) -> Int64 {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    static func floorDivide(_ a: Int64, _ b: Int64) -> Int64 {
        a >= 0 ? a / b : -((-a + b - 1) / b)
    }

    static func appendDigits(_ value: Int64, count: Int, into output: inout [UInt8]) {
        var divisor: Int64 = 1
        for _ in 1..<count { divisor *= 10 }
        var remaining = value
        while divisor > 0 {
            output.append(UInt8(remaining / divisor) + 48)
            remaining %= divisor
            divisor /= 10
        }
    }
}
