package import Foundation

/// Dates as UTC calendar fields, converted by arithmetic (Howard Hinnant's `days_from_civil` and
/// `civil_from_days`): a timestamp of a fixed form costs nothing this way, where Foundation's first
/// ISO 8601 style sets up calendar and time-zone caches on every no-change check.
///
/// The proleptic Gregorian calendar throughout, as ISO 8601 has it.
package struct CivilTime: Sendable, Hashable {
    package var year: Int
    package var month: Int
    package var day: Int
    package var hour: Int
    package var minute: Int
    package var second: Int

    /// The fields of `date` in UTC, whole seconds rounded down.
    package init(_ date: Date) {
        let seconds = Int(date.timeIntervalSince1970.rounded(.down))
        let days = Self.floorDivide(seconds, 86_400)
        let secondOfDay = seconds - days * 86_400
        (hour, minute, second) = (secondOfDay / 3_600, secondOfDay % 3_600 / 60, secondOfDay % 60)
        let shifted = days + 719_468
        let era = Self.floorDivide(shifted, 146_097)
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
    }

    /// The fields as given, or `nil` when they name no instant (a 30 February, an hour 24).
    /// A leap second (`:60`) is refused too: it is the fallback's to read.
    package init?(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) {
        guard (1...12).contains(month), (1...Self.days(inMonth: month, of: year)).contains(day),
            (0..<24).contains(hour), (0..<60).contains(minute), (0..<60).contains(second)
        else { return nil }
        (self.year, self.month, self.day, self.hour, self.minute, self.second) = (
            year, month, day, hour, minute, second
        )
    }

    /// The instant, in UTC.
    package var date: Date {
        Self.instant(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
    }

    /// The instant the fields name, unchecked: a day past the month's end runs on into the next
    /// (HTTP dates are checked by their own rules first).
    package static func instant(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) -> Date {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = floorDivide(shiftedYear, 400)
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        return Date(timeIntervalSince1970: Double(days * 86_400 + hour * 3_600 + minute * 60 + second))
    }

    /// The number ASCII digits `bytes` spell (all of them digits), or `nil`.
    package static func decimal(_ bytes: some Collection<UInt8>) -> Int? {
        var value = 0
        for byte in bytes {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return value
    }

    private static func days(inMonth month: Int, of year: Int) -> Int {
        switch month {
        case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    private static func floorDivide(_ value: Int, _ divisor: Int) -> Int {
        value >= 0 ? value / divisor : -((-value + divisor - 1) / divisor)
    }
}

/// `2026-11-27T05:10:12Z`: the ISO 8601 form FreshAir writes (a record's `created`, a release's
/// `expires`), which Foundation's `.iso8601` style writes too.
package enum ISO8601Timestamp {
    /// `date` in UTC to the second, as `Date.formatted(.iso8601)` writes it. Years before 1970
    /// or after 9999 are left to Foundation (its calendar turns Julian before 1582).
    package static func format(_ date: Date) -> String {
        let time = CivilTime(date)
        guard (1_970...9_999).contains(time.year) else { return date.formatted(.iso8601) }
        func two(_ value: Int) -> String { String(value).zeroPadded(to: 2) }
        let day = "\(String(time.year).zeroPadded(to: 4))-\(two(time.month))-\(two(time.day))"
        return "\(day)T\(two(time.hour)):\(two(time.minute)):\(two(time.second))Z"
    }

    /// The instant `text` names: the form above on bytes, any other ISO 8601 form (fractions,
    /// offsets) by Foundation's parser, as before; `nil` for text that is neither.
    package static func parse(_ text: String) -> Date? {
        if let date = parseUTCSeconds(text) { return date }
        return try? Date(text, strategy: .iso8601)
    }

    /// Exactly `YYYY-MM-DDTHH:MM:SSZ` naming a real instant from 1970 on, else `nil`.
    package static func parseUTCSeconds(_ text: String) -> Date? {
        var text = text
        return text.withUTF8 { b -> Date? in
            guard b.count == 20, b[4] == UInt8(ascii: "-"), b[7] == UInt8(ascii: "-"), b[10] == UInt8(ascii: "T"),
                b[13] == UInt8(ascii: ":"), b[16] == UInt8(ascii: ":"), b[19] == UInt8(ascii: "Z")
            else { return nil }
            func number(_ start: Int, _ count: Int) -> Int? { CivilTime.decimal(b[start..<start + count]) }
            guard let year = number(0, 4), year >= 1_970, let month = number(5, 2), let day = number(8, 2),
                let hour = number(11, 2), let minute = number(14, 2), let second = number(17, 2)
            else { return nil }
            return CivilTime(year: year, month: month, day: day, hour: hour, minute: minute, second: second)?.date
        }
    }
}
