import Foundation
import Synchronization
import TestSupport
import Testing

@testable import FreshAir

@Suite("Paths as bytes in pages: read back, removed and compacted as a list of strings would be")
struct PathListTests {
    /// Paths of 0 to `pageSize` bytes, some of them multi-byte, so that pages fill unevenly.
    func randomPath(pageSize: Int, using generator: inout some RandomNumberGenerator) -> String {
        let parts = ["a", "bc", "caf\u{e9}", "e\u{301}", "/", "long"]
        var path = ""
        while Bool.random(using: &generator) {
            let next = path + parts.randomElement(using: &generator)!
            guard next.utf8.count <= pageSize else { break }
            path = next
        }
        return path
    }

    @Test("Random lists on small pages: every path, after appends, removals and compaction, as the model has it")
    func matchesAnArrayOfStrings() throws {
        var generator = SeededGenerator()
        for _ in 0..<300 {
            let pageSize = Int.random(in: 4...24, using: &generator)
            var list = PathList(pageSize: pageSize)
            var model: [String] = []
            for _ in 0..<Int.random(in: 0...80, using: &generator) {
                if !model.isEmpty, Int.random(in: 0..<6, using: &generator) == 0 {
                    list.removeLast()
                    model.removeLast()
                } else {
                    let path = randomPath(pageSize: pageSize, using: &generator)
                    list.append(path.utf8)
                    model.append(path)
                }
            }
            #expect(list.count == model.count, "\(generator)")
            #expect(list.strings.map { Array($0.utf8) } == model.map { Array($0.utf8) }, "\(generator)")

            let keep = model.map { _ in Bool.random(using: &generator) }
            list.keep(keep)
            let kept = model.indices.filter { keep[$0] }.map { model[$0] }
            #expect(list.strings.map { Array($0.utf8) } == kept.map { Array($0.utf8) }, "\(generator)")
            // Compacted as appending would have laid them out: appending more reads back too.
            var fresh = PathList(pageSize: pageSize)
            for path in kept { fresh.append(path.utf8) }
            #expect(list == fresh && list.hashValue == fresh.hashValue, "\(generator)")
            let more = randomPath(pageSize: pageSize, using: &generator)
            list.append(more.utf8)
            list.trimRoom()
            #expect(list.strings.map { Array($0.utf8) } == (kept + [more]).map { Array($0.utf8) }, "\(generator)")
            let decoded = try JSONDecoder().decode(PathList.self, from: JSONEncoder().encode(list))
            #expect(decoded == list, "\(generator)")
        }
    }

    @Test("A list of full pages: a path that does not fit starts the next page, and no page outgrows its size")
    func pagesNeverOverflow() {
        var list = PathList(pageSize: 8)
        for path in ["abcde", "fgh", "ijklmnop", "", "q", "rstuvwx", "yz"] { list.append(path.utf8) }
        #expect(list.strings == ["abcde", "fgh", "ijklmnop", "", "q", "rstuvwx", "yz"])
        list.keep([false, true, false, true, true, true, true])
        #expect(list.strings == ["fgh", "", "q", "rstuvwx", "yz"])
    }

