import Foundation
import Testing

@testable import FreshAir

@Suite("What an Apple device flushes before a version goes live, decided on Linux")
struct FlushPlanTests {
    @Test("Only what the update wrote, then the record; every folder deepest first; F_FULLFSYNC once, last")
    func plan() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("flush-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: root) }
        let version = root.appendingPathComponent("versions/3")
        for path in ["a/b/new.bin", "a/kept.txt", "top.txt", "kept-too.png"] {
            let url = version.appendingPathComponent(path)
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(),
                withIntermediateDirectories: true
            )
            try Data(path.utf8).write(to: url)
        }
        try FileManager.default.createSymbolicLink(
            atPath: version.appendingPathComponent("link").path,
            withDestinationPath: "top.txt"
        )
        let (files, folders) = Durability.treeContents(version.path)
        #expect(Set(files) == ["a/b/new.bin", "a/kept.txt", "top.txt", "kept-too.png"], "links are not files")
        #expect(Set(folders) == ["", "a", "a/b"])

        let record = root.appendingPathComponent("versions/3.json").path
        let plan = FlushPlan.make(
            version: version.path,
            record: record,
            files: files,
            folders: folders,
            linked: ["a/kept.txt", "kept-too.png"]
        )
        #expect(plan.files == [version.path + "/a/b/new.bin", version.path + "/top.txt", record])
        #expect(
            plan.directories == [
                version.path + "/a/b", version.path + "/a", version.path, root.appendingPathComponent("versions").path,
            ]
        )
        #expect(plan.fullSync == root.appendingPathComponent("versions").path)
    }

    @Test("A version of 10,000 unchanged files and one new one flushes two files, not 10,001")
    func unchangedFilesCostNothing() {
        let files = (0..<10_000).map { "f\($0)" } + ["new"]
        let plan = FlushPlan.make(
            version: "/s/versions/9",
            record: "/s/versions/9.json",
            files: files,
            folders: [""],
            linked: PathSet(PathList(Array(files.dropLast())))
        )
        #expect(plan.files == ["/s/versions/9/new", "/s/versions/9.json"])
    }

    @Test("A repository's snapshot, hard links to flushed versions only: no file's data again, the record, its folders")
    func snapshotOfLinks() {
        let files = (0..<500).map { "Bundle\($0 % 5)/f\($0)" }
        let plan = FlushPlan.make(
            version: "/r/snapshots/4",
            record: "/r/state/snapshot.json",
            files: files,
            folders: [""] + (0..<5).map { "Bundle\($0)" },
            linked: nil
        )
        #expect(plan.files == ["/r/state/snapshot.json"])
        #expect(plan.directories.count == 8 && plan.directories.last == "/r/snapshots")
        #expect(plan.directories.dropLast().last == "/r/state", "the record's folder, where it was renamed in")
        #expect(plan.fullSync == "/r/snapshots")
    }

    @Test(
        "A staged version keeps the paths it linked where the flush goes file by file, and none where one syncfs flushes it whole",
        arguments: [true, false]
    )
    func stagedVersionKeepsItsLinks(keepingLinks: Bool) throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("links-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: root) }
        let old = root.appendingPathComponent("old")
        for folder in [old, root.appendingPathComponent("staging")] {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        }
        let staged = try StagedVersion(
            id: 2,
            path: root.appendingPathComponent("staging").path,
            partialsPath: root.path,
            keepingLinks: keepingLinks
        )
        for name in ["b.txt", "a.txt"] {
            try Data(name.utf8).write(to: old.appendingPathComponent(name))
            try staged.link(old.appendingPathComponent(name).path, at: BundlePath(trusted: name))
        }
        try Data("new".utf8).write(to: URL(fileURLWithPath: staged.path).appendingPathComponent("new.bin"))
        let linked = staged.linkedPaths
        #expect(linked.contains("a.txt") == keepingLinks && linked.contains("b.txt") == keepingLinks)
        #expect(!linked.contains("new.bin"))
        let plan = FlushPlan.make(
            version: staged.path,
            record: root.appendingPathComponent("2.json").path,
            files: Durability.treeContents(staged.path).files,
            folders: [""],
            linked: linked
        )
        let flushed = plan.files.map { ($0 as NSString).lastPathComponent }
        #expect(flushed == (keepingLinks ? ["new.bin", "2.json"] : ["a.txt", "b.txt", "new.bin", "2.json"]))
    }
}
