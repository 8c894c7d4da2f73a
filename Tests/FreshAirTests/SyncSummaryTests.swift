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

    @Test("Paths read by position from a shared list equal, hash and encode as the same paths held whole")
    func pathsByPosition() throws {
        let shared = PathList(["a/one.bin", "b/two with a name past fifteen bytes.bin", "caf\u{e9}.txt"])
        var byPosition = PathsByPosition(readingFrom: shared)
        byPosition.append("manifest.json")
        for position in [2, 0, 1] { byPosition.append(position: position) }
        byPosition.append("index.chunks")
        let whole = PathsByPosition([
            "manifest.json", "caf\u{e9}.txt", "a/one.bin", "b/two with a name past fifteen bytes.bin", "index.chunks",
        ])
        #expect(byPosition.strings == whole.strings && byPosition.count == 5)
        #expect(byPosition == whole && byPosition.hashValue == whole.hashValue)
        // The bytes decide: another normalization, or the same paths in another order, is another list.
        #expect(
            byPosition != PathsByPosition(whole.strings.map { $0.replacingOccurrences(of: "\u{e9}", with: "e\u{301}") })
        )
        #expect(byPosition != PathsByPosition(whole.strings.reversed()))
        #expect(PathsByPosition(["ab", "c"]) != PathsByPosition(["a", "bc"]))
        let json = try JSONEncoder().encode(byPosition)
        #expect(try JSONDecoder().decode([String].self, from: json) == whole.strings)
        #expect(try JSONDecoder().decode(PathsByPosition.self, from: json) == byPosition)
    }
}
