package import Foundation

/// HTTP dates (RFC 9110: IMF-fixdate, and the obsolete RFC 850 and asctime forms), read
/// and written in the POSIX locale whatever the device's settings.
package enum HTTPDate {
    private static let formats = [
        "EEE, dd MMM yyyy HH:mm:ss zzz",
        "EEEE, dd-MMM-yy HH:mm:ss zzz",
        "EEE MMM d HH:mm:ss yyyy",
    ]

    /// `nil` for text that is no HTTP date, and for dates before 1970: no file served was
    /// modified then, and before 1582 Foundation's calendar turns Julian while the byte reader
    /// stays Gregorian (fuzzing found the two disagreeing about year 1318).
    package static func parse(_ text: String) -> Date? {
        guard let date = parseAnyForm(text), date.timeIntervalSince1970 >= 0 else { return nil }
        return date
    }

    private static func parseAnyForm(_ text: String) -> Date? {
        if let date = parseFixdate(text) { return date }
        // The obsolete forms (RFC 850, asctime), which servers may no longer send but clients
        // must accept: rare enough for Foundation's formatter. HTTP dates are short printable
        // ASCII; anything else never reaches it (found by fuzzing: Foundation's DateFormatter
        // traps on some non-ASCII input, and a server chooses what its headers hold).
        guard text.utf8.count <= 64, text.utf8.allSatisfy({ (0x20...0x7E).contains($0) }) else { return nil }
        for format in formats {
            let formatter = makeFormatter(format)
            if let date = formatter.date(from: text.trimmingCharacters(in: .whitespaces)) { return date }
        }
        return nil
    }

    /// IMF-fixdate, `Sun, 06 Nov 1994 08:49:37 GMT`, the form RFC 9110 requires of senders,
    /// read on bytes: it is parsed for every response, and a `DateFormatter` costs far more
    /// than the request it would be parsing for.
    static func parseFixdate(_ text: String) -> Date? {
        var bytes = Array(text.utf8)[...]
        while bytes.first == UInt8(ascii: " ") { bytes = bytes.dropFirst() }
        while bytes.last == UInt8(ascii: " ") { bytes = bytes.dropLast() }
        let b = Array(bytes)
        guard b.count == 29, b[3] == UInt8(ascii: ","), b[4] == 0x20, b[7] == 0x20, b[11] == 0x20, b[16] == 0x20,
            b[19] == UInt8(ascii: ":"), b[22] == UInt8(ascii: ":"), b[25] == 0x20, b[26...28].elementsEqual("GMT".utf8)
        else { return nil }
        func number(_ start: Int, _ count: Int) -> Int? { CivilTime.decimal(b[start..<start + count]) }
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        guard let day = number(5, 2), let monthIndex = months.firstIndex(where: { b[8..<11].elementsEqual($0.utf8) }),
            let year = number(12, 4), let hour = number(17, 2), let minute = number(20, 2), let second = number(23, 2),
            (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        return CivilTime.instant(
            year: year,
            month: monthIndex + 1,
            day: day,
            hour: hour,
            minute: minute,
            second: second
        )
    }

    /// `date` as an HTTP date (`Sun, 06 Nov 1994 08:49:37 GMT`).
    package static func format(_ date: Date) -> String {
        makeFormatter("EEE, dd MMM yyyy HH:mm:ss 'GMT'").string(from: date)
    }

    private static func makeFormatter(_ format: String) -> DateFormatter {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = format
        return formatter
    }
}