    @Test(
        "Full pages in a file: random appends, removals, copies and compaction read back as the model has them, each copy its own"
    )
    func spilledPagesMatchAnArrayOfStrings() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pages-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var generator = SeededGenerator()
        var spilled = 0
        for _ in 0..<300 {
            let pageSize = Int.random(in: 4...24, using: &generator)
            var list = PathList(pageSize: pageSize, spillingWith: UnnamedFile.maker(in: folder))
            var model: [String] = []
            var copies: [(PathList, [String])] = []
            for _ in 0..<Int.random(in: 0...120, using: &generator) {
                switch Int.random(in: 0..<12, using: &generator) {
                case 0 where !model.isEmpty, 1 where !model.isEmpty:
                    list.removeLast()
                    model.removeLast()
                case 2:
                    // A copy shares the file; whatever either does next, each reads its own.
                    copies.append((list, model))
                default:
                    let path = randomPath(pageSize: pageSize, using: &generator)
                    list.append(path.utf8)
                    model.append(path)
                }
                if list.isSpilled { spilled += 1 }
            }
            #expect(list.strings.map { Array($0.utf8) } == model.map { Array($0.utf8) }, "\(generator)")
            let keep = model.map { _ in Bool.random(using: &generator) }
            list.keep(keep)
            let kept = model.indices.filter { keep[$0] }.map { model[$0] }
            #expect(list.strings.map { Array($0.utf8) } == kept.map { Array($0.utf8) }, "\(generator)")
            let more = randomPath(pageSize: pageSize, using: &generator)
            list.append(more.utf8)
            #expect(list.strings.map { Array($0.utf8) } == (kept + [more]).map { Array($0.utf8) }, "\(generator)")
            for (copy, paths) in copies {
                #expect(copy.strings.map { Array($0.utf8) } == paths.map { Array($0.utf8) }, "\(generator)")
            }
        }
        #expect(spilled > 1_000, "\(spilled)")
        // The files have no names from the start.
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).isEmpty)
    }

    @Test("No file for the pages (a folder that is not there): every page stays in memory, and every path reads back")
    func noFileKeepsPagesInMemory() {
        var list = PathList(pageSize: 8, spillingWith: UnnamedFile.maker(in: "/nonexistent-\(UUID().uuidString)"))
        let paths = (0..<200).map { "p\($0)" }
        for path in paths { list.append(path.utf8) }
        #expect(!list.isSpilled)
        #expect(list.strings == paths)
    }

    @Test("Pages read back from the file through its cache, in and out of order, as they were written")
    func readsThroughTheCache() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pages-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var list = PathList(pageSize: 1_024, spillingWith: UnnamedFile.maker(in: folder))
        let paths = (0..<5_000).map { "folder \($0 % 37)/file \($0).bin" }
        for path in paths { list.append(path.utf8) }
        #expect(list.isSpilled)
        var generator = SeededGenerator()
        for _ in 0..<2_000 {
            let index = Int.random(in: paths.indices, using: &generator)
            #expect(list.string(at: index) == paths[index])
        }
        #expect(list.strings == paths)
    }

    @Test(
        "A sorted list searched for random keys, some pages in a file: the index a scan finds, reading one page at most per search"
    )
    func partitioningIndexReadsOnePage() {
        var generator = SeededGenerator()
        var spilledSearches = 0
        for _ in 0..<100 {
            let pageSize = Int.random(in: 8...64, using: &generator)
            var paths = (0..<Int.random(in: 0...300, using: &generator)).map { _ in
                randomPath(pageSize: pageSize, using: &generator)
            }
            paths.sort { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            let file = CountingPageFile()
            var list = PathList(pageSize: pageSize, spillingWith: { file })
            for path in paths { list.append(path.utf8) }
            // Some taken off the end and appended again: pages come back from the file and go again.
            for _ in 0..<Int.random(in: 0...min(20, paths.count), using: &generator) { list.removeLast() }
            for path in paths[list.count...] { list.append(path.utf8) }
            #expect(list.strings == paths, "\(generator)")
            for _ in 0..<30 {
                let key = Array(randomPath(pageSize: pageSize, using: &generator).utf8)
                let expected = paths.firstIndex { !$0.utf8.lexicographicallyPrecedes(key) } ?? paths.count
                let before = file.reads.withLock { $0 }
                let found = list.partitioningIndex { $0.lexicographicallyPrecedes(key) }
                #expect(found == expected, "\(key) in \(paths), \(generator)")
                #expect(file.reads.withLock { $0 } - before <= 1, "\(generator)")
                if list.isSpilled { spilledSearches += 1 }
            }
        }
        #expect(spilledSearches > 1_000)
    }
}

/// Pages kept in memory, counting the reads.
private final class CountingPageFile: PageFile {
    let bytes = Mutex<[UInt8]>([])
    let reads = Mutex(0)

    func write(_ written: UnsafeRawBufferPointer, at offset: Int64) -> Bool {
        bytes.withLock { bytes in
            let end = Int(offset) + written.count
            if bytes.count < end { bytes.append(contentsOf: repeatElement(0, count: end - bytes.count)) }
            bytes.replaceSubrange(Int(offset)..<end, with: written)
        }
        return true
    }

    func read(at offset: Int64, count: Int) -> [UInt8] {
        reads.withLock { $0 += 1 }
        return bytes.withLock { Array($0[Int(offset)..<Int(offset) + count]) }
    }
}
