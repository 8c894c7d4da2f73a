import Foundation
import TestSupport
import Testing

@testable import FreshAir

@Suite("Version records: typed fields over the metadata every version of FreshAir has written", .backgroundThread)
struct VersionRecordTests {
    /// A record as stores written before the typed fields have it, with a key from the future.
    static let stored = #"""
        {"id":3,"source":"https://cdn.example.com/content.tgz","created":"2026-11-21T23:44:59Z","previous":2,
         "metadata":{"environment":"fp","sequence":"7","expires":"1800000000.5","origin":"bundled","format":"tgz",
                     "sha256":"ab12","bundleVersion":"4","repository":"com.example.r","confirmed":"true",
                     "launches":"2","future":"kept as found"},
         "files":{}}
        """#

    @Test("Every fact an older store wrote reads into its typed field, and is written back the same")
    func roundTrip() throws {
        let record = try VersionRecord(json: Array(Self.stored.utf8))
        #expect(record.plannedFor == "fp")
        #expect(record.sequence == 7)
        #expect(record.expires == Date(timeIntervalSince1970: 1_800_000_000.5))
        #expect(record.origin == .bundled)
        #expect(record.packageFormat == "tgz")
        #expect(record.packageDigest == "ab12")
        #expect(record.bundleVersion == 4)
        #expect(record.repository == "com.example.r")
        #expect(record.confirmed)
        #expect(record.unconfirmedLaunches == 2)
        #expect(record.otherFacts == ["future": "kept as found"])

        let written = try VersionRecord(json: record.jsonBytes)
        #expect(written == record)
        // The metadata object on disk holds the same keys and values as before.
        #expect(try facts(Array(Self.stored.utf8)) == facts(record.jsonBytes))
    }

    @Test("A record with none of them reads as unconfirmed, unplanned and unsigned")
    func empty() throws {
        let record = try VersionRecord(json: Array(#"{"id":1,"source":"s","metadata":{},"files":{}}"#.utf8))
        #expect(!record.confirmed && record.unconfirmedLaunches == 0)
        #expect(record.plannedFor == nil && record.sequence == nil && record.expires == nil && record.origin == nil)
        #expect(try JSONReader.parse(record.jsonBytes)["metadata"]?.pairs?.isEmpty == true)
    }

    @Test("A damaged record's size below zero reads as no size a file has, not as a crash")
    func negativeSize() throws {
        let digest = String(repeating: "a", count: 64)
        // Spaced out, so read whole rather than in the shape FreshAir writes.
        let text = #"{"id": 1, "source": "s", "files": {"a.txt": {"h": "sha256:\#(digest)", "s": -5}}}"#
        let record = try VersionRecord(json: Array(text.utf8))
        #expect(record.fileTable.record(at: 0) == FileRecord(hash: ContentHash(hex: digest)!, size: -1))
    }

    @Test("Files read later, as they were written: paths that need escapes, one named files, and the empty set")
    func filesReadLater() throws {
        let sha = { (n: Int) in ContentHash(hex: String(repeating: String(n % 10), count: 64))! }
        var files: [String: FileRecord] = [:]
        for (index, path) in [
            "files", "a \"quoted\" name.txt", #"back\slash"#, "tab\there", "é/ünïcode/日本.png", #"x","files":{"#,
            "d00/f00001.bin",
        ].enumerated() {
            files[path] = FileRecord(hash: sha(index), size: Int64(index) * 1_000_000_007)
        }
        files["old.sha1"] = FileRecord(hash: ContentHash(hex: String(repeating: "a", count: 40))!, size: 0)
        var record = VersionRecord(
            id: 9,
            source: #"https://cdn.example.com/a,"files":{/"#,
            created: Date(timeIntervalSince1970: 1_800_000_000),
            validators: HTTPValidators(etag: #""abc""#, lastModified: nil),
            files: files
        )
        record.sequence = 4
        let bytes = record.jsonBytes
        // FreshAir's own shape: taken as bytes now, decoded when read.
        let split = try #require(RecordFiles.split(bytes))
        #expect(RecordFiles(checked: bytes, member: split.filesStart..<split.end) != nil)
        let read = try VersionRecord(json: bytes)
        #expect(read.id == 9 && read.sequence == 4 && read.validators == record.validators)
        #expect(read.source == record.source)
        #expect(read.files == files)
        #expect(read == record)

        // Any other shape (spaces, another member in an entry, a future key) is read at once.
        let spaced = try VersionRecord(json: JSONReader.parse(bytes).serializedBytes(indent: 2))
        #expect(spaced == record)
        let other = Array(#"{"id":1,"source":"s","files":{"a":{"h":"sha256:\#(sha(1).hex)","s":3,"x":1}}}"#.utf8)
        #expect(
            RecordFiles(checked: other, member: try #require(RecordFiles.split(other)).filesStart..<other.count - 1)
                == nil
        )
        #expect(try VersionRecord(json: other).files == ["a": FileRecord(hash: sha(1), size: 3)])
        // Damage is still found when the record is read, not when its files are.
        for damaged in [
            #"{"id":1,"source":"s","files":{"a":{"h":"sha256:12","s":3}}}"#,
            #"{"id":1,"source":"s","files":{"a":{"h":"sha256:\#(sha(1).hex)","s":-3}}"#,
            #"{"id":1,"source":"s","files":{"a":{"h":"sha256:\#(sha(1).hex)","s":99999999999999999999}}}"#,
        ] {
            #expect(throws: VersionRecordError.self, "\(damaged)") { try VersionRecord(json: Array(damaged.utf8)) }
        }
        let empty = try VersionRecord(json: VersionRecord(id: 1, source: "s").jsonBytes)
        #expect(empty.files.isEmpty)
    }

    @Test("A path of bytes that are not UTF-8 is refused when the record is read, in the member or anywhere in a path")
    func invalidUTF8Refused() throws {
        let digest = String(repeating: "7", count: 64)
        let valid = Array(#"{"id":1,"source":"s","files":{"é.txt":{"h":"sha256:\#(digest)","s":3}}}"#.utf8)
        #expect(try VersionRecord(json: valid).files.keys.sorted() == ["é.txt"])
        // The same record with "é" (C3 A9) broken: a lone continuation byte, a truncated
        // sequence, an overlong "/" (C0 AF), and a surrogate (ED A0 80).
        let e = valid.firstRange(of: Array("é".utf8))!
        for broken: [UInt8] in [[0xA9], [0xC3], [0xC0, 0xAF], [0xED, 0xA0, 0x80]] {
            var bytes = valid
            bytes.replaceSubrange(e, with: broken)
            let split = try #require(RecordFiles.split(bytes))
            #expect(RecordFiles(checked: bytes, member: split.filesStart..<split.end) == nil, "\(broken)")
            #expect(throws: VersionRecordError.self, "\(broken)") { try VersionRecord(json: bytes) }
        }
    }

    @Test(
        "A files member cut anywhere is refused, though the bytes after the cut are still there; so is a record cut anywhere"
    )
    func cutMemberRefused() throws {
        let digest = String(repeating: "7", count: 64)
        let bytes = Array(
            #"{"id":1,"source":"s","files":{"a\"b.txt":{"h":"sha256:\#(digest)","s":3},"é":{"h":"sha1:\#(digest.prefix(40))","s":12}}}"#
                .utf8
        )
        let split = try #require(RecordFiles.split(bytes))
        #expect(RecordFiles(checked: bytes, member: split.filesStart..<split.end) != nil)
        // The bytes past each cut are still in the array: a scanner that ignored the end would accept them.
        for cut in split.filesStart..<split.end {
            #expect(RecordFiles(checked: bytes, member: split.filesStart..<cut) == nil, "cut at \(cut)")
        }
        for cut in 0..<bytes.count {
            #expect(throws: VersionRecordError.self, "cut at \(cut)") { try VersionRecord(json: bytes[..<cut]) }
        }
    }

    @Test("A raw control character, a quote or a byte past ASCII at any place of a long path is found")
    func pathBytesChecked() throws {
        let digest = String(repeating: "7", count: 64)
        let name = "folder/sub-folder/another/file-000001.bin"
        let bytes = Array(#"{"id":1,"source":"s","files":{"\#(name)":{"h":"sha256:\#(digest)","s":3}}}"#.utf8)
        let split = try #require(RecordFiles.split(bytes))
        #expect(RecordFiles(checked: bytes, member: split.filesStart..<split.end) != nil)
        let path = try #require(bytes.firstRange(of: Array(name.utf8)))
        for place in path {
            // Controls must be escaped; a lone quote ends the path early; 0xFF is never UTF-8.
            for byte: UInt8 in [0x00, 0x09, 0x0A, 0x1F, UInt8(ascii: "\""), 0xFF] {
                var damaged = bytes
                damaged[place] = byte
                #expect(
                    RecordFiles(checked: damaged, member: split.filesStart..<split.end) == nil,
                    "\(byte) at \(place)"
                )
            }
        }
    }

    @Test("A digest with one byte that is not hex, at any of its 40 or 64 places, is refused; upper case is read")
    func digestNotHexRefused() throws {
        for digits in [40, 64] {
            let digest = String(repeating: "0123456789abcdefABCDEF", count: 3).prefix(digits)
            let algorithm = digits == 40 ? "sha1" : "sha256"
            let valid = Array(#"{"id":1,"source":"s","files":{"a":{"h":"\#(algorithm):\#(digest)","s":3}}}"#.utf8)
            let split = try #require(RecordFiles.split(valid))
            #expect(RecordFiles(checked: valid, member: split.filesStart..<split.end) != nil)
            let first = try #require(valid.firstRange(of: Array(digest.utf8))).lowerBound
            for place in 0..<digits {
                for byte in Array("gG/:@`\"xZ ".utf8) + [0xB0, 0xE1, 0xC1, 0xFF, 0x00] {
                    var bytes = valid
                    bytes[first + place] = byte
                    #expect(
                        RecordFiles(checked: bytes, member: split.filesStart..<split.end) == nil,
                        "\(UnicodeScalar(byte)) at \(place) of \(digits)"
                    )
                }
            }
        }
    }

    func facts(_ bytes: [UInt8]) throws -> [String: String] {
        var facts: [String: String] = [:]
        for (key, value) in try JSONReader.parse(bytes)["metadata"]?.pairs ?? [] { facts[key] = value.string }
        return facts
    }

    @Test("A record larger than one piece is written to disk in pieces, whole, and nothing else is left beside it")
    func writtenInPieces() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("record-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var files: [String: FileRecord] = [:]
        for index in 0..<5_000 {  // about 600 KB of JSON: three pieces
            files["d\(index % 7)/file \(index).bin"] = FileRecord(
                hash: .of(Array("\(index)".utf8), using: .sha256),
                size: Int64(index)
            )
        }
        let record = VersionRecord(
            id: 12,
            source: "https://cdn.example.com/m.json",
            created: Date(timeIntervalSince1970: 1_800_000_000),
            files: files
        )
        var pieces = 0
        let path = folder + "/12.json"
        try Disk.writeAtomically(to: path) { write in
            try record.writeJSON { bytes in
                pieces += 1
                try write(bytes)
            }
        }
        #expect(pieces >= 3)
        #expect(try VersionRecord(json: Disk.readBytes(path)) == record)
        #expect(try Disk.readBytes(path) == Array(Disk.read(path)), "read straight into an array, the same bytes")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["12.json"])

        // A write that fails midway leaves the old file as it was, and no temporary file.
        struct Full: Error {}
        #expect(throws: Full.self) {
            try Disk.writeAtomically(to: path) { write in
                try write(UnsafeRawBufferPointer(start: nil, count: 0))
                throw Full()
            }
        }
        #expect(try VersionRecord(json: Array(Disk.read(path))) == record)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["12.json"])

        // An empty file is no bytes; a missing one is an error naming it.
        _ = FileManager.default.createFile(atPath: folder + "/empty", contents: Data())
        #expect(try Disk.readBytes(folder + "/empty").isEmpty)
        #expect(throws: FreshAirError.self) { try Disk.readBytes(folder + "/missing") }

        // A file that grows past what `fstat` said is read to its end: a pipe says 0 bytes, and
        // brings 200,000 in pieces.
        let pipe = folder + "/pipe"
        #expect(mkfifo(pipe, 0o600) == 0)
        let sent = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        signal(SIGPIPE, SIG_IGN)  // a reader that stops early fails the test, not the process
        let writer = Thread {
            let descriptor = open(pipe, O_WRONLY)
            var offset = 0
            while offset < sent.count {
                let count = sent[offset...].prefix(7_000).withUnsafeBytes {
                    write(descriptor, $0.baseAddress, $0.count)
                }
                guard count > 0 else { break }
                offset += count
            }
            close(descriptor)
        }
        writer.start()
        #expect(try Disk.readBytes(pipe) == sent)
    }
}

extension VersionRecord {
    /// The record's JSON whole, as `writeJSON(_:)` hands it to the store in pieces.
    var jsonBytes: [UInt8] {
        var bytes: [UInt8] = []
        writeJSON { bytes.append(contentsOf: $0) }
        return bytes
    }
}
