import Foundation
import FreshAirAsyncHTTPClient
import Testing

@testable import BreezeKit
@testable import FreshAir

@Suite(
    "Large files by changed chunks: single-range requests, the whole digest checked, a whole download when anything is off"
)
struct ChunkDeltaTests {
    static let size = 16 << 20

    /// A bundle with a 16 MB `big.bin` of random bytes and a small `notes.md`, hashed (which
    /// writes the chunk index) and published into `served`.
    final class Published {
        let author: TemporaryFolder
        let bundle: URL
        let served: URL
        var bytes: [UInt8]

        init(into root: URL) async throws {
            author = try TemporaryFolder("delta-author")
            bundle = author.path("Big.freshair")
            served = root.appendingPathComponent("Big.freshair")
            try FileManager.default.createDirectory(at: bundle, withIntermediateDirectories: true)
            let random = try FileHandle(forReadingFrom: URL(fileURLWithPath: "/dev/urandom"))
            bytes = [UInt8](try random.read(upToCount: ChunkDeltaTests.size)!)
            try random.close()
            try Data(bytes).write(to: bundle.appendingPathComponent("big.bin"))
            try Data("# Notes\n".utf8).write(to: bundle.appendingPathComponent("notes.md"))
            try Data(#"[{"filename": "big.bin"}, {"filename": "notes.md"}]"#.utf8)
                .write(to: bundle.appendingPathComponent("manifest.json"))
            try await publish()
        }

        func publish() async throws {
            _ = try await BundleHasher.run(bundle: bundle, sha256: true)
            _ = try await Publisher.run(source: bundle, to: FolderDestination(root: served))
        }

        /// Overwrites `count` scattered 10 KB regions of big.bin, then hashes and publishes
        /// (or, with `publishing: false`, only writes and hashes: a signed bundle is signed
        /// before it goes up, since publish refuses to replace a signed release with an unsigned one).
        func edit(regions count: Int, publishing: Bool = true) async throws {
            for region in 0..<count {
                let offset = (ChunkDeltaTests.size / count) * region + 5_000
                for index in offset..<(offset + 10_000) { bytes[index] = UInt8.random(in: 0...255) }
            }
            guard publishing else {
                try Data(bytes).write(to: bundle.appendingPathComponent("big.bin"))
                _ = try await BundleHasher.run(bundle: bundle, sha256: true)
                return
            }
            try await publishBytes()
        }

        /// Writes `bytes` to big.bin, then hashes and publishes.
        func publishBytes() async throws {
            try Data(bytes).write(to: bundle.appendingPathComponent("big.bin"))
            try await publish()
        }
    }

    func device(
        _ url: URL,
        in local: TemporaryFolder,
        configure: (inout SyncConfiguration) -> Void = { _ in }
    ) -> BundleSync {
        testDevice(url, in: local, environment: ConditionEnvironment(), configure: configure)
    }

    @Test(
        "20 scattered 10 KB edits of a 16 MB file: a few hundred KB in single-range requests, the file exact",
        arguments: ServerKind.allCases
    )
    func scatteredEdits(server kind: ServerKind) async throws {
        try await PublishedFolder.with(kind) { server in
            let published = try await Published(into: server.root)
            let manifest = try String(
                contentsOf: published.bundle.appendingPathComponent("manifest.json"),
                encoding: .utf8
            )
            #expect(manifest.contains("big.bin.freshair-chunks"), "breeze hash lists the index beside its file")
            let local = try TemporaryFolder("delta-device")
            let sync = device(server.url.appendingPathComponent("Big.freshair/"), in: local)
            let cold = try await sync.run()
            #expect(cold.bytesSaved == 0 && cold.bytesDownloaded > Int64(Self.size))

            try await published.edit(regions: 20)
            let before = server.requests().count
            let update = try await sync.run()
            #expect(update.outcome == .updated)
            #expect(try Data(contentsOf: local.path("live/big.bin")) == Data(published.bytes))
            // Each edit, a block more on either side at most, the 32 KB index and the manifest.
            #expect(update.bytesDownloaded < 20 * (10_240 + 8_192) + 33_000 + 8_000, "\(update.oneLine)")
            #expect(update.bytesSaved > Int64(Self.size - (1 << 20)), "\(update.oneLine)")
            let ranged = server.nginxRequests().dropFirst(before).filter { !$0.range.isEmpty && $0.range != "-" }
            if kind == .nginx {
                #expect(
                    !ranged.isEmpty && ranged.allSatisfy { $0.status == 206 && !$0.range.contains(",") },
                    "\(ranged)"
                )
                #expect(ranged.count <= 24, "\(ranged.count) range requests for 20 edits")
            }
            #expect(update.requests <= 30, "\(update.oneLine)")
            // Unchanged: one 304.
            let again = try await sync.run()
            #expect(again.notModified && again.requests == 1)
        }
    }

