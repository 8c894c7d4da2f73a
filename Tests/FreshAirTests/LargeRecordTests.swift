import Foundation
import TestSupport
import Testing

@testable import FreshAir

@Suite("A large version record is read a piece at a time, never whole, and reads as one read whole", .backgroundThread)
struct LargeRecordTests {
    func sha(_ n: Int) -> ContentHash { .of(Array(String(n).utf8), using: .sha256) }

    /// Runs `body` with a new empty folder and the path of a record in it, then removes the folder.
    func inNewFolder(_ body: (_ folder: URL, _ recordPath: String) throws -> Void) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("record-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try body(folder, folder.appendingPathComponent("1.json").path)
    }

    /// The member's entries walked in pieces of `capacity`, counted or read.
    func walk(_ bytes: [UInt8], _ member: Range<Int>, capacity: Int) -> (count: Int?, entries: [FileTable.Entry]) {
        var entries: [FileTable.Entry] = []
        let count = RecordScanner.walkEntries(
            of: member,
            capacity: capacity,
            read: { offset, buffer in
                guard offset + buffer.count <= bytes.count else { return false }
                _ = buffer.initialize(from: bytes[offset..<offset + buffer.count])
                return true
            },
            visit: { scanner in
                guard let entry = scanner.entry() else { return false }
                entries.append(entry)
                return true
            }
        )
        return (count, entries)
    }

    @Test(
        "Random records, whole or damaged, walked in pieces of every size from one entry up: the answer of the whole-buffer check"
    )
    func piecesAgreeWithTheWholeCheck() throws {
        var generator = SeededGenerator()
        let names = ["a.txt", "dir/é ü.png", #"q"uote"#, #"back\slash"#, "tab\there", "x,\"files\":{", "日本/語.json"]
        for round in 0..<200 {
            var record = VersionRecord(id: 1, source: "s", created: Date(timeIntervalSince1970: 0))
            var files: [String: FileRecord] = [:]
            for index in 0..<Int.random(in: 0...40, using: &generator) {
                let path = "\(names.randomElement(using: &generator)!)\(index)"
                files[path] = FileRecord(hash: sha(index), size: Int64.random(in: 0...Int64.max, using: &generator))
            }
            record.files = files
            var bytes = record.jsonBytes
            // Half the rounds break a byte (or cut the record short) somewhere in the files member.
            let split = try #require(RecordFiles.split(bytes))
            if round.isMultiple(of: 2), split.end - split.filesStart > 2 {
                let at = Int.random(in: split.filesStart..<split.end, using: &generator)
                if Bool.random(using: &generator) {
                    bytes[at] = [UInt8(ascii: "\""), UInt8(ascii: "}"), 0x01, 0xC3, UInt8(ascii: ",")]
                        .randomElement(using: &generator)!
                } else {
                    bytes.removeSubrange(at..<split.end)
                    bytes += Array("}".utf8)
                }
            }
            guard let member = RecordFiles.split(bytes).map({ $0.filesStart..<$0.end }) else { continue }
            let whole = RecordFiles.entriesInWrittenShape(bytes, member)
            // The longest entry here is under 200 bytes; 256 holds any of them.
            for capacity in [256, 300, 517, 4_096] {
                let walked = walk(bytes, member, capacity: capacity)
                #expect(walked.count == whole, "capacity \(capacity), round \(round), \(generator)")
                if let whole {
                    #expect(
                        FileTable(sorting: walked.entries) == RecordFiles(checked: bytes, member: member)?.table,
                        "\(generator)"
                    )
                    #expect(walked.entries.count == whole, "\(generator)")
                }
            }
        }
    }

    @Test(
        "An entry longer than the piece, a read that fails, or bytes after the files, is a record not in shape: read whole instead"
    )
    func tooLongOrUnreadable() {
        let digest = String(repeating: "7", count: 64)
        for trailing in [
            #"{"id":1,"source":"s","files":{"a":{"h":"sha256:\#(digest)","s":3}},"more":1}"#,
            #"{"id":1,"source":"s","files":{}"more":1}"#,
        ] {
            let bytes = Array(trailing.utf8)
            let split = RecordFiles.split(bytes)!
            #expect(RecordFiles.entriesInWrittenShape(bytes, split.filesStart..<split.end) == nil)
            #expect(walk(bytes, split.filesStart..<split.end, capacity: 256).count == nil, "\(trailing)")
        }
        var record = VersionRecord(id: 1, source: "s")
        record.files = [String(repeating: "p", count: 900): FileRecord(hash: sha(1), size: 1)]
        let bytes = record.jsonBytes
        let split = RecordFiles.split(bytes)!
        let member = split.filesStart..<split.end
        #expect(walk(bytes, member, capacity: 512).count == nil)
        #expect(walk(bytes, member, capacity: 1_024).count == 1)
        let failing = RecordScanner.walkEntries(of: member, capacity: 1_024, read: { _, _ in false }) { $0.skipEntry() }
        #expect(failing == nil)
    }

