import Foundation
import TestSupport
import Testing

@testable import FreshAir

@Suite("A plan's files as columns: read back as they were appended, compacted in place as an array would be")
struct SelectedFilesTests {
    func randomFiles(_ count: Int, using generator: inout some RandomNumberGenerator) -> [SelectedFile] {
        let parts = ["a", "bb", "caf\u{e9}", "cafe\u{301}", "long name of more than fifteen bytes", "d/e", ""]
        return (0..<count).map { index in
            let path = (parts.randomElement(using: &generator)! + "/\(index)")
            let algorithm: ContentHash.Algorithm = Bool.random(using: &generator) ? .sha1 : .sha256
            let hash: ContentHash? = Bool.random(using: &generator) ? .of([UInt8(index % 251)], using: algorithm) : nil
            let size: Int64? = Bool.random(using: &generator) ? Int64.random(in: 0...1 << 40, using: &generator) : nil
            return SelectedFile(path: BundlePath(trusted: path), hash: hash, size: size)
        }
    }

    func same(_ files: SelectedFiles, _ array: [SelectedFile]) -> Bool {
        files.count == array.count
            && zip(files, array).allSatisfy { $0.path == $1.path && $0.hash == $1.hash && $0.size == $1.size }
            && array.indices.allSatisfy { files.hash(at: $0) == array[$0].hash && files.size(at: $0) == array[$0].size }
    }