    @Test(
        "A server that ignores Range, a chunk damaged on the server, an index tampered with: whole downloads or a clear refusal, never a wrong file"
    )
    func fallbacks() async throws {
        try await PublishedFolder.with(.nginx) { server in
            let published = try await Published(into: server.root)
            // Through a path where nginx ignores Range: the delta gives way to a whole download.
            let local = try TemporaryFolder("delta-device")
            let sync = device(server.url.appendingPathComponent("no-range/Big.freshair/"), in: local)
            _ = try await sync.run()
            try await published.edit(regions: 5)
            let ignored = try await sync.run()
            #expect(ignored.outcome == .updated && ignored.bytesSaved == 0, "\(ignored.oneLine)")
            #expect(try Data(contentsOf: local.path("live/big.bin")) == Data(published.bytes))

            // A damaged byte inside a changed region on the server: the assembled file fails its
            // digest, the whole download fails it too, and the live version stays.
            let v2 = published.bytes
            let other = try TemporaryFolder("delta-device")
            let direct = device(server.url.appendingPathComponent("Big.freshair/"), in: other)
            _ = try await direct.run()
            try await published.edit(regions: 5)
            let servedBig = published.served.appendingPathComponent("big.bin")
            var damaged = [UInt8](try Data(contentsOf: servedBig))
            damaged[5_100] ^= 0xFF
            try Data(damaged).write(to: servedBig)
            await #expect {
                try await direct.run()
            } throws: { error in
                (error as? FreshAirError)?.code == .hashMismatch && "\(error)".contains("big.bin")
            }
            #expect(try Data(contentsOf: other.path("live/big.bin")) == Data(v2))

            // The index is covered by the manifest's digest: one changed on the server is refused.
            try await published.publish()  // restores big.bin
            let servedIndex = published.served.appendingPathComponent("big.bin.freshair-chunks")
            var index = [UInt8](try Data(contentsOf: servedIndex))
            index[index.count - 1] ^= 0x01
            try Data(index).write(to: servedIndex)
            await #expect {
                try await direct.run()
            } throws: { error in
                (error as? FreshAirError)?.code == .hashMismatch && "\(error)".contains("freshair-chunks")
            }
            #expect(try Data(contentsOf: other.path("live/big.bin")) == Data(v2))
        }
    }

    @Test("The app's policy decides: deltas turned off, or a share no plan meets, bring the changed file whole")
    func policy() async throws {
        try await PublishedFolder.with(.nginx) { server in
            let published = try await Published(into: server.root)
            var off = ChunkDeltaPolicy()
            off.isEnabled = false
            var strict = ChunkDeltaPolicy()
            strict.maximumShare = 0.001  // 16 KB of 16 MB: less than one range and its request cost
            var devices: [(local: TemporaryFolder, sync: BundleSync)] = []
            for policy in [off, strict, ChunkDeltaPolicy()] {
                let local = try TemporaryFolder("delta-policy")
                let sync = device(server.url.appendingPathComponent("Big.freshair/"), in: local) {
                    $0.chunkDeltas = policy
                }
                _ = try await sync.run()
                devices.append((local, sync))
            }
            try await published.edit(regions: 5)
            var updates: [SyncSummary] = []
            for device in devices {
                updates.append(try await device.sync.run())
                #expect(try Data(contentsOf: device.local.path("live/big.bin")) == Data(published.bytes))
            }
            for whole in updates[0...1] {
                #expect(whole.outcome == .updated && whole.bytesSaved == 0, "\(whole.oneLine)")
                #expect(whole.bytesDownloaded > Int64(Self.size), "\(whole.oneLine)")
            }
            #expect(updates[2].bytesSaved > Int64(Self.size / 2), "\(updates[2].oneLine)")
        }
    }

    @Test("A signed bundle: a chunk index changed on the server is refused, the live version stays")
    func signedIndexTampered() async throws {
        try await PublishedFolder.with(.nginx) { server in
            let published = try await Published(into: server.root)
            let key = SigningKey.generate()
            _ = try await ManifestSigner.sign(bundle: published.bundle, with: key)
            try await published.publish()
            let local = try TemporaryFolder("delta-device")
            var sync = device(server.url.appendingPathComponent("Big.freshair/"), in: local)
            sync.configuration.trustedKeys = [key.publicKey]
            _ = try await sync.run()
            let v1 = published.bytes

            try await published.edit(regions: 5, publishing: false)
            _ = try await ManifestSigner.sign(bundle: published.bundle, with: key)
            _ = try await Publisher.run(source: published.bundle, to: FolderDestination(root: published.served))
            // An index pointing at other bytes: its digest is not the one the signed manifest lists.
            let servedIndex = published.served.appendingPathComponent("big.bin.freshair-chunks")
            var index = [UInt8](try Data(contentsOf: servedIndex))
            index[index.count - 3] ^= 0x40
            try PublishedFile.write(Data(index), to: servedIndex)
            await #expect {
                try await sync.run()
            } throws: { error in
                (error as? FreshAirError)?.code == .hashMismatch && "\(error)".contains("big.bin.freshair-chunks")
            }
            #expect(try Data(contentsOf: local.path("live/big.bin")) == Data(v1))
        }
    }

    @Test("A server that lies about kept bytes inside a merged range: the device's own copy of them wins")
    func keptBytesInsideARange() async throws {
        try await PublishedFolder.with(.nginx) { server in
            let published = try await Published(into: server.root)
            let local = try TemporaryFolder("delta-device")
            let sync = device(server.url.appendingPathComponent("Big.freshair/"), in: local)
            _ = try await sync.run()
            // Blocks 0 and 2 (4 KB each) change; block 1 between them is kept, yet fetched too,
            // the gap being under the merge gap. The server's block 1 is zeros: the range writes
            // them, and the device's copy must land over them before the pass hashes the block,
            // or the file that goes live is not the one whose digest was checked. At the start
            // of the file, the pass would reach block 1 long before the range comes back.
            for index in Array(0..<4_096) + Array(8_192..<12_288) { published.bytes[index] ^= 0x5A }
            try await published.publishBytes()
            let servedBig = published.served.appendingPathComponent("big.bin")
            var lying = [UInt8](try Data(contentsOf: servedBig))
            lying.replaceSubrange(4_096..<8_192, with: repeatElement(0, count: 4_096))
            try Data(lying).write(to: servedBig)
            let before = server.nginxRequests().count
            let update = try await sync.run()
            let ranges = server.nginxRequests().dropFirst(before).filter { $0.status == 206 }.map(\.range)
            #expect(ranges.count == 1 && ranges.first?.contains("0-12287") == true, "\(ranges)")
            #expect(update.outcome == .updated && update.bytesSaved > Int64(Self.size / 2), "\(update.oneLine)")
            #expect(try Data(contentsOf: local.path("live/big.bin")) == Data(published.bytes))
        }
    }

    @Test("A delta cut off part-way resumes: the next run fetches only the ranges it lacks")
    func resumes() async throws {
        // The network goes after 8 ranges: the sync fails, the fetched ranges stay recorded.
        try await cutDeltaResumes(folder: "delta-device", cutBy: RangesThenCut(allowed: 8))
    }

    @Test("A range cut in the middle of its body: the bytes it wrote are not trusted, the next run fetches it again")
    func rangeCutMidBody() async throws {
        // After 8 whole ranges, each range delivers its first chunk with every bit flipped,
        // then the connection drops: those bytes are written into the partial file. Exact by
        // ranges alone: a garbled piece taken as landed would fail the file's digest and bring
        // the file whole.
        let resumed = try await cutDeltaResumes(
            folder: "delta-cut-body",
            cutBy: RangesThenCut(allowed: 8, then: .garbage)
        )
        #expect(resumed.bytesDownloaded < 4 << 20, "\(resumed.oneLine)")
    }

    /// Syncs a device, edits 20 regions, runs a delta through `transport` (which cuts it after
    /// some ranges), then syncs again: the old version stays live meanwhile, and the second run
    /// fetches exactly the ranges the first did not record.
    @discardableResult
    func cutDeltaResumes(folder: String, cutBy transport: some HTTPTransport) async throws -> SyncSummary {
        try await PublishedFolder.with(.nginx) { server in
            let published = try await Published(into: server.root)
            let local = try TemporaryFolder(folder)
            let url = server.url.appendingPathComponent("Big.freshair/")
            _ = try await device(url, in: local).run()
            try await published.edit(regions: 20)

            let plain = device(url, in: local)
            let cut = BundleSync(
                remote: url,
                store: plain.store,
                environment: plain.environment,
                transport: transport,
                configuration: plain.configuration
            )
            await #expect(throws: (any Error).self) { try await cut.run() }
            #expect(try Data(contentsOf: local.path("live/big.bin")) != Data(published.bytes), "the old version stays")
            let kept = try rangesRecorded(byCutDeltaIn: local)
            #expect(kept > 0 && kept <= 8)

            let before = server.nginxRequests().count
            let resumed = try await device(url, in: local).run()
            let ranges = server.nginxRequests().dropFirst(before).filter { $0.status == 206 }
            #expect(resumed.outcome == .updated)
            #expect(try Data(contentsOf: local.path("live/big.bin")) == Data(published.bytes))
            #expect(ranges.count == 20 - kept, "\(ranges.count) ranges fetched after \(kept) of 20 were kept")
            return resumed
        }
    }
}

