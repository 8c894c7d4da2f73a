import BreezeKit
import Foundation
import FreshAir
import Synchronization
import Testing

/// A root manifest's pack (`breeze generate --pack`): a first sync's small files in one request,
/// each still checked against its entry; a pack that lies, breaks or is missing costs requests,
/// never content.
@Suite("A pack of small files")
struct FilePackTests {
    /// 40 small files (two of them the same bytes, at two paths) and one too large for a pack.
    static func writeBundle(in server: PublishedFolder) throws -> URL {
        let bundle = server.root.appendingPathComponent("packed")
        for index in 0..<40 {
            let text =
                index == 39 ? "file 0\n" : "file \(index)\n" + String(repeating: "\(index % 7)", count: 100 * index)
            try PublishedFile.write(Data(text.utf8), to: bundle.appendingPathComponent("d\(index % 4)/f\(index).txt"))
        }
        try PublishedFile.write(Data(repeating: 7, count: 300_000), to: bundle.appendingPathComponent("large.bin"))
        return bundle
    }

    /// Generates the manifest and its pack; answers the pack's name.
    static func generate(_ bundle: URL) async throws -> String {
        _ = try await ManifestGenerator.run(bundle: bundle, sha256: true)
        let report = try FilePackWriter.run(bundle: bundle)
        // A rewritten manifest must look new to the server, which dates it to the second.
        let manifest = bundle.appendingPathComponent("manifest.json")
        try FileManager.default.setAttributes(
            [.modificationDate: Date().addingTimeInterval(Double(Int.random(in: 2...1000)))],
            ofItemAtPath: manifest.path
        )
        return try #require(report.path)
    }

