import Foundation
import Testing

@testable import FreshAir

@Suite("A summary's downloaded paths: held as bytes, read and written as the list of strings they were")
struct SyncSummaryTests {
    @Test("Paths of any spelling read back as set, and as JSON under \"downloaded\", both ways")
    func downloadedPaths() throws {
        var summary = SyncSummary.nothingInstalled(.updated, version: 3, notModified: false, reused: 0)
        #expect(summary.downloaded.isEmpty)
        let paths = [
            "manifest.json", "caf\u{e9}.txt", "cafe\u{301}.txt", "", "a/long path of more than fifteen bytes.png",
        ]
        summary.downloaded = paths
        #expect(summary.downloaded.map { Array($0.utf8) } == paths.map { Array($0.utf8) })
        let json = try JSONEncoder().encode(summary)
        let object = try #require(try JSONSerialization.jsonObject(with: json) as? [String: Any])
        #expect(object["downloaded"] as? [String] == paths)
        #expect(object["downloadedPaths"] == nil)
        #expect(try JSONDecoder().decode(SyncSummary.self, from: json) == summary)
    }
}