/// A signed `.tar` package: the device rebuilds the package it installed from its files (its
/// headers kept in `versions/<id>.tar-layout`) and fetches only the chunks it lacks.
@Suite("A signed .tar package by changed chunks")
struct PackageChunkDeltaTests {
    let key = SigningKey.generate()
    /// Where the publisher makes and signs the package.
    let author: TemporaryFolder

    init() throws { author = try TemporaryFolder("tar-author") }

    /// `content.tar` made by GNU tar from `source`, signed (which writes its chunk index
    /// beside it) and published with `breeze publish` (package, index, then the `.sig`).
    func packAndSign(_ source: URL, in server: PublishedFolder) async throws -> PackageSignature {
        _ = try await shell("tar -cf content.tar -C \(source.path) .", in: author.url)
        let package = author.path("content.tar")
        _ = try PackageSigner.sign(package: package, with: [key])
        let published = try await Publisher.run(source: package, to: FolderDestination(root: server.root))
        #expect(published.uploaded.last == "content.tar.sig", "the signed document goes last: \(published.uploaded)")
        let signature = server.root.appendingPathComponent("content.tar.sig")
        return try PackageSignature(data: Data(contentsOf: signature), source: signature.path)
    }

    func updater(_ server: PublishedFolder, _ local: TemporaryFolder) -> PackageUpdater {
        signedPackageDevice(server.url.appendingPathComponent("content.tar"), trusting: key, in: local)
    }

