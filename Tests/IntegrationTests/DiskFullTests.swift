import BreezeKit
import Foundation
import FreshAir
import Testing

/// A device whose disk filled up during an update recovers by itself once a release fits.
@Suite("A full disk does not stay full: partial downloads no release needs are dropped")
struct DiskFullTests {
    /// Writes the bundle `App` under `root` holding one file of `size` bytes (sparse: zeros),
    /// with a manifest of SHA-256 digests, and moves its files' times on for nginx's validators.
    static func publish(_ name: String, size: Int64, in root: URL) async throws {
        let bundle = root.appendingPathComponent("App")
        try? FileManager.default.removeItem(at: bundle)
        try FileManager.default.createDirectory(at: bundle, withIntermediateDirectories: true)
        let file = bundle.appendingPathComponent(name)
        FileManager.default.createFile(atPath: file.path, contents: nil)
        let handle = try FileHandle(forWritingTo: file)
        try handle.truncate(atOffset: UInt64(size))
        try handle.close()
        try Data(#"[{"filename": "\#(name)"}]"#.utf8).write(to: bundle.appendingPathComponent("manifest.json"))
        _ = try await BundleHasher.run(bundle: bundle, check: false, sha256: true)
        for path in ["manifest.json", name] { try PublishedText.uploaded(bundle.appendingPathComponent(path)) }
    }

    /// A device whose store and live link are on `disk`, syncing the bundle `App` of `server`.
    static func device(on disk: URL, syncing server: PublishedFolder) -> BundleSync {
        BundleSync(
            remote: server.url.appendingPathComponent("App/"),
            store: BundleStore(
                root: disk.appendingPathComponent("store"),
                liveLink: disk.appendingPathComponent("live")
            ),
            configuration: SyncConfiguration()
        )
    }

    @Test(
        "A 100 MB release fails on a 64 MB disk; the 20 MB release after it installs",
        .enabled(if: LoopFileSystem.isAvailable("ext4"))
    )
    func stalePartialDropped() async throws {
        try await PublishedFolder.with(.nginx) { server in
            try await Self.publish("big.bin", size: 100 << 20, in: server.root)
            try await LoopFileSystem.with("ext4", size: "64M") { disk in
                let sync = Self.device(on: disk, syncing: server)
                await #expect(throws: FreshAirError.self) { try await sync.run() }
                let left = try FileManager.default.subpathsOfDirectory(atPath: disk.path)
                #expect(left.contains { $0.contains("partials/") }, "no partial kept to resume: \(left)")
                // Whatever the failed download left free, none now: the next update must first
                // make room before it can even make its staged folder.
                let filler = disk.appendingPathComponent("filler")
                FileManager.default.createFile(atPath: filler.path, contents: nil)
                let handle = try FileHandle(forWritingTo: filler)
                let block = Data(count: 64 << 10)
                while (try? handle.write(contentsOf: block)) != nil {}
                try? handle.close()

                try await Self.publish("small.bin", size: 20 << 20, in: server.root)
                _ = try await sync.run()
                let installed = disk.appendingPathComponent("live/small.bin")
                #expect((try? FileManager.default.attributesOfItem(atPath: installed.path)[.size] as? Int) == 20 << 20)
                #expect(!FileManager.default.fileExists(atPath: disk.appendingPathComponent("live/big.bin").path))
            }
        }
    }

    /// Writes the bundle `App` under `root` with one file per entry of `files`, each `size`
    /// bytes of its own byte value, so that no two share a digest.
    static func publish(_ files: [(name: String, byte: UInt8)], size: Int, in root: URL) async throws {
        let bundle = root.appendingPathComponent("App")
        try? FileManager.default.removeItem(at: bundle)
        try FileManager.default.createDirectory(at: bundle, withIntermediateDirectories: true)
        for file in files {
            try Data(repeating: file.byte, count: size).write(to: bundle.appendingPathComponent(file.name))
        }
        let list = files.map { #"{"filename": "\#($0.name)"}"# }.joined(separator: ", ")
        try Data("[\(list)]".utf8).write(to: bundle.appendingPathComponent("manifest.json"))
        _ = try await BundleHasher.run(bundle: bundle, check: false, sha256: true)
        for path in ["manifest.json"] + files.map(\.name) {
            try PublishedText.uploaded(bundle.appendingPathComponent(path))
        }
    }

    @Test(
        "What a failed update set aside fills the disk: on ENOSPC it is dropped and the update tried once more",
        .enabled(if: LoopFileSystem.isAvailable("ext4"))
    )
    func setAsideDroppedOnFullDisk() async throws {
        try await PublishedFolder.with(.nginx) { server in
            // 70 files of 1 MiB: about 55 arrive on a 64 MB disk before it is full.
            try await Self.publish((0..<70).map { ("a\($0).bin", UInt8($0)) }, size: 1 << 20, in: server.root)
            try await LoopFileSystem.with("ext4", size: "64M") { disk in
                let sync = Self.device(on: disk, syncing: server)
                await #expect(throws: FreshAirError.self) { try await sync.run() }
                // The next release shares no file with it: what the failed one fetched is of no use.
                try await Self.publish([("b.bin", 0xEE)], size: 30 << 20, in: server.root)
                let summary = try await sync.run()
                #expect(summary.outcome == .updated)
                let installed = disk.appendingPathComponent("live/b.bin")
                #expect((try? FileManager.default.attributesOfItem(atPath: installed.path)[.size] as? Int) == 30 << 20)
                #expect(!FileManager.default.fileExists(atPath: disk.appendingPathComponent("store/interrupted").path))
            }
        }
    }

}
