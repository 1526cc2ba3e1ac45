import Foundation

/// HTTP dates (RFC 9110 section 5.6.7) in the three forms a recipient must accept:
/// IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the obsolete RFC 850 form
/// (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime's (`Sun Nov  6 08:49:37 1994`).
///
/// Read by hand rather than with `DateFormatter`: the same on every platform, with RFC 9110's
/// rule for RFC 850's two-digit year (which a formatter's two-digit window does not follow),
/// and no formatter made per response. Names are matched without regard to case.
enum HTTPDate {
    static let dayNames = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    static let longDayNames = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
    static let monthNames = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// The moment `text` names, or `nil` if it is no HTTP date. `now` places an RFC 850
    /// date's two-digit year: one that would be more than 50 years after `now` is the
    /// century before.
    static func parse(_ text: String, now: Date) -> Date? {
        let bytes = Array(text.utf8)
        guard let moment = imfFixdate(bytes) ?? rfc850Date(bytes, now: now) ?? asctimeDate(bytes) else { return nil }
        return Date(timeIntervalSince1970: Double(moment))
    }

    /// `Sun, 06 Nov 1994 08:49:37 GMT`
    static func imfFixdate(_ bytes: [UInt8]) -> Int? {
        var cursor = Cursor(bytes: bytes)
        guard cursor.name(in: dayNames) != nil, cursor.literal(", "),
              let day = cursor.digits(2), cursor.literal(" "),
              let month = cursor.name(in: monthNames), cursor.literal(" "),
              let year = cursor.digits(4), cursor.literal(" "),
              let time = cursor.timeOfDay(), cursor.literal(" GMT"), cursor.isAtEnd
        else { return nil }
        return seconds(year: year, month: month + 1, day: day, time: time)
    }

    /// `Sunday, 06-Nov-94 08:49:37 GMT`
    static func rfc850Date(_ bytes: [UInt8], now: Date) -> Int? {
        var cursor = Cursor(bytes: bytes)
        guard cursor.name(in: longDayNames) != nil, cursor.literal(", "),
              let day = cursor.digits(2), cursor.literal("-"),
              let month = cursor.name(in: monthNames), cursor.literal("-"),
              let shortYear = cursor.digits(2), cursor.literal(" "),
              let time = cursor.timeOfDay(), cursor.literal(" GMT"), cursor.isAtEnd
        else { return nil }
        // Now as a civil date, to compare with the same date 50 years on.
        let nowSeconds = now.timeIntervalSince1970.rounded(.down)
        guard nowSeconds.magnitude < 1e14 else { return nil }
        let nowWhole = Int(nowSeconds)
        let nowDays = nowWhole >= 0 ? nowWhole / 86400 : (nowWhole - 86399) / 86400
        let (nowYear, nowMonth, nowDay) = civil(fromDays: nowDays)
        let nowTime = nowWhole - nowDays * 86400
        // The latest year ending in these digits that is at most 50 years on, one century
        // earlier if the date in it is still more than 50 years after now.
        let limit = nowYear + 50
        var year = limit - ((limit - shortYear) % 100 + 100) % 100
        let timeOfDay = time.hour * 3600 + time.minute * 60 + time.second
        if (year, month + 1, day, timeOfDay) > (limit, nowMonth, nowDay, nowTime) { year -= 100 }
        return seconds(year: year, month: month + 1, day: day, time: time)
    }

    /// `Sun Nov  6 08:49:37 1994`: the day is two digits or a space and one digit.
    static func asctimeDate(_ bytes: [UInt8]) -> Int? {
        var cursor = Cursor(bytes: bytes)
        guard cursor.name(in: dayNames) != nil, cursor.literal(" "),
              let month = cursor.name(in: monthNames), cursor.literal(" "),
              let day = cursor.literal(" ") ? cursor.digits(1) : cursor.digits(2), cursor.literal(" "),
              let time = cursor.timeOfDay(), cursor.literal(" "),
              let year = cursor.digits(4), cursor.isAtEnd
        else { return nil }
        return seconds(year: year, month: month + 1, day: day, time: time)
    }

    /// Seconds since 1970 for a date and time in GMT; `nil` for a day its month does not have.
    /// The calendar arithmetic is RFC 3339's (timestamps), shared.
    static func seconds(year: Int, month: Int, day: Int, time: (hour: Int, minute: Int, second: Int)) -> Int? {
        guard (1...Int(RFC3339.daysInMonth(year: Int64(year), month: Int64(month)))).contains(day) else { return nil }
        return days(year: year, month: month, day: day) * 86400 + time.hour * 3600 + time.minute * 60 + time.second
    }

    /// Days since 1970-01-01 in the proleptic Gregorian calendar.
    static func days(year: Int, month: Int, day: Int) -> Int {
        Int(RFC3339.daysFromCivil(year: Int64(year), month: Int64(month), day: Int64(day)))
    }

    /// The date `days` after 1970-01-01.
    static func civil(fromDays days: Int) -> (year: Int, month: Int, day: Int) {
        let date = RFC3339.civil(fromDays: Int64(days))
        return (Int(date.year), Int(date.month), Int(date.day))
    }

    /// Reads an HTTP date's parts from the front of its bytes.
    struct Cursor {
        let bytes: [UInt8]
        var index = 0

        var isAtEnd: Bool { index == bytes.count }

        /// Takes `text` if the bytes go on with it exactly.
        mutating func literal(_ text: String) -> Bool {
            let expected = Array(text.utf8)
            guard bytes.count - index >= expected.count, bytes[index..<index + expected.count].elementsEqual(expected) else { return false }
            index += expected.count
            return true
        }

        /// Exactly `count` ASCII digits as a number.
        mutating func digits(_ count: Int) -> Int? {
            guard bytes.count - index >= count else { return nil }
            var value = 0
            for byte in bytes[index..<index + count] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            index += count
            return value
        }

        /// The index of the name in `names` the bytes go on with, ASCII case ignored.
        mutating func name(in names: [String]) -> Int? {
            for (position, name) in names.enumerated() {
                let expected = Array(name.utf8)
                guard bytes.count - index >= expected.count,
                      bytes[index..<index + expected.count].elementsEqual(expected, by: { $0 | 0x20 == $1 | 0x20 })
                else { continue }
                index += expected.count
                return position
            }
            return nil
        }

        /// `HH:MM:SS`, a leap second allowed.
        mutating func timeOfDay() -> (hour: Int, minute: Int, second: Int)? {
            guard let hour = digits(2), hour < 24, literal(":"), let minute = digits(2), minute < 60,
                  literal(":"), let second = digits(2), second <= 60
            else { return nil }
            return (hour, minute, second)
        }
    }
}