    /// What a package holds: `big.bin`, 16 MB of random bytes, and 40 small notes.
    func makeSource() throws -> (folder: TemporaryFolder, big: [UInt8]) {
        let source = try TemporaryFolder("tar-source")
        let random = try FileHandle(forReadingFrom: URL(fileURLWithPath: "/dev/urandom"))
        let big = [UInt8](try random.read(upToCount: 16 << 20)!)
        try random.close()
        try Data(big).write(to: source.path("big.bin"))
        try FileManager.default.createDirectory(at: source.path("text"), withIntermediateDirectories: true)
        for number in 0..<40 {
            try Data("Note \(number)\n".utf8).write(to: source.path("text/\(number).md"))
        }
        return (source, big)
    }

    /// Overwrites `count` scattered 10 KB regions of `big` and writes it into `source`.
    func edit(_ big: inout [UInt8], regions count: Int, in source: TemporaryFolder) throws {
        for region in 0..<count {
            let offset = big.count / count * region + 3_000
            for index in offset..<(offset + 10_000) { big[index] = UInt8.random(in: 0...255) }
        }
        try Data(big).write(to: source.path("big.bin"))
    }

    @Test(
        "10 edits of a 16 MB file, a changed and an added small file: a few hundred KB in single-range requests, every file exact; a tampered index refused"
    )
    func signedTarPackage() async throws {
        try await PublishedFolder.with(.nginx) { server in
            var (source, big) = try makeSource()
            let first = try await packAndSign(source.url, in: server)
            #expect(first.chunkIndex != nil, "the signed document names the chunk index")

            let local = try TemporaryFolder("tar-device")
            let device = updater(server, local)
            let cold = try await device.update()
            #expect(cold.outcome == .downloaded && cold.bytesSaved == 0)
            let id = try #require(cold.version)
            #expect(FileManager.default.fileExists(atPath: local.path("store/versions/\(id).tar-layout").path))

            try edit(&big, regions: 10, in: source)
            try Data("Note 7, revised\n".utf8).write(to: source.path("text/7.md"))
            try Data("New\n".utf8).write(to: source.path("text/new.md"))
            _ = try await packAndSign(source.url, in: server)
            let before = server.nginxRequests().count
            let update = try await device.update()
            #expect(update.outcome == .downloaded)
            #expect(update.bytesSaved > 15 << 20 && update.bytesDownloaded < 1 << 20, "\(update.oneLine)")
            #expect(try Data(contentsOf: local.path("live/big.bin")) == Data(big))
            #expect(try String(contentsOf: local.path("live/text/7.md"), encoding: .utf8) == "Note 7, revised\n")
            #expect(try String(contentsOf: local.path("live/text/new.md"), encoding: .utf8) == "New\n")
            #expect(try String(contentsOf: local.path("live/text/39.md"), encoding: .utf8) == "Note 39\n")
            let requests = server.nginxRequests().dropFirst(before)
            let ranged = requests.filter { !$0.range.isEmpty && $0.range != "-" }
            #expect(!ranged.isEmpty && ranged.allSatisfy { $0.status == 206 && !$0.range.contains(",") }, "\(ranged)")
            #expect(
                !requests.contains { $0.path.hasSuffix("content.tar") && $0.status == 200 },
                "never the whole package"
            )
            #expect(try BundleStore(root: local.path("store"), liveLink: local.path("live")).verify()?.isIntact == true)
            // The layout recorded while the package unpacked as it was rebuilt is the package's own
            // (its partial file holds only the fetched ranges: nothing could be read back from it).
            let rebuilt = try #require(update.version)
            let recorded = try TarLayout(data: Data(contentsOf: local.path("store/versions/\(rebuilt).tar-layout")))
            #expect(recorded == (try TarLayout.scan(tarAt: author.path("content.tar").path)))

            // The index is covered by the signed document: one changed on the server is refused.
            let v2 = big
            for index in 100_000..<110_000 { big[index] = 0 }
            try Data(big).write(to: source.path("big.bin"))
            _ = try await packAndSign(source.url, in: server)
            let servedIndex = server.root.appendingPathComponent("content.tar.freshair-chunks")
            var index = [UInt8](try Data(contentsOf: servedIndex))
            index[index.count - 2] ^= 0x10
            try PublishedFile.write(Data(index), to: servedIndex)
            await #expect {
                try await device.update()
            } throws: { error in
                (error as? FreshAirError)?.code == .hashMismatch && "\(error)".contains("content.tar.freshair-chunks")
            }
            #expect(try Data(contentsOf: local.path("live/big.bin")) == Data(v2))
        }
    }

    @Test(
        "A range corrupted on the way while the package unpacks as it is rebuilt: what it unpacked is thrown away, the package comes whole, every file exact"
    )
    func corruptedRange() async throws {
        try await PublishedFolder.with(.nginx) { server in
            var (source, big) = try makeSource()
            _ = try await packAndSign(source.url, in: server)
            let proxy = try FaultProxy(upstream: server.url)
            defer { proxy.stop() }
            let local = try TemporaryFolder("tar-device")
            let device = signedPackageDevice(proxy.url.appendingPathComponent("content.tar"), trusting: key, in: local)
            _ = try await device.update()
            try edit(&big, regions: 5, in: source)
            try Data("Note 3, revised\n".utf8).write(to: source.path("text/3.md"))
            _ = try await packAndSign(source.url, in: server)

            try proxy.rules([["path": "/content.tar", "fault": "corrupt", "offset": 100, "times": 1]])
            let summary = try await device.run()
            let update = try #require(summary.package)
            #expect(
                update.outcome == .downloaded && update.bytesSaved == 0 && summary.bytesWasted > 0,
                "\(summary.oneLine)"
            )
            let answers = proxy.answers().filter { $0.path == "/content.tar" }.dropFirst()  // the first install's
            #expect(answers.first?.fault == "corrupt" && answers.first?.range != nil, "a range was corrupted")
            #expect(answers.last?.range == nil && answers.last?.status == 200, "then the whole package came")
            #expect(try Data(contentsOf: local.path("live/big.bin")) == Data(big))
            #expect(try String(contentsOf: local.path("live/text/3.md"), encoding: .utf8) == "Note 3, revised\n")
            #expect(try BundleStore(root: local.path("store"), liveLink: local.path("live")).verify()?.isIntact == true)
        }
    }

    @Test(
        "A package delta cut off part-way resumes: the next update fetches only the ranges it lacks, every file exact"
    )
    func resumes() async throws {
        try await PublishedFolder.with(.nginx) { server in
            var (source, big) = try makeSource()
            _ = try await packAndSign(source.url, in: server)
            let local = try TemporaryFolder("tar-device")
            _ = try await updater(server, local).update()
            try edit(&big, regions: 20, in: source)
            _ = try await packAndSign(source.url, in: server)

            // The network goes after 8 ranges; the package had begun to unpack.
            let url = server.url.appendingPathComponent("content.tar")
            let cut = signedPackageDevice(url, trusting: key, in: local, transport: RangesThenCut(allowed: 8))
            await #expect(throws: (any Error).self) { try await cut.update() }
            let kept = try rangesRecorded(byCutDeltaIn: local)
            #expect(kept > 0 && kept <= 8)

            let before = server.nginxRequests().count
            let resumed = try await updater(server, local).update()
            let ranges = server.nginxRequests().dropFirst(before).filter { $0.status == 206 }
            #expect(resumed.outcome == .downloaded && resumed.bytesSaved > 15 << 20, "\(resumed.oneLine)")
            #expect(ranges.count == 20 - kept, "\(ranges.count) ranges fetched after \(kept) of 20 were kept")
            #expect(try Data(contentsOf: local.path("live/big.bin")) == Data(big))
            #expect(try String(contentsOf: local.path("live/text/39.md"), encoding: .utf8) == "Note 39\n")
            #expect(try BundleStore(root: local.path("store"), liveLink: local.path("live")).verify()?.isIntact == true)
        }
    }

    @Test("A server that ignores Range: the package comes whole, and the index fetched for nothing is reported wasted")
    func ignoresRange() async throws {
        try await PublishedFolder.with(.nginx) { server in
            let source = try TemporaryFolder("tar-source")
            var big = [UInt8](repeating: 7, count: 10 << 20)
            try Data(big).write(to: source.path("big.bin"))
            _ = try await packAndSign(source.url, in: server)
            let local = try TemporaryFolder("tar-device")
            let device = signedPackageDevice(
                server.url.appendingPathComponent("no-range/content.tar"),
                trusting: key,
                in: local
            )
            _ = try await device.update()
            for index in 5_000_000..<5_001_000 { big[index] = 1 }
            try Data(big).write(to: source.path("big.bin"))
            let signed = try await packAndSign(source.url, in: server)
            let summary = try await device.run()
            let update = try #require(summary.package)
            #expect(update.outcome == .downloaded && update.bytesSaved == 0, "\(summary.oneLine)")
            #expect(summary.bytesWasted >= signed.chunkIndex!.size, "\(summary.bytesWasted) wasted")
            #expect(try Data(contentsOf: local.path("live/big.bin")) == Data(big))
        }
    }

    @Test("An app that ships the package: its first update from the server is by chunks of the bundled copy")
    func fromBundledCopy() async throws {
        try await PublishedFolder.with(.nginx) { server in
            let source = try TemporaryFolder("tar-source")
            var big = [UInt8](repeating: 0, count: 12 << 20)
            for index in stride(from: 0, to: big.count, by: 3) { big[index] = UInt8(truncatingIfNeeded: index &* 31) }
            try Data(big).write(to: source.path("big.bin"))
            _ = try await packAndSign(source.url, in: server)
            // The app's copy is the published package of the day it shipped.
            let app = try TemporaryFolder("app")
            try FileManager.default.copyItem(
                at: server.root.appendingPathComponent("content.tar"),
                to: app.path("content.tar")
            )

            for index in 6_000_000..<6_010_000 { big[index] = 0xA5 }
            try Data(big).write(to: source.path("big.bin"))
            _ = try await packAndSign(source.url, in: server)
            let local = try TemporaryFolder("tar-device")
            var device = updater(server, local)
            device.bundledPackage = app.path("content.tar")
            let first = try await device.update()
            #expect(first.installedBundled && first.outcome == .downloaded, "\(first.oneLine)")
            #expect(first.bytesSaved > 11 << 20 && first.bytesDownloaded < 256 << 10, "\(first.oneLine)")
            #expect(try Data(contentsOf: local.path("live/big.bin")) == Data(big))
        }
    }
}

