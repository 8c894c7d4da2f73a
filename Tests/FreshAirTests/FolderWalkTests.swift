import Foundation
import Testing

@testable import FreshAir

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite("A walk through the live version: kept files stat'ed and linked by their last names")
struct FolderWalkTests {
    let root: URL
    let live: URL
    let staged: URL

    init() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("walk-\(UUID().uuidString.prefix(8))")
        live = root.appendingPathComponent("live")
        staged = root.appendingPathComponent("staged")
        try FileManager.default.createDirectory(at: live, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: staged, withIntermediateDirectories: true)
    }

    func cleanUp() { try? FileManager.default.removeItem(at: root) }

    func write(_ path: String, _ text: String, in folder: URL? = nil) throws {
        let url = (folder ?? live).appendingPathComponent(path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: url)
    }

    func inode(_ url: URL) -> UInt64? {
        var info = stat()
        return lstat(url.path, &info) == 0 ? UInt64(info.st_ino) : nil
    }

    @Test("Every path is linked to its own file, in path order or not: root files, nested folders, a folder met twice")
    func linksEveryPathInAnyOrder() throws {
        defer { cleanUp() }
        let paths = ["a.txt", "d1/x", "d1/y", "d2/e/f", "d1/w", "b.txt", "d2/z"]
        for path in paths { try write(path, "text of \(path)") }
        let walk = try #require(FolderWalk(path: live.path))
        var linked: [String] = []
        try ConfinedFolder(path: staged.path).link(paths.map { BundlePath(trusted: $0) }, from: walk) {
            linked.append($0.string)
        }
        #expect(linked == paths)
        for path in paths {
            let old = live.appendingPathComponent(path)
            let new = staged.appendingPathComponent(path)
            #expect(inode(new) != nil && inode(new) == inode(old), "\(path) is a hard link of the live file")
            #expect(try String(contentsOf: new, encoding: .utf8) == "text of \(path)")
        }
    }

    @Test("Two spellings of one folder name are two folders: the walk compares bytes, as the kernel does")
    func foldersCompareAsBytes() throws {
        defer { cleanUp() }
        let composed = "caf\u{E9}"  // é as one scalar
        let decomposed = "cafe\u{301}"  // e and a combining accent: equal as Swift Strings
        #expect(composed == decomposed)
        try write(composed + "/menu.txt", "composed")
        try write(decomposed + "/menu.txt", "decomposed")
        let walk = try #require(FolderWalk(path: live.path))
        #expect(walk.status(of: composed + "/menu.txt")?.size == 8)
        #expect(walk.status(of: decomposed + "/menu.txt")?.size == 10)
        try ConfinedFolder(path: staged.path).link(
            [composed + "/menu.txt", decomposed + "/menu.txt"].map { BundlePath(trusted: $0) },
            from: walk
        )
        let composedCopy = staged.appendingPathComponent(composed).appendingPathComponent("menu.txt")
        #expect(try String(contentsOf: composedCopy, encoding: .utf8) == "composed")
    }

    @Test("A link where a folder or file should be is not followed: no status, and linking through it fails")
    func linksInTheLiveTreeAreNotFollowed() throws {
        defer { cleanUp() }
        let outside = root.appendingPathComponent("outside")
        try write("secret.txt", "outside the tree", in: outside)
        try FileManager.default.createSymbolicLink(at: live.appendingPathComponent("d"), withDestinationURL: outside)
        try FileManager.default.createSymbolicLink(
            at: live.appendingPathComponent("f.txt"),
            withDestinationURL: outside.appendingPathComponent("secret.txt")
        )
        try write("kept.txt", "kept")
        let walk = try #require(FolderWalk(path: live.path))
        #expect(walk.status(of: "d/secret.txt") == nil)
        #expect(walk.status(of: "f.txt") == nil, "a link in a file's place is not a regular file")
        #expect(walk.status(of: "kept.txt")?.size == 4, "the walk goes on after a refused folder")
        #expect(throws: FreshAirError.self) {
            try ConfinedFolder(path: staged.path).link([BundlePath(trusted: "d/secret.txt")], from: walk)
        }
        #expect(!FileManager.default.fileExists(atPath: staged.appendingPathComponent("d/secret.txt").path))
    }

    @Test("A kept file gone from the live version fails the carry-over with the file named, not a crash")
    func missingFilesAreNamed() throws {
        defer { cleanUp() }
        try write("d1/x", "x")
        let walk = try #require(FolderWalk(path: live.path))
        #expect(walk.status(of: "d9/gone") == nil)
        #expect(walk.status(of: "d1/gone") == nil)
        for missing in ["d9/gone", "d1/gone"] {
            let error = #expect(throws: FreshAirError.self) {
                try ConfinedFolder(path: staged.path).link([BundlePath(trusted: missing)], from: walk)
            }
            #expect(String(describing: error).contains(missing), "\(String(describing: error))")
        }
        #expect(FolderWalk(path: root.appendingPathComponent("nowhere").path) == nil)
    }
}
