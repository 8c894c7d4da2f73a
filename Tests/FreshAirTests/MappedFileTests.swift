import Foundation
import TestSupport
import Testing

@testable import FreshAir

@Suite("A large root manifest read from its file, mapped, its pages let go behind the reader", .backgroundThread)
struct MappedFileTests {
    /// A manifest of `count` entries with digests and sizes, as `breeze generate` writes one.
    func manifestText(entries count: Int) -> Data {
        let entries = (0..<count).map { index in
            let digest = ContentHash.of(Array("file \(index)".utf8), using: .sha256).hex
            return
                #"{"filename": "folder-\#(index % 7)/file-\#(index).bin", "sha256": "\#(digest)", "size": \#(index)}"#
        }
        return Data(#"{"format": 2, "sequence": 3, "files": [\#(entries.joined(separator: ",\n"))]}"#.utf8)
    }

    func temporaryFile(_ data: Data) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("mapped-\(UUID().uuidString)").path
        try data.write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test("Read mapped and let go of as it is read, a manifest has the same entries as read from memory")
    func sameEntries() throws {
        let text = manifestText(entries: 20_000)
        let path = try temporaryFile(text)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let mapped = try #require(MappedFile(path: path))
        #expect(mapped.count == text.count)
        var offsets: [Int] = []
        let fromFile = try Manifest(data: mapped.data, source: path, maxEntries: .max) { offset in
            offsets.append(offset)
            mapped.letGo(before: offset)
        }
        let fromMemory = try Manifest(data: text, source: path)
        #expect(fromFile.entries == fromMemory.entries)
        #expect(fromFile.sequence == 3)
        // First a megabyte at a time up to the end (the searches before the parse), then as the
        // list is read: every 1,024 entries, each offset past the last.
        let surveyed = try #require(offsets.firstIndex(of: text.count))
        #expect(Array(offsets[...surveyed]) == Array(stride(from: 1 << 20, to: text.count, by: 1 << 20)) + [text.count])
        let parsed = offsets[(surveyed + 1)...]
        #expect(parsed.count == 20_000 / 1024)
        #expect(zip(parsed, parsed.dropFirst()).allSatisfy { $0 < $1 })
        // The pages let go are read again from the file: the bytes are what they were.
        mapped.letGo(before: mapped.count)
        #expect(mapped.data == text)
    }

    #if os(Linux)
    @Test("Pages let go leave the process: the mapping's resident size falls by at least what was let go")
    func pagesLeave() throws {
        let text = manifestText(entries: 20_000)  // about 3 MB
        let path = try temporaryFile(text)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let mapped = try #require(MappedFile(path: path))
        let data = mapped.data
        let address = data.withUnsafeBytes { UInt(bitPattern: $0.baseAddress!) }
        #expect(data.reduce(0) { $0 &+ Int($1) } > 0)  // every page read
        let read = try #require(residentKB(of: address))
        #expect(read >= text.count / 1024 - 8)
        mapped.letGo(before: text.count / 2)
        let half = try #require(residentKB(of: address))
        // At least the half let go has left (the kernel may drop more of a clean mapping).
        #expect(half <= read - text.count / 2048 + 8, "half let go: \(read) KB, then \(half) KB")
        mapped.letGo(before: text.count)
        #expect(try #require(residentKB(of: address)) <= 4, "only the last, partial page stays")
    }

    /// The resident kilobytes of the mapping that starts at `address`, from `/proc/self/smaps`.
    func residentKB(of address: UInt) -> Int? {
        // Read to its end: a file of /proc gives its size as 0.
        guard let file = FileHandle(forReadingAtPath: "/proc/self/smaps"),
            let smaps = String(data: file.readDataToEndOfFile(), encoding: .utf8)
        else { return nil }
        var inMapping = false
        for line in smaps.split(separator: "\n") {
            if let dash = line.firstIndex(of: "-"), let start = UInt(line[..<dash], radix: 16) {
                inMapping = start == address
            } else if inMapping, line.hasPrefix("Rss:") {
                return Int(line.split(separator: " ")[1])
            }
        }
        return nil
    }
    #endif

    @Test("An empty or missing file is not mapped: the caller keeps the bytes it has")
    func emptyOrMissing() throws {
        let path = try temporaryFile(Data())
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(MappedFile(path: path) == nil)
        #expect(MappedFile(path: path + "-missing") == nil)
    }
}
