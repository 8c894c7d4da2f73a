import Foundation
import TestSupport
import Testing

@testable import FreshAir

@Suite("Chunk indexes: fixed blocks found wherever they moved, a strict binary form", .backgroundThread)
struct ChunkIndexTests {
    func randomBytes(_ count: Int, seed: UInt64) -> [UInt8] {
        var state = seed
        // A loop, not `map`: a closure call per byte is most of the cost in a debug build.
        return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            for index in 0..<count {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                buffer[index] = UInt8(truncatingIfNeeded: state >> 33)
            }
            initialized = count
        }
    }

    /// A file on disk, removed when the test ends.
    final class TemporaryFile {
        let path: String
        init(_ bytes: [UInt8]) throws {
            path = FileManager.default.temporaryDirectory.appendingPathComponent("chunks-\(UUID().uuidString)").path
            try Data(bytes).write(to: URL(fileURLWithPath: path))
        }
        deinit { try? FileManager.default.removeItem(atPath: path) }
        func index() throws -> ChunkIndex { try ChunkIndex.make(fileAt: path) }
    }

    /// Finds `new`'s blocks in `old` (with `old`'s index or without), checks that every block
    /// found holds exactly the new bytes, and answers the bytes a delta would fetch, in how
    /// many ranges, and where each block was found. `parts`: the search in that many parts at
    /// most, of 64 KB at least.
    func delta(
        from old: [UInt8],
        to new: [UInt8],
        usingOldIndex: Bool,
        parts: Int = 1
    ) throws -> (fetched: Int64, ranges: Int, found: [Int64?]) {
        let (oldFile, newFile) = (try TemporaryFile(old), try TemporaryFile(new))
        let newIndex = try newFile.index()
        let found = try BlockFinder.find(
            newIndex,
            opening: { [path = oldFile.path] in try InputFile(path: path) },
            oldIndex: usingOldIndex ? try oldFile.index() : nil,
            parts: parts,
            partSize: 64 << 10
        )
        for (block, source) in found.offsets.enumerated() {
            guard let source else { continue }
            let (offset, length) = newIndex.extent(ofBlock: block)
            #expect(
                old[Int(source)..<Int(source) + length] == new[Int(offset)..<Int(offset) + length],
                "block \(block)"
            )
        }
        let (copies, fetches) = ChunkDelta.plan(new: newIndex, found: found.offsets, mergeGap: 8 << 10)
        let fetched = fetches.reduce(Int64(0)) { $0 + $1.upperBound - $1.lowerBound + 1 }
        let copied = copies.reduce(Int64(0)) { $0 + $1.length }
        #expect(copied + fetched >= Int64(new.count), "every byte is copied or fetched")
        return (fetched, fetches.count, Array(found.offsets))
    }

    @Test(
        "A large search is sampled first: a rewritten file stops after the sample and fetches whole; a file with an insertion and edits is searched whole and found"
    )
    func sampledSearch() throws {
        let size = Int(BlockFinder.sampledSearch) + (8 << 20)
        let old = randomBytes(size, seed: 11)
        let oldFile = try TemporaryFile(old)
        func find(_ new: [UInt8]) throws -> (BlockFinder.Found, ChunkIndex) {
            let newIndex = try TemporaryFile(new).index()
            let found = try BlockFinder.find(
                newIndex,
                opening: { [path = oldFile.path] in try InputFile(path: path) },
                oldIndex: nil
            )
            return (found, newIndex)
        }
        // Rewritten: nothing in the sample, so the search stops there.
        let (rewritten, _) = try find(randomBytes(size, seed: 12))
        #expect(rewritten.offsets.allSatisfy { $0 == nil })
        #expect(rewritten.searched <= 16 * (256 << 10) + 16 * 4096, "searched \(rewritten.searched) bytes")
        // One byte inserted near the start and a few bytes changed: every block past them is found.
        var edited = old
        edited.insert(7, at: 1_000)
        for place in stride(from: 5_000_000, to: size - 1, by: 9_000_000) { edited[place] ^= 0xFF }
        let (shifted, index) = try find(edited)
        let found = shifted.offsets.filter { $0 != nil }.count
        #expect(found >= index.blocks.count - 16, "found \(found) of \(index.blocks.count) blocks")
        #expect(shifted.searched >= Int64(size), "searched whole: \(shifted.searched)")
    }

    @Test("Blocks of 4 KB cover the file, 8 bytes each; the form round-trips; the digest is the file's")
    func roundTrip() throws {
        let bytes = randomBytes((2 << 20) + 1000, seed: 1)
        let made = try TemporaryFile(bytes).index()
        #expect(made.fileSize == Int64(bytes.count))
        #expect(made.fileDigest == ContentHash.of(bytes, using: .sha256))
        #expect(made.blocks.count == 513)
        #expect(made.blocks[0] == bytes[0..<4096].withUnsafeBytes { ChunkIndex.block(of: $0) })
        #expect(made.blocks[512] == bytes[(2 << 20)...].withUnsafeBytes { ChunkIndex.block(of: $0) })
        #expect(made.extent(ofBlock: 512) == (2 << 20, 1000))
        let data = made.serialized()
        #expect(data.count == 52 + 8 * 513)
        #expect(try ChunkIndex(data: data, source: "x") == made)
    }

    @Test("A second implementation written from the documented format (scripts/chunk-index.py) agrees byte for byte")
    func secondImplementation() throws {
        let file = try TemporaryFile(randomBytes((200 << 10) + 333, seed: 8))
        let output = file.path + ".py-index"
        defer { try? FileManager.default.removeItem(atPath: output) }
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("scripts/chunk-index.py")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script.path, file.path, output]
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: output)) == file.index().serialized())
    }

    @Test("The rolling hash slid one byte at a time equals the hash of each window computed afresh")
    func rolling() {
        let bytes = randomBytes(20_000, seed: 5)
        for window in [4096, 1000, 257] {
            var hash = RollingHash(window: window)
            bytes.withUnsafeBytes { raw in
                hash.start(UnsafeRawBufferPointer(rebasing: raw[0..<window]))
                for start in 1...(bytes.count - window) {
                    hash.roll(out: raw[start - 1], in: raw[start + window - 1])
                    if start % 997 == 0 || start == bytes.count - window {
                        #expect(
                            hash.value
                                == RollingHash.of(UnsafeRawBufferPointer(rebasing: raw[start..<(start + window)]))
                        )
                    }
                }
            }
        }
    }

    @Test(
        "An insertion of any length moves the blocks after it: they are found at their new offsets, with or without the old index",
        arguments: [false, true]
    )
    func insertion(usingOldIndex: Bool) throws {
        let bytes = randomBytes(2 << 20, seed: 2)
        var edited = bytes
        edited.insert(contentsOf: randomBytes(10_003, seed: 3), at: (1 << 20) + 77)
        let (fetched, ranges, found) = try delta(from: bytes, to: edited, usingOldIndex: usingOldIndex)
        #expect(ranges == 1)
        let inParts = try delta(from: bytes, to: edited, usingOldIndex: usingOldIndex, parts: 3).found
        #expect(
            zip(inParts, found).filter { $0 != $1 }.isEmpty,
            "searched in three parts at once, every block is found where one search finds it"
        )
        #expect(
            fetched >= 10_003 && fetched <= 10_003 + 2 * 4096,
            "\(fetched) bytes fetched for a 10,003-byte insertion"
        )
    }

    @Test("Regions split into parts of about equal bytes cover every window whole, in order")
    func split() {
        let regions: [Range<Int64>] = [0..<100, 150..<1_000, 1_000..<1_010, 2_000..<2_600]
        for count in 1...6 {
            let parts = BlockFinder.split(regions, into: count, overlap: 15, smallest: 100)
            #expect(parts.count == min(count, 1_560 / 100), "\(count) parts asked")
            let flat = parts.flatMap { $0 }
            #expect(zip(flat, flat.dropFirst()).allSatisfy { $0.lowerBound < $1.lowerBound }, "in order")
            for region in regions {
                for start in stride(from: region.lowerBound, through: region.upperBound - 16, by: 1) {
                    let whole = flat.contains { $0.lowerBound <= start && start + 16 <= $0.upperBound }
                    #expect(whole, "window at \(start)")
                }
            }
            let bytes = parts.map { $0.reduce(Int64(0)) { $0 + Int64($1.count) } }
            let share = (1_560 + Int64(parts.count) - 1) / Int64(parts.count)
            #expect(bytes.allSatisfy { $0 <= share + 15 }, "\(bytes)")
        }
    }

    @Test(
        "The key table finds every block with a key, even when a crafted index puts every key in one bucket",
        arguments: [false, true]
    )
    func keyTable(oneBucket: Bool) {
        // 5,000 blocks, keys repeating (runs of up to 7), rolling hashes spread or all sharing
        // their top 24 bits (one bucket of 5,000 under a table of 2,048).
        var generator = SeededGenerator()
        let distinct = (0..<800).map { _ in
            ChunkIndex.Block(
                rolling: oneBucket
                    ? 0xABCD_EF00 | UInt32.random(in: 0...255, using: &generator) : .random(in: 0...UInt32.max),
                digest: .random(in: 0...UInt32.max)
            )
        }
        let blocks = (0..<5_000).map { _ in distinct.randomElement(using: &generator)! }
        let index = ChunkIndex(
            blockSize: 4096,
            fileSize: Int64(blocks.count) * 4096,
            fileDigest: ContentHash.of([], using: .sha256),
            blocks: blocks
        )
        let table = BlockKeyTable(index.blocks, count: blocks.count)
        let expected = Dictionary(grouping: blocks.indices, by: { blocks[$0].key })
        for (key, numbers) in expected {
            let found = table.run(of: key).map { Int(table.order[$0]) }
            #expect(found.sorted() == numbers, "key \(key), \(generator)")
        }
        #expect(table.run(of: 0x1234_5678_9ABC_DEF0).isEmpty || expected[0x1234_5678_9ABC_DEF0] != nil, "\(generator)")
        var runs = 0
        var covered = 0
        table.forEachRun { run in
            runs += 1
            covered += run.count
        }
        #expect(runs == expected.count, "\(generator)")
        #expect(covered == blocks.count, "\(generator)")
    }

    @Test("A part's share of the SHA-256 checks is its share of the bytes, even for an old copy of terabytes")
    func budgetShare() {
        #expect(BlockFinder.share(of: 1_000, for: 250, of: 1_000) == 250)
        #expect(BlockFinder.share(of: 1_000, for: 0, of: 1_000) == 1, "at least one")
        let searched: Int64 = 4 << 40  // 4 TB: budget × bytes is past 2^63
        let budget = searched / 4096 * 2 + 4096
        #expect(BlockFinder.share(of: budget, for: searched / 2, of: searched) == Int(budget / 2))
    }

    @Test(
        "Scattered overwrites cost each one its own bytes and at most a block on either side; the last short block is kept"
    )
    func overwrites() throws {
        let bytes = randomBytes((4 << 20) + 123, seed: 6)
        var edited = bytes
        for region in 0..<8 {
            let offset = region * (bytes.count / 8) + 3_000
            edited.replaceSubrange(offset..<(offset + 10_240), with: randomBytes(10_240, seed: UInt64(10 + region)))
        }
        for usingOldIndex in [false, true] {
            let (fetched, ranges, found) = try delta(from: bytes, to: edited, usingOldIndex: usingOldIndex)
            #expect(ranges == 8)
            let inParts = try delta(from: bytes, to: edited, usingOldIndex: usingOldIndex, parts: 4).found
            #expect(zip(inParts, found).filter { $0 != $1 }.isEmpty, "four parts find what one does")
            #expect(fetched <= 8 * (10_240 + 2 * 4096), "\(fetched) bytes for 8 edits of 10 KB")
            #expect(fetched % 4096 == 0, "the short last block is not among them")
        }
    }

    @Test("A copy crafted so that every window's rolling hash is wanted costs a bounded number of SHA-256 checks")
    func boundedSearch() throws {
        let old = randomBytes(256 << 10, seed: 7)
        let oldFile = try TemporaryFile(old)
        // An index whose blocks have the rolling hash of every window of the old copy, and
        // digests none of them has: each window would be a hit to confirm.
        var blocks: [ChunkIndex.Block] = []
        old.withUnsafeBytes { raw in
            var hash = RollingHash(window: 4096)
            hash.start(UnsafeRawBufferPointer(rebasing: raw[0..<4096]))
            for start in 0...(old.count - 4096) {
                if start > 0 { hash.roll(out: raw[start - 1], in: raw[start + 4095]) }
                let digest = ContentHash.prefix32(UnsafeRawBufferPointer(rebasing: raw[start..<(start + 4096)]))
                blocks.append(ChunkIndex.Block(rolling: hash.recorded, digest: ~digest))
            }
        }
        let hostile = ChunkIndex(
            blockSize: 4096,
            fileSize: Int64(blocks.count) * 4096,
            fileDigest: ContentHash.of([], using: .sha256),
            blocks: blocks
        )
        let found = try BlockFinder.find(
            hostile,
            opening: { [path = oldFile.path] in try InputFile(path: path) },
            oldIndex: nil
        )
        #expect(found.offsets.allSatisfy { $0 == nil })
        #expect(found.confirmations <= (old.count / 4096) * 2 + 4096, "\(found.confirmations) windows hashed")
        #expect(found.confirmations < blocks.count / 10)
    }

    @Test(
        "A malformed index is refused with what is wrong",
        arguments: [
            ("header", "cut short"), ("magic", "not a FreshAir"), ("version 1", "run `breeze hash` again"),
            ("version 3", "newer breeze"), ("size", "blocks of"), ("trailing", "blocks of"),
            ("block size", "power of two"), ("huge", "blocks of"),
        ]
    )
    func malformed(kind: String, message: String) throws {
        let made = try TemporaryFile(randomBytes(100_000, seed: 4)).index()
        var data = [UInt8](made.serialized())
        switch kind {
        case "header": data = Array(data.prefix(20))
        case "magic": data[0] = UInt8(ascii: "X")
        case "version 1": data[4] = 1
        case "version 3": data[4] = 3
        case "size": data[13] ^= 0x40  // the file size moves by 16 KB: the block count no longer fits
        case "trailing": data.append(0)
        case "block size": data[9] = 0x11  // 4,352: not a power of two
        case "huge": data.replaceSubrange(12..<20, with: [0, 0, 0, 0, 0, 0, 0, 0x10])  // 2^60 bytes
        default: break
        }
        #expect {
            _ = try ChunkIndex(data: Data(data), source: "big.bin.freshair-chunks")
        } throws: { error in
            "\(error)".contains("big.bin.freshair-chunks") && "\(error)".lowercased().contains(message.lowercased())
        }
    }
}