    /// The published files that are content (not the manifest, not the pack), by path.
    static func content(of bundle: URL) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for file in try BundleFolder.files(in: bundle)
        where file.path != "manifest.json" && !file.path.hasSuffix(FilePack.suffix) {
            files[file.path] = try Data(contentsOf: bundle.appendingPathComponent(file.path))
        }
        return files
    }

    static func expectLive(_ client: ExampleClient, holds bundle: URL) throws {
        let expected = try content(of: bundle)
        #expect(client.liveFiles() == (Array(expected.keys) + ["manifest.json"]).sorted())
        for (path, data) in expected {
            #expect(try Data(contentsOf: client.live.appendingPathComponent(path)) == data, "\(path)")
        }
        #expect(try client.sync.store.verify()?.isIntact == true)
    }

    @Test(
        "A first sync takes the small files from the pack, in one request; an update of two files fetches those two",
        arguments: ServerKind.allCases
    )
    func firstSyncTakesThePack(kind: ServerKind) async throws {
        try await PublishedFolder.with(kind) { server in
            let bundle = try Self.writeBundle(in: server)
            let pack = try await Self.generate(bundle)
            let client = try ExampleClient(published: server, path: "packed")
            let before = server.requests().count
            let events = Mutex<[SyncEvent]>([])
            let first = try await client.sync.run { event in events.withLock { $0.append(event) } }
            #expect(first.outcome == .updated)
            // The manifest, the pack, and the file too large for it.
            #expect(first.requests == 3)
            let paths = server.requests().dropFirst(before).map(\.path).sorted()
            #expect(paths == ["/packed/\(pack)", "/packed/large.bin", "/packed/manifest.json"])
            #expect(first.filesDownloaded == 42)
            #expect(first.filesFromPack == 40)
            #expect(first.packProblem == nil)
            #expect(first.oneLine.contains("40 from the pack"))
            // Progress counts the files' bytes, not the pack's headers: it ends at the total.
            let progress = events.withLock { $0 }.compactMap { if case .progress(let p) = $0 { p } else { nil } }
            #expect(progress.allSatisfy { $0.bytesReceived <= $0.bytesExpected ?? 0 })
            #expect(
                progress.last.map { $0.bytesReceived == $0.bytesExpected && $0.filesCompleted == $0.filesTotal } == true
            )
            try Self.expectLive(client, holds: bundle)
            #expect(try client.sync.store.liveRecord()?.fileCount == 42)

            try PublishedFile.write(Data("changed 1\n".utf8), to: bundle.appendingPathComponent("d1/f1.txt"))
            try PublishedFile.write(Data("changed 2\n".utf8), to: bundle.appendingPathComponent("d2/f2.txt"))
            let newPack = try await Self.generate(bundle)
            #expect(newPack != pack)
            #expect(!FileManager.default.fileExists(atPath: bundle.appendingPathComponent(pack).path))
            let update = try await client.sync.run()
            #expect(update.downloaded.sorted() == ["d1/f1.txt", "d2/f2.txt", "manifest.json"])
            #expect(update.requests == 3)
            #expect(update.filesFromPack == 0)
            try Self.expectLive(client, holds: bundle)
        }
    }

    @Test("A first sync whose conditions leave out the larger half of the pack's files fetches the rest alone")
    func conditionsLeaveOutMostOfIt() async throws {
        try await PublishedFolder.with(.nginx) { server in
            let bundle = try Self.writeBundle(in: server)
            let pack = try await Self.generate(bundle)
            // Files 20 to 38 (the largest small ones) are for a later app version.
            let url = bundle.appendingPathComponent("manifest.json")
            var json = try JSONReader.parse(Data(contentsOf: url))
            let later = (20..<39).map { "d\($0 % 4)/f\($0).txt" }
            let files = try #require(json["files"]?.array).map { entry -> JSONValue in
                guard let name = entry["filename"]?.string, later.contains(name) else { return entry }
                var entry = entry
                entry.set("condition", .string("appVersion >= 5.0"))
                return entry
            }
            json.set("files", .array(files))
            try PublishedFile.write(Data(json.serializedBytes(indent: 2)), to: url)

            let client = try ExampleClient(published: server, path: "packed")
            let summary = try await client.sync.run()
            #expect(!server.requests().map(\.path).contains("/packed/\(pack)"))
            // The manifest, 21 small files (two of them the same bytes, fetched once), the large one.
            #expect(summary.requests == 1 + 20 + 1)
            #expect(client.liveFiles().count == 1 + 21 + 1)
        }
    }

    @Test(
        "A pack that is shorter than its manifest says, cut mid-file or missing still gives every file its own bytes",
        arguments: ServerKind.allCases
    )
    func brokenPacks(kind: ServerKind) async throws {
        try await PublishedFolder.with(kind) { server in
            let bundle = try Self.writeBundle(in: server)
            let pack = bundle.appendingPathComponent(try await Self.generate(bundle))
            let whole = try Data(contentsOf: pack)
            // The manifest, the pack (or its 404), and the 40 distinct files each alone.
            let everyFileAlone = 2 + 40

            // Shorter than the manifest says: refused before a byte is used.
            try whole.prefix(whole.count / 2).write(to: pack)
            let short = try ExampleClient(published: server, path: "packed")
            let shortSummary = try await short.sync.run()
            #expect(shortSummary.requests == everyFileAlone)
            #expect(shortSummary.packProblem != nil)
            #expect(shortSummary.oneLine.contains(". The pack failed, and "), "\(shortSummary.oneLine)")
            try Self.expectLive(short, holds: bundle)

            // Cut in the middle of a file, with a manifest that says so: the files before the
            // cut count, the rest come alone.
            try Self.setPackSize(Int64(whole.count / 2), in: bundle)
            let cut = try ExampleClient(published: server, path: "packed")
            let cutSummary = try await cut.sync.run()
            #expect(cutSummary.requests > 3 && cutSummary.requests < everyFileAlone)
            #expect(cutSummary.packProblem != nil && cutSummary.filesFromPack > 0)
            try Self.expectLive(cut, holds: bundle)

            // Missing: a 404.
            try FileManager.default.removeItem(at: pack)
            let missing = try ExampleClient(published: server, path: "packed")
            let missingSummary = try await missing.sync.run()
            #expect(missingSummary.requests == everyFileAlone)
            #expect(missingSummary.packProblem?.contains("404") == true, "\(missingSummary.packProblem ?? "nil")")
            try Self.expectLive(missing, holds: bundle)
        }
    }

    @Test(
        "A hostile pack (other bytes, a link, the same path twice, a path out of the bundle) writes nothing outside and costs only requests",
        arguments: ServerKind.allCases
    )
    func hostilePack(kind: ServerKind) async throws {
        try await PublishedFolder.with(kind) { server in
            let bundle = try Self.writeBundle(in: server)
            let packURL = bundle.appendingPathComponent(try await Self.generate(bundle))
            let work = server.root.appendingPathComponent("hostile/inner")
            let lying = "file 5\n" + String(repeating: "X", count: 500)  // f5's size, other bytes
            try PublishedFile.write(Data(lying.utf8), to: work.appendingPathComponent("d1/f5.txt"))
            try PublishedFile.write(
                try Data(contentsOf: bundle.appendingPathComponent("d1/f9.txt")),
                to: work.appendingPathComponent("d1/f9.txt")
            )
            try FileManager.default.createDirectory(
                at: work.appendingPathComponent("d2"),
                withIntermediateDirectories: true
            )
            try FileManager.default.createSymbolicLink(
                atPath: work.appendingPathComponent("d2/f6.txt").path,
                withDestinationPath: "/etc/passwd"
            )
            // f13 twice: its true bytes, then others of its size. Once a file has arrived checked, a
            // later copy of its path is not written: checked bytes are never replaced.
            let f13 = try Data(contentsOf: bundle.appendingPathComponent("d1/f13.txt"))
            try PublishedFile.write(f13, to: work.appendingPathComponent("d1/f13.txt"))
            try PublishedFile.write(
                Data(repeating: UInt8(ascii: "Y"), count: f13.count),
                to: work.appendingPathComponent("f13-lie")
            )
            try PublishedFile.write(Data("escaped\n".utf8), to: work.appendingPathComponent("../escape.txt"))
            // Made by GNU tar: d0's true files (one marked executable); a lie, a link, f9
            // twice and f13 twice (true, then a lie); a name that climbs out (the pack is read
            // no further); then d3's true files, never reached.
            try FileManager.default.setAttributes(
                [.posixPermissions: 0o755],
                ofItemAtPath: bundle.appendingPathComponent("d0/f4.txt").path
            )
            _ = try await shell(
                "tar -cf pack.tar -C \(bundle.path) d0 && tar -rf pack.tar d1/f5.txt d2/f6.txt d1/f9.txt d1/f9.txt d1/f13.txt && "
                    + "cp f13-lie d1/f13.txt && tar -rf pack.tar d1/f13.txt && "
                    + "tar -rPf pack.tar ../escape.txt && tar -rf pack.tar -C \(bundle.path) d3",
                in: work
            )
            let hostile = try Data(contentsOf: work.appendingPathComponent("pack.tar"))
            try hostile.write(to: packURL)
            try Self.setPackSize(Int64(hostile.count), in: bundle)

            let client = try ExampleClient(published: server, path: "packed")
            let summary = try await client.sync.run()
            #expect(summary.outcome == .updated)
            try Self.expectLive(client, holds: bundle)
            for outside in ["escape.txt", "store/escape.txt", "live/../escape.txt"] {
                #expect(!FileManager.default.fileExists(atPath: client.local.path(outside).path))
            }
            // d0's ten files, f9 and f13 came from the pack (and d3/f39, f0's bytes); the other 28 alone.
            #expect(summary.requests == 2 + 40 - 12)
            #expect(summary.filesFromPack == 13)
            #expect(summary.packProblem?.contains("escape.txt") == true, "\(summary.packProblem ?? "nil")")
            // Written as a download is: a mode in the pack is not the manifest's.
            let mode =
                try FileManager.default.attributesOfItem(
                    atPath: client.live.appendingPathComponent("d0/f4.txt").path
                )[.posixPermissions] as? Int
            #expect(mode.map { $0 & 0o111 } == 0)
        }
    }

    @Test("In the object layout the pack goes up beside the root, before it, and stays while named")
    func objectLayout() async throws {
        try await PublishedFolder.with(.nginx) { server in
            let author = try TemporaryFolder("pack-author")
            let bundle = try Self.writeBundle(in: server).path
            try FileManager.default.moveItem(atPath: bundle, toPath: author.path("packed").path)
            let source = author.path("packed")
            let pack = try await Self.generate(source)
            let destination = FolderDestination(root: server.root.appendingPathComponent("apps/packed"))
            let layout = ContentLayout.objects(at: "../objects/")
            let first = try await Publisher.run(source: source, to: destination, layout: layout, delete: true)
            #expect(first.uploaded.suffix(2) == [pack, "manifest.json"])
            let client = try ExampleClient(published: server, path: "apps/packed")
            let synced = try await client.sync.run()
            #expect(synced.requests == 3)  // the root, the pack, the large file's object
            try Self.expectLive(client, holds: source)
            // Published again, with --delete: nothing goes up, the pack stays.
            let again = try await Publisher.run(source: source, to: destination, layout: layout, delete: true)
            #expect(again.uploaded.isEmpty && again.deleted.isEmpty)
            #expect(FileManager.default.fileExists(atPath: destination.root.appendingPathComponent(pack).path))
        }
    }

    /// Says `size` for the pack in the root manifest, as a publisher of that pack would.
    static func setPackSize(_ size: Int64, in bundle: URL) throws {
        let url = bundle.appendingPathComponent("manifest.json")
        var json = try JSONReader.parse(Data(contentsOf: url))
        var pack = try #require(json[FilePack.member])
        pack.set("size", .number(String(size)))
        json.set(FilePack.member, pack)
        try PublishedFile.write(Data(json.serializedBytes(indent: 2)), to: url)
    }
}
