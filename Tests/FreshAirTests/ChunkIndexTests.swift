import Foundation
import Testing

@testable import FreshAir

@Suite("Chunk indexes: content-defined boundaries that survive insertions, a strict binary form")
struct ChunkIndexTests {
    func randomBytes(_ count: Int, seed: UInt64) -> [UInt8] {
        var state = seed
        return (0..<count).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: state >> 33)
        }
    }

    func index(of bytes: [UInt8]) throws -> ChunkIndex {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("chunks-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: url) }
        try Data(bytes).write(to: url)
        return try ChunkIndex.make(fileAt: url.path)
    }

    @Test("Chunks cover the file, average near 4 KB, round-trip through the binary form, and the digest is the file's")
    func roundTrip() throws {
        let bytes = randomBytes(2 << 20, seed: 1)
        let made = try index(of: bytes)
        #expect(made.fileSize == Int64(bytes.count))
        #expect(made.fileDigest == ContentHash.of(bytes, using: .sha256))
        #expect(made.chunks.reduce(0) { $0 + $1.length } == bytes.count)
        let average = bytes.count / made.chunks.count
        #expect((3_000...7_000).contains(average), "average chunk \(average) bytes")
        #expect(made.chunks.dropLast().allSatisfy { (1024...16384).contains($0.length) })
        let data = made.serialized()
        #expect(try ChunkIndex(data: data, source: "x") == made)
        #expect(data.count < made.chunks.count * 12 + 64, "\(data.count) bytes for \(made.chunks.count) chunks")
    }

    @Test("An insertion in the middle changes only the chunks next to it; a delta plan fetches little more than it")
    func insertionIsLocal() throws {
        let bytes = randomBytes(2 << 20, seed: 2)
        var edited = bytes
        edited.insert(contentsOf: randomBytes(10_000, seed: 3), at: 1 << 20)
        let (old, new) = (try index(of: bytes), try index(of: edited))
        let (copies, fetches) = ChunkDelta.plan(new: new, old: old, mergeGap: 8 << 10)
        let fetched = fetches.reduce(Int64(0)) { $0 + $1.upperBound - $1.lowerBound + 1 }
        #expect(fetches.count == 1)
        #expect(fetched >= 10_000 && fetched < 10_000 + 40_000, "\(fetched) bytes fetched for a 10,000-byte insertion")
        #expect(copies.reduce(Int64(0)) { $0 + $1.length } + fetched == Int64(edited.count))
    }

    @Test(
        "A malformed index is refused with what is wrong",
        arguments: [
            ("header", "cut short"), ("magic", "not a FreshAir"), ("version", "version"), ("sum", "add up"),
            ("trailing", "follow"), ("sizes", "out of range"), ("count", "room for at most"),
        ]
    )
    func malformed(kind: String, message: String) throws {
        let made = try index(of: randomBytes(100_000, seed: 4))
        var data = [UInt8](made.serialized())
        switch kind {
        case "header": data = Array(data.prefix(20))
        case "magic": data[0] = UInt8(ascii: "X")
        case "version": data[4] = 2
        case "sum": data[24] ^= 1  // the file size
        case "trailing": data.append(0)
        case "sizes": data[12] = 3  // the average is no longer a power of two
        case "count":  // a file of 2^60 bytes in 2^31 chunks, in a document of a few KB
            data.replaceSubrange(20..<28, with: [0, 0, 0, 0, 0, 0, 0, 0x10])
            data.replaceSubrange(60..<64, with: [0, 0, 0, 0x80])
        default: break
        }
        #expect {
            _ = try ChunkIndex(data: Data(data), source: "big.bin.freshair-chunks")
        } throws: { error in
            "\(error)".contains("big.bin.freshair-chunks") && "\(error)".lowercased().contains(message.lowercased())
        }
    }
}