    @Test(
        "Random lists, in memory and with digests and sizes in a file past 1 to 8 files and paths in pages of 64 to 256 bytes: the same files, the same order of paths, the same files kept, asked in order",
        arguments: [false, true]
    )
    func matchesAnArray(spilling: Bool) throws {
        var generator = SeededGenerator()
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var (spilled, pathsSpilled) = (0, 0)
        for _ in 0..<200 {
            let array = randomFiles(Int.random(in: 0...60, using: &generator), using: &generator)
            var files =
                spilling
                ? SelectedFiles(
                    spillingTo: folder,
                    bufferFiles: Int.random(in: 1...8, using: &generator),
                    pageSize: Int.random(in: 64...256, using: &generator)  // the longest path is 41 bytes
                )
                : SelectedFiles()
            for file in array { files.append(file) }
            if files.isSpilled { spilled += 1 }
            if files.arePathsSpilled { pathsSpilled += 1 }
            #expect(same(files, array), "\(generator)")
            for _ in 0..<20 where !array.isEmpty {
                let (left, right) = (
                    Int.random(in: array.indices, using: &generator), Int.random(in: array.indices, using: &generator)
                )
                #expect(files.pathPrecedes(left, right) == (array[left].path < array[right].path), "\(generator)")
            }
            let removed = Set((0..<array.count).filter { _ in Bool.random(using: &generator) })
            var asked: [BundlePath] = []
            var position = 0
            files.removeAll { file in
                asked.append(file.path)
                defer { position += 1 }
                return removed.contains(position)
            }
            #expect(asked == array.map(\.path), "\(generator)")
            let kept = array.indices.filter { !removed.contains($0) }.map { array[$0] }
            #expect(same(files, kept), "\(generator)")
            // A copy keeps what it had while the list it was copied from changes.
            let copy = files
            files.append(array.first ?? SelectedFile(path: BundlePath(trusted: "x"), hash: nil, size: 3))
            files.trimRoom()
            #expect(
                same(files, kept + [array.first ?? SelectedFile(path: BundlePath(trusted: "x"), hash: nil, size: 3)]),
                "\(generator)"
            )
            #expect(same(copy, kept), "\(generator)")
            // Appended after a copy, read, and appended again: each read sees every record so far.
            var expected = kept + [array.first ?? SelectedFile(path: BundlePath(trusted: "x"), hash: nil, size: 3)]
            for index in 0..<12 {
                expected.append(
                    SelectedFile(path: BundlePath(trusted: "y"), hash: .of([UInt8(index)], using: .sha256), size: 1)
                )
                files.append(expected.last!)
                #expect(files.hash(at: expected.count - 1) == expected.last!.hash, "\(generator)")
                let probe = Int.random(in: expected.indices, using: &generator)
                #expect(
                    files.hash(at: probe) == expected[probe].hash && files.size(at: probe) == expected[probe].size,
                    "\(generator)"
                )
            }
            #expect(same(files, expected), "\(generator)")
            #expect(same(copy, kept), "\(generator)")
        }
        // The unnamed files are gone from the folder from the start.
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).isEmpty)
        #expect(spilling ? spilled > 100 : spilled == 0, "\(spilled) of 200 spilled, \(generator)")
        #expect(spilling ? pathsSpilled > 50 : pathsSpilled == 0, "\(pathsSpilled) of 200 spilled paths, \(generator)")
    }

    @Test("A folder that cannot take the file keeps the digests and sizes in memory, and every one is read back")
    func noFolder() {
        var generator = SeededGenerator()
        let array = randomFiles(500, using: &generator)
        var files = SelectedFiles(spillingTo: "/nonexistent-\(UUID().uuidString)", bufferFiles: 4)
        for file in array { files.append(file) }
        #expect(!files.isSpilled)
        #expect(same(files, array), "\(generator)")
    }

    @Test("Files that share a digest are found, whether the digests are in memory or in the update's file")
    func sameContentFromTheFile() throws {
        var generator = SeededGenerator()
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // Few distinct digests, so that most files share one; some of both algorithms.
        let array = (0..<3_000).map { index in
            let digest = Int.random(in: 0..<40, using: &generator)
            return SelectedFile(
                path: BundlePath(trusted: "f\(index)"),
                hash: digest == 0 ? nil : .of([UInt8(digest)], using: digest % 3 == 0 ? .sha1 : .sha256),
                size: 1
            )
        }
        var spilled = SelectedFiles(spillingTo: folder, bufferFiles: 64)
        for file in array { spilled.append(file) }
        #expect(spilled.isSpilled)
        let first = BundleSync.sameContent(spilled)
        #expect(first == BundleSync.sameContent(SelectedFiles(array)))
        // Each file's leader is the first listed with its digest.
        let expected = array.indices.map { position in
            array[position].hash.map { hash in Int32(array.firstIndex { $0.hash == hash }!) } ?? -1
        }
        #expect(first == expected, "\(generator)")
    }

    @Test(
        "Read as a sync reads them (the next file's weight, a download starting, another landing 128 files back): each block of the file read about once, the right record each time"
    )
    func readsInFlightHitTheCache() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let count = 10_000
        var files = SelectedFiles(spillingTo: folder)
        for index in 0..<count {
            files.append(SelectedFile(path: BundlePath(trusted: "f\(index)"), hash: nil, size: Int64(index)))
        }
        #expect(files.isSpilled)
        let before = files.blocksRead
        var wrong = 0
        for position in 0..<count {
            for asked in [min(position + 1, count - 1), position, max(position - 128, 0)]
            where files.size(at: asked) != Int64(asked) {
                wrong += 1
            }
        }
        #expect(wrong == 0)
        // 100 records a block: 100 blocks, the last ones in memory. One block kept read 2 of
        // them for each file (about 20,000).
        #expect(files.blocksRead - before <= 110, "\(files.blocksRead - before) blocks read")
    }

    @Test("Digests that share their first 8 bytes are never one group; the same digest still is")
    func samePrefixOtherDigest() {
        let x = ContentHash(algorithm: .sha256, words: (7, 1, 1, 1))
        let y = ContentHash(algorithm: .sha256, words: (7, 1, 1, 2))
        let files = SelectedFiles(
            [x, x, y, nil, y].enumerated().map { SelectedFile(path: BundlePath(trusted: "f\($0)"), hash: $1, size: 1) }
        )
        #expect(BundleSync.sameContent(files) == [0, 0, 2, -1, 2])
        // Listed between two of another's: a group of its own each time, not a wrong one.
        let mixed = SelectedFiles(
            [x, y, x].enumerated().map { SelectedFile(path: BundlePath(trusted: "f\($0)"), hash: $1, size: 1) }
        )
        #expect(BundleSync.sameContent(mixed) == [0, 1, 2])
    }

    /// A new empty folder for the unnamed files.
    static func folder() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("selected-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }
}

@Suite("A set of paths held as bytes: found by their exact bytes, as a Set<String> of them would not")
struct PathSetTests {
    @Test("Random paths, composed and decomposed: every one found, others not, spellings told apart")
    func matchesBytes() {
        var generator = SeededGenerator()
        let parts = ["a", "B", "caf\u{e9}", "cafe\u{301}", "/", "long name of more than fifteen bytes"]
        func name() -> String {
            (0..<Int.random(in: 0...3, using: &generator)).map { _ in parts.randomElement(using: &generator)! }.joined()
        }
        for _ in 0..<100 {
            let listed = (0..<Int.random(in: 0...40, using: &generator)).map { _ in name() }
            let set = PathSet(PathList(listed))
            let bytes = Set(listed.map { Array($0.utf8) })
            for probe in listed + (0..<20).map({ _ in name() }) {
                #expect(
                    set.contains(probe) == bytes.contains(Array(probe.utf8)),
                    "\(probe.debugDescription), \(generator)"
                )
            }
        }
    }
}
