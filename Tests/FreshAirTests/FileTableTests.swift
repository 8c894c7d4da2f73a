import Foundation
import TestSupport
import Testing

@testable import FreshAir

@Suite("A version's files: one array sorted by path, looked up by binary search", .backgroundThread)
struct FileTableTests {
    func record(_ byte: UInt8, size: Int64 = 1) -> FileRecord {
        FileRecord(hash: ContentHash.of([byte], using: .sha256), size: size)
    }

    @Test("Random paths in any order: every one found, every other one not, the same as a dictionary")
    func matchesADictionary() {
        var generator = SeededGenerator()
        // A letter past ASCII composed and decomposed (one name as strings, two as bytes), upper
        // and lower case, a folder mark.
        let alphabet: [Character] = Array("ab/é.Z9-") + ["e\u{301}"]
        var dictionary: [String: FileRecord] = [:]
        var entries: [FileTable.Entry] = []
        for index in 0..<3_000 {
            let path = String(
                (0..<Int.random(in: 1...6, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! }
            )
            let entry = FileTable.Entry(path: path, record: record(UInt8(index % 251), size: Int64(index)))
            entries.append(entry)
            dictionary[path] = entry.record  // a path drawn twice: the later entry counts
        }
        let table = FileTable(sorting: entries)
        #expect(table.count == dictionary.count, "\(generator)")
        #expect(table.entries.map(\.path) == dictionary.keys.sorted { PathOrder.compare($0, $1) < 0 }, "\(generator)")
        #expect(table.dictionary == dictionary, "\(generator)")
        for (path, expected) in dictionary { #expect(table[path] == expected, "\(path), \(generator)") }
        for _ in 0..<3_000 {
            let path = String((0..<7).map { _ in alphabet.randomElement(using: &generator)! })  // longer than any
            #expect(table[path] == nil, "\(generator)")
        }
        #expect(FileTable()[""] == nil, "\(generator)")

        // The same entries appended in order (a path twice in a row: the later replaces the
        // first, even once it is in the file) to a table whose records go to a file past 1 to 5.
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("table-\(UUID().uuidString)").path
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let sorted = entries.enumerated().sorted { a, b in
            let order = PathOrder.compare(a.element.path, b.element.path)
            return order == 0 ? a.offset < b.offset : order < 0
        }
        var spilled = FileTable(spillingTo: folder, bufferFiles: Int.random(in: 1...5, using: &generator))
        for (_, entry) in sorted {
            let appended = spilled.appendInOrder(entry)
            #expect(appended, "\(generator)")
        }
        #expect(spilled == table, "\(generator)")
        for (path, expected) in dictionary { #expect(spilled[path] == expected, "\(path), \(generator)") }
        #expect((try? FileManager.default.contentsOfDirectory(atPath: folder))?.isEmpty == true)
    }

    @Test("A path found in any Unicode normalization, and told apart by its bytes; appended only in order")
    func spellingsAndOrder() {
        let (composed, decomposed) = ("caf\u{e9}.txt", "cafe\u{301}.txt")
        var table = FileTable()
        let appended = [("b.txt", 1), (decomposed, 2), ("a.txt", 3)].map { path, byte in
            table.appendInOrder(.init(path: path, record: record(UInt8(byte))))
        }
        #expect(appended == [true, true, false])  // "a.txt" sorts before: refused
        #expect(table.count == 2)
        #expect(table.index(of: composed) == 1)
        #expect(table.hasPath(at: 1, spelledAs: decomposed))
        #expect(!table.hasPath(at: 1, spelledAs: composed))
        // The same name again, spelled otherwise: the later entry, spelling and all.
        let again = table.appendInOrder(.init(path: composed, record: record(4)))
        #expect(again && table.count == 2)
        #expect(table.hasPath(at: 1, spelledAs: composed))
        #expect(table[decomposed] == record(4))
        #expect(table.path(at: 0) == "b.txt" && table.record(at: 0) == record(1))
    }

    @Test("Of two entries for one path, the later is kept, sorted or not")
    func laterEntryWins() {
        let sorted = FileTable(sorting: [
            .init(path: "a", record: record(1)), .init(path: "a", record: record(2)),
            .init(path: "b", record: record(3)),
        ])
        #expect(sorted.entries.map(\.record) == [record(2), record(3)])
        let unsorted = FileTable(sorting: [
            .init(path: "b", record: record(3)), .init(path: "a", record: record(1)),
            .init(path: "a", record: record(2)),
        ])
        #expect(unsorted == sorted)
    }

    @Test("A record another writer listed out of order and with a path twice reads as a dictionary would")
    func unsortedRecordOnDisk() throws {
        let hex = { (byte: UInt8) in ContentHash.of([byte], using: .sha256).hex }
        let json = """
            {"id":2,"source":"https://cdn.example.com/a/","created":"2026-11-27T05:10:12Z","metadata":{},\
            "files":{"z.md":{"h":"sha256:\(hex(1))","s":1},"a.md":{"h":"sha256:\(hex(2))","s":1},\
            "m.md":{"h":"sha256:\(hex(3))","s":1},"a.md":{"h":"sha256:\(hex(4))","s":1}}}
            """
        let read = try VersionRecord(json: Array(json.utf8))
        #expect(read.fileTable.entries.map(\.path) == ["a.md", "m.md", "z.md"])
        #expect(read.file(at: "a.md") == record(4))
        #expect(read.file(at: "b.md") == nil)
        // Written again, it lists each path once, in order.
        var bytes: [UInt8] = []
        read.writeJSON { bytes.append(contentsOf: $0) }
        let text = String(decoding: bytes, as: UTF8.self)
        let positions = ["a.md", "m.md", "z.md"].map { text.range(of: "\"\($0)\"")!.lowerBound }
        #expect(positions == positions.sorted())
        #expect(text.components(separatedBy: "\"a.md\"").count == 2)
    }

    @Test("The planner removes exactly the live paths no longer selected, in order")
    func plannerRemovesTheRest() throws {
        var live = VersionRecord(id: 1, source: "http://x/")
        live.fileTable = FileTable(sorting: (0..<500).map { .init(path: "f\($0)", record: record(UInt8($0 % 251))) })
        let selected = try stride(from: 0, to: 1_000, by: 3).map { index in
            SelectedFile(path: try BundlePath("f\(index)"), hash: record(UInt8(index % 251)).hash, size: 1)
        }
        let plan = SyncPlanner.plan(selected: SelectedFiles(selected), live: live, isIntact: { _, _ in true })
        let expectedRemoved = (0..<500).filter { $0 % 3 != 0 }.map { "f\($0)" }.sorted()
        #expect(plan.removed == expectedRemoved)
        // Kept files are read from the live table, in its (path) order, with its records.
        #expect(plan.kept.map(\.path.string) == (0..<500).filter { $0 % 3 == 0 }.map { "f\($0)" }.sorted())
        #expect(plan.kept.allSatisfy { live.file(at: $0.path.string) == $0.record })
        #expect(plan.downloads.map(\.path.string) == (500..<1_000).filter { $0 % 3 == 0 }.map { "f\($0)" })
    }
}

@Suite("Files listing the same bytes: found by sorting digests, fetched once")
struct SameContentTests {
    @Test(
        "Each file names the first file with its digest, the same answer as a dictionary; a file without one names none"
    )
    func matchesADictionary() {
        var generator = SeededGenerator()
        var files: [SelectedFile] = []
        for index in 0..<5_000 {
            // Few distinct digests, of both algorithms, so that most files share one.
            let seed = [UInt8.random(in: 0..<40, using: &generator)]
            let hash: ContentHash? =
                switch index % 5 {
                case 0: nil
                case 1: ContentHash.of(seed, using: .sha1)
                default: ContentHash.of(seed, using: .sha256)
                }
            files.append(SelectedFile(path: BundlePath(trusted: "f\(index)"), hash: hash, size: 1))
        }
        var first: [ContentHash: Int] = [:]
        let expected = files.indices.map { position -> Int32 in
            guard let hash = files[position].hash else { return -1 }
            if first[hash] == nil { first[hash] = position }
            return Int32(first[hash]!)
        }
        #expect(BundleSync.sameContent(SelectedFiles(files)) == expected, "\(generator)")
        #expect(BundleSync.sameContent([]) == [], "\(generator)")
    }
}

@Suite("A list gives back room it will not use")
struct TrimRoomTests {
    @Test("Room beyond an eighth is given back, the elements kept in order; a list nearly full is left as it is")
    func trims() {
        var grown: [Int] = []
        grown.reserveCapacity(100_000)
        grown.append(contentsOf: 0..<10)
        let storage = grown.withUnsafeBufferPointer { $0.baseAddress }
        grown.trimRoom()
        #expect(grown == Array(0..<10))
        #expect(grown.capacity < 100, "capacity \(grown.capacity)")
        #expect(grown.withUnsafeBufferPointer { $0.baseAddress } != storage)

        var full = Array(0..<10_000)
        full.reserveCapacity(10_500)
        let before = full.capacity
        full.trimRoom()
        #expect(full.capacity == before)
    }
}
