import Foundation
import TestSupport
import Testing

@testable import FreshAir

@Suite("A version's files merged from sorted runs as the record is written, without a table", .backgroundThread)
struct FileListingTests {
    func record(_ byte: UInt8, size: Int64 = 1) -> FileRecord {
        FileRecord(hash: ContentHash.of([byte], using: .sha256), size: size)
    }

    /// Random paths from a small alphabet (a letter past ASCII, both cases, a folder mark), one
    /// per path within a list, in any order.
    func randomList(_ count: Int, seed: UInt8, using generator: inout some RandomNumberGenerator) -> [FileTable.Entry] {
        let alphabet = Array("ab/é.Z9-")
        var seen: Set<String> = []
        var list: [FileTable.Entry] = []
        while list.count < count {
            let path = String((0..<Int.random(in: 1...5, using: &generator)).map { _ in alphabet.randomElement()! })
            guard seen.insert(path).inserted else { continue }
            list.append(.init(path: path, record: record(seed, size: Int64(list.count))))
        }
        return list
    }

    @Test(
        "Random runs, sorted or not, overlapping: the listing is the table of all their entries, the later run's kept"
    )
    func mergeMatchesTheTable() {
        var generator = SeededGenerator()
        for round in 0..<40 {
            let lists = (0..<4).map { run in
                randomList(Int.random(in: 0...300, using: &generator), seed: UInt8(run), using: &generator)
            }
            let runs = lists.enumerated().map { run, list in
                // Half the rounds give the planner's lists in their own order, half as tables.
                round.isMultiple(of: 2)
                    ? FileListing.Run(list, path: \.path) { _, entry in entry.path.hasPrefix("Z") ? nil : entry }
                    : FileListing.Run(FileTable(sorting: list.filter { !$0.path.hasPrefix("Z") }))
            }
            let listing = FileListing(runs)
            // Run after run, the later entry for a path kept: what the sync's table was.
            let expected = FileTable(sorting: lists.flatMap { $0.filter { !$0.path.hasPrefix("Z") } })
            #expect(Array(listing) == Array(expected.entries), "\(generator)")
            #expect(listing.countPaths() == expected.count, "\(generator)")
        }
        #expect(Array(FileListing([])).isEmpty, "\(generator)")
    }

    @Test(
        "A record written from a listing has the bytes of one written from the same files' table, and reads back the same"
    )
    func recordFromAListing() throws {
        let kept = (0..<50).map { FileTable.Entry(path: "kept/\(49 - $0).txt", record: record(UInt8($0))) }
        let landed = (0..<50).map { FileTable.Entry(path: "new/\($0).txt", record: record(UInt8($0), size: 9)) }
        let created = Date(timeIntervalSince1970: 1_800_000_000)
        var fromListing = VersionRecord(id: 3, source: "https://cdn.example.com/b/", created: created)
        fromListing.setFiles(
            FileListing([
                FileListing.Run(landed, path: \.path) { _, entry in entry },
                FileListing.Run(kept, path: \.path) { _, entry in entry },
            ])
        )
        var fromTable = VersionRecord(id: 3, source: "https://cdn.example.com/b/", created: created)
        fromTable.fileTable = FileTable(sorting: kept + landed)
        let (listed, tabled) = (fromListing.json, fromTable.json)
        #expect(listed == tabled)
        #expect(fromListing.fileCount == 100)
        let read = try VersionRecord(json: listed)
        #expect(read.fileTable == fromTable.fileTable)
        // Read from the listing itself, the table is made on demand.
        #expect(fromListing.fileTable == fromTable.fileTable)
    }
}

extension VersionRecord {
    fileprivate var json: [UInt8] {
        var bytes: [UInt8] = []
        writeJSON { bytes.append(contentsOf: $0) }
        return bytes
    }
}
