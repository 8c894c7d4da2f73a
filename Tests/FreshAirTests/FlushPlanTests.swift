import Foundation
import TestSupport
import Testing

@testable import FreshAir

@Suite("What an Apple device flushes before a version goes live, decided on Linux", .backgroundThread)
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
        var files: [String] = []
        let folders = try TreeWalk.files(under: version.path) { files.append($0) }
        #expect(Set(files) == ["a/b/new.bin", "a/kept.txt", "top.txt", "kept-too.png"], "links are not files")
        #expect(Set(folders) == ["", "a", "a/b"])

        let record = root.appendingPathComponent("versions/3.json").path
        var flushed: [String] = []
        let fullSync = try FlushPlan.run(version: version.path, record: record, linked: ["a/kept.txt", "kept-too.png"])
        {
            flushed.append($0)
        }
        #expect(Set(flushed.prefix(2)) == [version.path + "/a/b/new.bin", version.path + "/top.txt"])
        #expect(
            Array(flushed.dropFirst(2)) == [
                record, version.path + "/a/b", version.path + "/a", version.path,
                root.appendingPathComponent("versions").path,
            ]
        )
        #expect(fullSync == root.appendingPathComponent("versions").path)

        flushed = []
        #expect(
            try FlushPlan.run(version: version.path, record: nil, linked: []) { flushed.append($0) } == version.path
        )
        #expect(flushed.count == 7, "a tree flushed whole: its 4 files and 3 folders, nothing above it: \(flushed)")
    }

    @Test("A version of 10,000 unchanged files and one new one flushes two files, not 10,001")
    func unchangedFilesCostNothing() throws {
        let version = try Tree(files: (0..<10_000).map { "d\($0 / 100)/f\($0)" } + ["new"])
        defer { version.remove() }
        var flushed: [String] = []
        _ = try FlushPlan.run(
            version: version.path,
            record: version.path + ".json",
            linked: PathSet(PathList((0..<10_000).map { "d\($0 / 100)/f\($0)" }))
        ) { flushed.append($0) }
        #expect(Array(flushed.prefix(2)) == [version.path + "/new", version.path + ".json"])
        #expect(flushed.count == 2 + 101 + 1, "two files, 101 folders and versions/")
    }

    @Test("A repository's snapshot, hard links to flushed versions only: no file's data again, the record, its folders")
    func snapshotOfLinks() throws {
        let snapshot = try Tree(files: (0..<500).map { "Bundle\($0 % 5)/f\($0)" })
        defer { snapshot.remove() }
        var flushed: [String] = []
        let fullSync = try FlushPlan.run(version: snapshot.path, record: "/r/state/snapshot.json", linked: nil) {
            flushed.append($0)
        }
        let versions = (snapshot.path as NSString).deletingLastPathComponent
        #expect(flushed.first == "/r/state/snapshot.json")
        #expect(flushed.count == 1 + 6 + 2 && flushed.last == versions)
        #expect(flushed.dropLast().last == "/r/state", "the record's folder, where it was renamed in")
        #expect(fullSync == versions)
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
        var flushed: [String] = []
        _ = try FlushPlan.run(version: staged.path, record: root.appendingPathComponent("2.json").path, linked: linked)
        {
            flushed.append(($0 as NSString).lastPathComponent)
        }
        let files = Array(flushed.prefix(keepingLinks ? 2 : 4))
        #expect(Set(files) == (keepingLinks ? ["new.bin", "2.json"] : ["a.txt", "b.txt", "new.bin", "2.json"]))
        #expect(files.last == "2.json", "the record after the version's files")
    }
}

/// Empty files at paths below a new folder of the temporary directory.
private struct Tree {
    let path: String

    init(files: [String]) throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("tree-\(UUID().uuidString.prefix(8))").path
        for file in files {
            let url = URL(fileURLWithPath: path).appendingPathComponent(file)
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(),
                withIntermediateDirectories: true
            )
            #expect(FileManager.default.createFile(atPath: url.path, contents: nil))
        }
    }

    func remove() { try? FileManager.default.removeItem(atPath: path) }
}
