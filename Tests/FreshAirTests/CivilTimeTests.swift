import Foundation
import TestSupport
import Testing

@testable import FreshAir

@Suite("Timestamps read and written by arithmetic, as Foundation reads and writes them")
struct CivilTimeTests {
    @Test("Random instants from 1970 to 9999: the same text as Foundation's .iso8601, read back to the second")
    func matchesFoundation() throws {
        var generator = SeededGenerator()
        let last = try #require(try? Date("9999-12-31T23:59:59Z", strategy: .iso8601)).timeIntervalSince1970
        for index in 0..<20_000 {
            // Half spread over the whole range, half near now, where records are written.
            let seconds =
                index.isMultiple(of: 2)
                ? Double.random(in: 0...last, using: &generator)
                : Double.random(in: 1_700_000_000...1_900_000_000, using: &generator)
            let date = Date(timeIntervalSince1970: seconds)
            let text = ISO8601Timestamp.format(date)
            #expect(text == date.formatted(.iso8601), "\(seconds), \(generator)")
            #expect(
                ISO8601Timestamp.parseUTCSeconds(text) == (try? Date(text, strategy: .iso8601)),
                "\(text), \(generator)"
            )
            #expect(
                ISO8601Timestamp.parseUTCSeconds(text)?.timeIntervalSince1970 == seconds.rounded(.down),
                "\(generator)"
            )
        }
    }

    @Test("Every day of 1999 to 2101: the fields round-trip, leap days included, 2100 not a leap year")
    func everyDay() throws {
        let start = try #require(ISO8601Timestamp.parseUTCSeconds("1999-01-01T00:00:00Z"))
        var expected = (year: 1999, month: 1, day: 1)
        for dayIndex in 0..<(103 * 366) {
            let date = start.addingTimeInterval(Double(dayIndex) * 86_400 + 3_723)
            let time = CivilTime(date)
            guard time.year <= 2101 else { break }
            #expect(
                time.year == expected.year && time.month == expected.month && time.day == expected.day,
                "\(date)"
            )
            #expect(time.hour == 1 && time.minute == 2 && time.second == 3)
            #expect(time.date == date)
            expected.day += 1
            let next = CivilTime(
                year: expected.year,
                month: expected.month,
                day: expected.day,
                hour: 0,
                minute: 0,
                second: 0
            )
            if next == nil {
                (expected.month, expected.day) = (expected.month + 1, 1)
                if expected.month == 13 { (expected.year, expected.month) = (expected.year + 1, 1) }
            }
        }
        #expect(CivilTime(year: 2000, month: 2, day: 29, hour: 0, minute: 0, second: 0)?.day == 29)
        #expect(CivilTime(year: 2100, month: 2, day: 29, hour: 0, minute: 0, second: 0)?.day == nil)
        #expect(CivilTime(year: 2024, month: 2, day: 29, hour: 0, minute: 0, second: 0)?.day == 29)
    }

    @Test("Text that is not exactly the UTC form is refused by the fast reader and left to Foundation's")
    func otherForms() throws {
        for text in [
            "2026-02-30T00:00:00Z", "2026-13-01T00:00:00Z", "2026-11-27T24:00:00Z", "2026-11-27T05:60:00Z",
            "2026-11-27T05:10:60Z", "2026-11-27T05:10:12", "2026-11-27 05:10:12Z", "2026-11-27T05:10:12+00:00",
            "2026-11-27T05:10:12.5Z", "+026-11-27T05:10:12Z", "1969-12-31T23:59:59Z", "２０２６-11-27T05:10:12Z", "",
        ] {
            #expect(ISO8601Timestamp.parseUTCSeconds(text) == nil, "\(text)")
        }
        // What Foundation reads, the record still reads: an offset, and a date before 1970.
        let offset = try #require(ISO8601Timestamp.parse("2026-11-27T07:10:12+02:00"))
        #expect(offset == ISO8601Timestamp.parseUTCSeconds("2026-11-27T05:10:12Z"))
        #expect(ISO8601Timestamp.parse("1969-12-31T23:59:59Z")?.timeIntervalSince1970 == -1)
        #expect(ISO8601Timestamp.parse("not a date") == nil)
    }

    @Test("A record's created date is written in the UTC form and read back")
    func recordRoundTrip() throws {
        let created = try #require(ISO8601Timestamp.parseUTCSeconds("2026-11-27T05:10:12Z"))
        let record = VersionRecord(id: 4, source: "https://cdn.example.com/a/", created: created, files: [:])
        var bytes: [UInt8] = []
        record.writeJSON { bytes.append(contentsOf: $0) }
        #expect(String(decoding: bytes, as: UTF8.self).contains(#""created":"2026-11-27T05:10:12Z""#))
        #expect(try VersionRecord(json: bytes).created == created)
    }
}
