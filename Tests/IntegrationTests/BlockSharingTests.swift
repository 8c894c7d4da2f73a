import Foundation
import Testing

@testable import BreezeKit
@testable import FreshAir

@Suite("Kept bytes shared with the old copy where the file system can (XFS), written where it cannot (ext4)")
struct BlockSharingTests {
    static let bytes = (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 9) }

    /// Writes ``bytes`` as `old` in `folder`, opens a 256 KB `new` beside it, and answers what
    /// ``OutputFile/share(from:at:length:to:)`` says for each `(from, to, length)`, the caller
    /// writing the bytes itself when they were not shared, as a delta does; checks `new` after.
    func share(in folder: URL, from source: URL? = nil, _ runs: [(Int, Int, Int)]) throws -> [OutputFile.Sharing] {
        let old = source ?? folder.appendingPathComponent("old")
        if source == nil { try Data(Self.bytes).write(to: old) }
        let input = try InputFile(path: old.path)
        let output = try OutputFile(path: folder.appendingPathComponent("new").path, append: false)
        try output.setLength(256 << 10)
        var expected = [UInt8](repeating: 0, count: 256 << 10)
        var answers: [OutputFile.Sharing] = []
        for (from, to, length) in runs {
            let answer = try output.share(from: input, at: Int64(from), length: Int64(length), to: Int64(to))
            if answer != .shared {
                try Self.bytes[from..<(from + length)].withUnsafeBytes { try output.write($0, at: Int64(to)) }
            }
            answers.append(answer)
            expected.replaceSubrange(to..<(to + length), with: Self.bytes[from..<(from + length)])
        }
        output.close()
        #expect(try [UInt8](Data(contentsOf: folder.appendingPathComponent("new"))) == expected)
        return answers
    }

    @Test(
        "XFS: runs on block boundaries are shared, others not here; another file system's file never; ext4 never",
        .enabled(if: LoopFileSystem.isAvailable("xfs") && LoopFileSystem.isAvailable("ext4"))
    )
    func answers() async throws {
        try await LoopFileSystem.with("xfs") { xfs in
            let answers = try share(in: xfs, [(40_960, 0, 65_536), (100, 65_536, 8_192), (0, 131_072, 131_072)])
            #expect(answers == [.shared, .notHere, .shared])
            #expect(try await LoopFileSystem.sharedExtents(of: xfs.appendingPathComponent("new")) >= 1)
            try await LoopFileSystem.with("ext4") { ext4 in
                #expect(try share(in: ext4, [(40_960, 0, 65_536)]) == [.never])
                let elsewhere = try share(in: xfs, from: ext4.appendingPathComponent("old"), [(40_960, 0, 65_536)])
                #expect(elsewhere == [.never], "blocks are never shared across file systems")
            }
        }
    }

    @Test(
        "A delta on XFS: the new copy shares the kept blocks of the old one, and is exact",
        .enabled(if: LoopFileSystem.isAvailable("xfs"))
    )
    func deltaOnXFS() async throws {
        try await PublishedFolder.with(.nginx) { server in
            let published = try await ChunkDeltaTests.Published(into: server.root)
            try await LoopFileSystem.with("xfs") { xfs in
                let local = try TemporaryFolder(existing: xfs.appendingPathComponent("device"))
                let sync = testDevice(
                    server.url.appendingPathComponent("Big.freshair/"),
                    in: local,
                    environment: ConditionEnvironment()
                )
                _ = try await sync.run()
                #expect(try await LoopFileSystem.sharedExtents(of: local.path("live/big.bin")) == 0)
                try await published.edit(regions: 20)
                let update = try await sync.run()
                #expect(update.outcome == .updated && update.bytesSaved > Int64(ChunkDeltaTests.size - (1 << 20)))
                #expect(try Data(contentsOf: local.path("live/big.bin")) == Data(published.bytes))
                // The kept runs between the 20 edits (and the old copy's, which now shares them).
                #expect(try await LoopFileSystem.sharedExtents(of: local.path("live/big.bin")) >= 20)
            }
        }
    }
}