/// Passes requests to the shared transport until `allowed` range requests have gone through;
/// after that, each request fails as a dropped connection would (`RangesThenCut.failure`), or
/// each range's body is its first chunk with every bit flipped, then a dropped connection
/// (`.garbage`).
private final class RangesThenCut: HTTPTransport, @unchecked Sendable {
    enum Cut { case failure, garbage }

    private let lock = NSLock()
    private var ranges = 0
    let allowed: Int
    let cut: Cut

    init(allowed: Int, then cut: Cut = .failure) {
        self.allowed = allowed
        self.cut = cut
    }

    func get<Result: Sendable>(
        _ request: HTTPGetRequest,
        handle: (HTTPResponseHead, ResponseBody) async throws -> Result
    ) async throws -> Result {
        let isRange = request.headers.contains { $0.name == "Range" }
        let isCut: Bool = lock.withLock {
            if isRange { ranges += 1 }
            return isRange && ranges > allowed
        }
        guard isCut else { return try await testTransport.get(request, handle: handle) }
        guard cut == .garbage else {
            throw TransportError(kind: .interrupted, url: request.url, detail: "the test cut the network")
        }
        return try await testTransport.get(request) { head, body in
            var chunks = body.makeAsyncIterator()
            var sent = false
            let garbled = ResponseBody {
                guard !sent, let first = try await chunks.next() else {
                    throw TransportError(kind: .interrupted, url: request.url, detail: "the test cut the body")
                }
                sent = true
                return first.bytes.map { ~$0 }
            }
            return try await handle(head, garbled)
        }
    }
}

/// How many ranges a delta that was cut off left recorded in `local`'s store: its journal
/// (`<partial>.delta`) holds the file's digest, then one line per range that landed (those in
/// flight were cut).
func rangesRecorded(byCutDeltaIn local: TemporaryFolder) throws -> Int {
    let partials = try FileManager.default.contentsOfDirectory(atPath: local.path("store/partials").path)
    let journal = try #require(partials.first { $0.hasSuffix(".delta") }, "\(partials)")
    return try String(contentsOf: local.path("store/partials/\(journal)"), encoding: .utf8)
        .split(separator: "\n").count - 1
}