    @Test(
        "A store's record of 12,000 files: read in pieces, the same files, and still its own after it is replaced on disk"
    )
    func largeRecordInAStore() throws {
        try inNewFolder { folder, path in try largeRecordInAStore(folder: folder, path: path) }
    }

    func largeRecordInAStore(folder: URL, path: String) throws {
        var record = VersionRecord(id: 1, source: "https://cdn.example.com/b/", created: Date(timeIntervalSince1970: 9))
        record.plannedFor = "fp"
        record.fileTable = FileTable(
            sorting: (0..<12_000).map {
                .init(path: "d\($0 % 17)/file-\($0).bin", record: FileRecord(hash: sha($0), size: Int64($0)))
            }
        )
        try Disk.writeAtomically(to: path, producing: record.writeJSON)
        #expect(Disk.status(path)!.size >= Int64(VersionRecord.largeSize))

        let read = try #require(try VersionRecord(largeFileAt: path))
        #expect(read.fileCount == 12_000 && read.plannedFor == "fp" && read.source == record.source)
        // Replaced (as a launch count rewrites it) before its files are read: they are the old file's.
        var other = record
        other.fileTable = FileTable(sorting: [.init(path: "other", record: FileRecord(hash: sha(1), size: 1))])
        try Disk.writeAtomically(to: path, producing: other.writeJSON)
        #expect(read.fileTable == record.fileTable)
        #expect(read == record)
        // Its records went to an unnamed file beside it: nothing else is in the folder.
        #expect(read.fileTable.isSpilled && !record.fileTable.isSpilled)
        // Its paths too, a page at a time, each found by path as in memory.
        #expect(read.fileTable.arePathsSpilled && !record.fileTable.arePathsSpilled)
        for position in stride(from: 0, to: 12_000, by: 7) {
            #expect(read.fileTable.index(of: record.fileTable.path(at: position)) == position)
        }
        for missing in ["", "a", "d3/file-99999.bin", "d9", "zz"] { #expect(read.fileTable.index(of: missing) == nil) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["1.json"])

        // A small record, or one another writer spaced out, is read whole.
        #expect(try VersionRecord(largeFileAt: path) == nil)
        let spaced = try JSONReader.parse(record.jsonBytes).serializedBytes(indent: 2)
        try Data(spaced).write(to: URL(fileURLWithPath: path))
        #expect(try VersionRecord(largeFileAt: path) == nil)
        #expect(try VersionRecord(json: Disk.readBytes(path)).fileTable == record.fileTable)
    }

    @Test(
        "A large record that counts its files is not walked when read: an entry out of shape ends its files there; one without a count is checked at once"
    )
    func countedRecordIsCheckedWhenDecoded() throws {
        try inNewFolder { _, path in try countedRecordIsCheckedWhenDecoded(path: path) }
    }

    func countedRecordIsCheckedWhenDecoded(path: String) throws {
        var record = VersionRecord(id: 1, source: "https://cdn.example.com/b/", created: Date(timeIntervalSince1970: 9))
        record.fileTable = FileTable(
            sorting: (0..<12_000).map { .init(path: "file-\($0).bin", record: FileRecord(hash: sha($0), size: 1)) }
        )
        var bytes = record.jsonBytes
        #expect(String(decoding: bytes.prefix(400), as: UTF8.self).contains(#""fileCount":12000"#))
        // One digest past the middle gets a letter that is not hex: the entries before it stay good.
        let split = try #require(RecordFiles.split(bytes))
        let tag = Array(#""h":"sha256:"#.utf8)
        let middle = (split.filesStart + split.end) / 2
        let damaged = try #require(
            bytes[middle...].withUnsafeBytes { ByteSearch.firstOffset(of: tag, in: $0) }.map { middle + $0 + tag.count }
        )
        bytes[damaged] = UInt8(ascii: "g")
        let before = bytes[..<damaged].withUnsafeBytes { buffer in
            var count = 0
            var from = 0
            while let at = ByteSearch.firstOffset(of: tag, in: UnsafeRawBufferPointer(rebasing: buffer[from...])) {
                count += 1
                from += at + tag.count
            }
            return count - 1
        }
        #expect(before > 5_000 && before < 7_000)
        try Data(bytes).write(to: URL(fileURLWithPath: path))

        let read = try #require(try VersionRecord(largeFileAt: path))
        #expect(read.fileCount == 12_000, "the head's count, taken at its word")
        #expect(read.fileTable.count == before, "decoded up to the entry out of shape")
        #expect(read.file(at: record.fileTable.path(at: before - 1)) != nil)
        #expect(read.file(at: record.fileTable.path(at: 11_999)) == nil, "never trusted past it")

        // Without the count (an older FreshAir's record), or with one no record could hold, the
        // files are checked at once, and this one is not in shape.
        for replacement in [#""#, #","fileCount":999999999999"#] {
            let text = String(decoding: bytes, as: UTF8.self)
                .replacingOccurrences(of: #","fileCount":12000"#, with: replacement)
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
            #expect(try VersionRecord(largeFileAt: path) == nil, "\(replacement)")
        }
    }
}
