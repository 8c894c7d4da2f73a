import Foundation
import Testing

@testable import FreshAir

@Suite("A summary read back: its paths held as bytes, and a summary from an earlier FreshAir")
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

    @Test("A summary written by FreshAir 0.1.0 reads back: later fields take their defaults; a mode's details too")
    func summaryOfTheFirstRelease() throws {
        // The keys `breeze sync --json` wrote at 0.1.0 (`2c154c4`): none of the fields added since.
        let bundle = """
            {"outcome":"updated","version":2,"notModified":false,"filesDownloaded":1,"bytesDownloaded":120,
             "filesReused":3,"filesRemoved":0,"requests":2,"bytesWasted":0,"bytesSaved":0,"seconds":0.05,
             "downloaded":["manifest.json","a.txt"],"removed":[]}
            """
        let read = try JSONDecoder().decode(SyncSummary.self, from: Data(bundle.utf8))
        #expect(read.outcome == .updated && read.version == 2 && read.downloaded == ["manifest.json", "a.txt"])
        #expect(read.filesForOtherDevices == 0 && read.filesFromPack == 0 && read.filesRepaired == 0)
        #expect(read.packProblem == nil && read.unverifiedSigners.isEmpty && read.package == nil)
        #expect(read.oneLine.hasPrefix("Updated to version 2: 1 downloaded (120 B), 3 reused, 0 removed; 2 requests"))
        // 0.1.0's package result held the run's cost too; it is ignored, and what came later defaults.
        let package = """
            {"outcome":"updated","version":4,"notModified":false,"filesDownloaded":1,"bytesDownloaded":900,
             "filesReused":0,"filesRemoved":0,"requests":1,"seconds":0.1,"downloaded":["content.tgz"],"removed":[],
             "package":{"outcome":"downloaded","installedBundled":false,"version":4,"bytesDownloaded":900,
                        "requests":1,"bytesWasted":0,"seconds":0.1,"lastModified":"Wed, 25 Nov 2026 10:00:00 GMT"}}
            """
        let packageRead = try JSONDecoder().decode(SyncSummary.self, from: Data(package.utf8))
        let result = try #require(packageRead.package)
        #expect(
            result.outcome == .downloaded && result.version == 4 && !result.replacedDamaged && result.bytesSaved == 0
        )
        #expect(result.lastModified == "Wed, 25 Nov 2026 10:00:00 GMT")
        let repository = """
            {"outcome":"updated","notModified":false,"filesDownloaded":1,"bytesDownloaded":900,"filesReused":0,
             "filesRemoved":0,"requests":2,"seconds":0.1,"downloaded":["maps"],"removed":[],
             "repository":{"indexNotModified":false,"updated":{"maps":3},"unchanged":[],"removed":[],
                           "bytesDownloaded":900}}
            """
        let repositoryRead = try JSONDecoder().decode(SyncSummary.self, from: Data(repository.utf8))
        #expect(repositoryRead.repository?.updated == ["maps": 3] && repositoryRead.repository?.keptAfterRollback == [])
        // What a summary needs to mean anything stays required.
        let noOutcome = bundle.replacingOccurrences(of: "\"outcome\":\"updated\",", with: "")
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(SyncSummary.self, from: Data(noOutcome.utf8)) }
        // And the current shape reads back whole.
        var current = read
        current.filesRepaired = 1
        current.unverifiedSigners = ["key"]
        #expect(try JSONDecoder().decode(SyncSummary.self, from: JSONEncoder().encode(current)) == current)
    }
}
