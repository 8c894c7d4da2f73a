import Foundation
import TestSupport
import Testing

@testable import FreshAir

@Suite("BodySink: a body's chunks reach the file and the hash whole and in order, in batches of a shared budget")
struct BodySinkTests {
    /// Chunk sizes that cross the inline limit and every batch edge: single bytes, a chunk of
    /// exactly the batch limit, chunks larger than it, and a short last one.
    static let chunkSizes = [1, 4096, 60_000, 1, 65_536, 262_144, 300_000, 7, 65_535, 131_072, 1, 200_000, 13]

    @Test("Written and hashed whole, in order, with hashing apart or not", arguments: [false, true])
    func wholeAndInOrder(hashingApart: Bool) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("freshair-sink-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        var generator = SeededGenerator(seed: 33)
        let chunks = Self.chunkSizes.map { size in (0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) }
        }
        let expected = chunks.flatMap { $0 }

        let path = folder.appendingPathComponent("body.bin").path
        let file = try OutputFile(path: path, append: false)
        let sink = BodySink(file: file, hasher: ContentHasher(.sha256), tee: nil, hashingApart: hashingApart)
        for chunk in chunks { try await sink.write(chunk) }
        let digest = try await sink.finish()
        file.close()

        let written = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(written.count == expected.count)
        #expect(written == expected)
        #expect(digest == ContentHash.of(expected, using: .sha256))
    }

    @Test("Batches share 1 MB: 256 KB each for up to four bodies, less for more")
    func batchBudget() {
        #expect(BodySink.batchLimit(bodies: 0) == 256 << 10)
        #expect(BodySink.batchLimit(bodies: 1) == 256 << 10)
        #expect(BodySink.batchLimit(bodies: 4) == 256 << 10)
        #expect(BodySink.batchLimit(bodies: 8) == 128 << 10)
        // Smaller than a network chunk (64 KB): each chunk goes alone, as before batches.
        #expect(BodySink.batchLimit(bodies: 32) == 32 << 10)
    }
}
