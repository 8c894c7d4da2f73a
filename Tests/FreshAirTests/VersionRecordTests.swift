import Foundation
import Testing

@testable import FreshAir

@Suite("Version records: typed fields over the metadata every version of FreshAir has written")
struct VersionRecordTests {
    /// A record as stores written before the typed fields have it, with a key from the future.
    static let stored = #"""
        {"id":3,"source":"https://cdn.example.com/content.tgz","created":"2026-11-21T23:44:59Z","previous":2,
         "metadata":{"environment":"fp","sequence":"7","expires":"1800000000.5","origin":"bundled","format":"tgz",
                     "sha256":"ab12","bundleVersion":"4","repository":"com.example.r","confirmed":"true",
                     "launches":"2","future":"kept as found"},
         "files":{}}
        """#

    @Test("Every fact an older store wrote reads into its typed field, and is written back the same")
    func roundTrip() throws {
        let record = try VersionRecord(json: Array(Self.stored.utf8))
        #expect(record.plannedFor == "fp")
        #expect(record.sequence == 7)
        #expect(record.expires == Date(timeIntervalSince1970: 1_800_000_000.5))
        #expect(record.origin == .bundled)
        #expect(record.packageFormat == "tgz")
        #expect(record.packageDigest == "ab12")
        #expect(record.bundleVersion == 4)
        #expect(record.repository == "com.example.r")
        #expect(record.confirmed)
        #expect(record.unconfirmedLaunches == 2)
        #expect(record.otherFacts == ["future": "kept as found"])

        let written = try VersionRecord(json: record.jsonBytes)
        #expect(written == record)
        // The metadata object on disk holds the same keys and values as before.
        #expect(try facts(Array(Self.stored.utf8)) == facts(record.jsonBytes))
    }

    @Test("A record with none of them reads as unconfirmed, unplanned and unsigned")
    func empty() throws {
        let record = try VersionRecord(json: Array(#"{"id":1,"source":"s","metadata":{},"files":{}}"#.utf8))
        #expect(!record.confirmed && record.unconfirmedLaunches == 0)
        #expect(record.plannedFor == nil && record.sequence == nil && record.expires == nil && record.origin == nil)
        #expect(try JSONReader.parse(record.jsonBytes)["metadata"]?.pairs?.isEmpty == true)
    }

    func facts(_ bytes: [UInt8]) throws -> [String: String] {
        var facts: [String: String] = [:]
        for (key, value) in try JSONReader.parse(bytes)["metadata"]?.pairs ?? [] { facts[key] = value.string }
        return facts
    }
}
