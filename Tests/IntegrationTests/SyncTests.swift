import BreezeKit
import Foundation
import FreshAir
import Synchronization
import Testing

@Suite("Sync against real servers")
struct SyncTests {
    @Test("Embed1 for appVersion 0.9, Embed2 for 1.1", arguments: ServerKind.allCases)
    func selectsTheChildForTheAppVersion(kind: ServerKind) async throws {
        try await PublishedFolder.with(kind) { server in
            try ExampleBundle.write(in: server.root)

            let old = try ExampleClient(published: server, appVersion: "0.9")
            let first = try await old.sync.run()
            #expect(first.outcome == .updated)
            #expect(
                old.liveFiles() == [
                    "Embed1.freshair/bar.md", "Embed1.freshair/foo.md", "Embed1.freshair/manifest.json",
                    "manifest.json",
                ]
            )
            #expect(
                old.live.appendingPathComponent("Embed1.freshair/bar.md").text
                    == ExampleBundle.contents["Embed1.freshair/bar.md"]
            )

            let new = try ExampleClient(published: server, appVersion: "1.1")
            try await new.sync.run()
            #expect(
                new.liveFiles() == [
                    "Embed2.freshair/baz.md", "Embed2.freshair/manifest.json", "Embed2.freshair/zab.md",
                    "manifest.json",
                ]
            )
        }
    }

    @Test(
        "The version's record: each file as it landed, whether its entry gave a digest, a size, neither, or the same bytes as another",
        arguments: ServerKind.allCases
    )
    func recordOfWhatLanded(kind: ServerKind) async throws {
        try await PublishedFolder.with(kind) { server in
            let files = [
                "plain.txt": "no digest, no size\n", "one.txt": "twice\n", "two.txt": "twice\n", "old.txt": "sha-1\n",
            ]
            let bundle = server.root.appendingPathComponent("records")
            for (path, text) in files {
                try PublishedFile.write(Data(text.utf8), to: bundle.appendingPathComponent(path))
            }
            func digest(_ path: String, _ algorithm: ContentHash.Algorithm = .sha256) -> String {
                ContentHash.of(Array(files[path]!.utf8), using: algorithm).hex
            }
            let manifest = """
                [{"filename": "plain.txt"},
                 {"filename": "one.txt", "sha": "\(digest("one.txt"))", "size": 6},
                 {"filename": "two.txt", "sha": "\(digest("two.txt"))"},
                 {"filename": "old.txt", "sha": "\(digest("old.txt", .sha1))"}]
                """
            try PublishedFile.write(Data(manifest.utf8), to: bundle.appendingPathComponent("manifest.json"))
            let client = try ExampleClient(published: server, path: "records")
            let summary = try await client.sync.run()
            #expect(summary.outcome == .updated)
            let record = try #require(try client.sync.store.liveRecord())
            // Without a digest in its entry, a file is recorded with the one it arrived with.
            #expect(
                record.file(at: "plain.txt")
                    == FileRecord(hash: .of(Array(files["plain.txt"]!.utf8), using: .sha256), size: 19)
            )
            // The same bytes at two paths: fetched once, both recorded, the size as it arrived.
            #expect(record.file(at: "one.txt") == FileRecord(hash: ContentHash(hex: digest("one.txt"))!, size: 6))
            #expect(record.file(at: "two.txt") == FileRecord(hash: ContentHash(hex: digest("two.txt"))!, size: 6))
            #expect(
                record.file(at: "old.txt") == FileRecord(hash: ContentHash(hex: digest("old.txt", .sha1))!, size: 6)
            )
            #expect(record.fileCount == 5)
            #expect(try client.sync.store.verify()?.isIntact == true)
            // The next check keeps every file: each record matches its entry.
            try PublishedFile.write(Data((manifest + " ").utf8), to: bundle.appendingPathComponent("manifest.json"))
            let again = try await client.sync.run()
            #expect(again.downloaded == ["manifest.json"])
        }
    }

    @Test("An unchanged check is one request answered 304", arguments: ServerKind.allCases)
    func unchangedCheckIsOne304(kind: ServerKind) async throws {
        try await PublishedFolder.with(kind) { server in
            try ExampleBundle.write(in: server.root)
            let client = try ExampleClient(published: server)
            try await client.sync.run()
            let before = server.requests().count

            let check = try await client.sync.run()
            let seen = Array(server.requests().dropFirst(before))
            #expect(check.outcome == .alreadyCurrent)
            #expect(check.notModified)
            #expect(check.requests == 1)
            #expect(check.bytesDownloaded == 0)
            #expect(seen.count == 1)
            #expect(seen.first?.status == 304)
            #expect(seen.first?.path == "/\(ExampleBundle.name)/manifest.json")
            if kind == .nginx { #expect(server.nginxRequests().last?.bodyBytes == 0) }

            // A new environment that selects the same files: still one request and nothing
            // installed, and the record now names it, so the next 304 is final too.
            let plannedFor = try client.sync.store.liveRecord()?.plannedFor
            var moved = client.sync
            moved.environment["channel"] = "beta"
            let recheck = try await moved.run()
            #expect(recheck.outcome == .alreadyCurrent && recheck.requests == 1)
            let record = try moved.store.liveRecord()
            #expect(plannedFor != nil && record?.plannedFor != plannedFor)
            #expect(record?.id == check.version)
        }
    }

    @Test("One changed file: that file is the only content downloaded", arguments: ServerKind.allCases)
    func oneChangedFileMovesAlone(kind: ServerKind) async throws {
        try await PublishedFolder.with(kind) { server in
            try ExampleBundle.write(in: server.root)
            let client = try ExampleClient(published: server)
            let first = try await client.sync.run()
            let fooBefore = try FileManager.default.attributesOfItem(
                atPath: client.live.appendingPathComponent("Embed1.freshair/foo.md").path
            )

            try ExampleBundle.write(in: server.root, overrides: ["Embed1.freshair/bar.md": "# Bar\n\nRevised.\n"])
            let before = server.requests().count
            let second = try await client.sync.run()
            let fetched = server.requests().dropFirst(before).filter { $0.status == 200 }.map(\.path)

            #expect(second.outcome == .updated)
            #expect(second.version == (first.version ?? 0) + 1)
            #expect(second.downloaded == ["manifest.json", "Embed1.freshair/manifest.json", "Embed1.freshair/bar.md"])
            #expect(
                fetched.filter { !$0.hasSuffix("manifest.json") } == ["/\(ExampleBundle.name)/Embed1.freshair/bar.md"]
            )
            #expect(second.filesReused == 1)
            #expect(client.live.appendingPathComponent("Embed1.freshair/bar.md").text == "# Bar\n\nRevised.\n")
            // foo.md was carried over, not rewritten: the same file (inode) in the new version.
            let fooAfter = try FileManager.default.attributesOfItem(
                atPath: client.live.appendingPathComponent("Embed1.freshair/foo.md").path
            )
            #expect(fooBefore[.systemFileNumber] as? Int == fooAfter[.systemFileNumber] as? Int)
        }
    }

    @Test(
        "A root manifest spilled to disk before its entries are read, and a selection whose digests and sizes are on disk, install, update and check as in memory",
        arguments: ServerKind.allCases
    )
    func spilledRootManifest(kind: ServerKind) async throws {
        try await PublishedFolder.with(kind) { server in
            let bundle = try ExampleBundle.write(in: server.root)
            var client = try ExampleClient(published: server)
            client.sync.configuration.spillDocumentsFrom = 0  // every fetched root goes to disk first
            client.sync.configuration.spillSelectionAfter = 1  // and every selection's digests and sizes
            let partials = client.local.path("store/partials").path
            func servedRoot() throws -> Data { try Data(contentsOf: bundle.appendingPathComponent("manifest.json")) }

            let first = try await client.sync.run()
            #expect(first.outcome == .updated && client.hasEmbed1)
            #expect(first.downloaded.first == "manifest.json")
            #expect(try Data(contentsOf: client.live.appendingPathComponent("manifest.json")) == servedRoot())
            #expect(
                try client.sync.store.liveRecord()?.file(at: "manifest.json")
                    == FileRecord(hash: .of(servedRoot(), using: .sha256), size: Int64(servedRoot().count))
            )
            #expect(try FileManager.default.contentsOfDirectory(atPath: partials).isEmpty)

            // A new root and one changed file: the root is moved in again, the rest carried over.
            try ExampleBundle.write(in: server.root, overrides: ["Embed1.freshair/bar.md": "# Bar\n\nRevised.\n"])
            let second = try await client.sync.run()
            #expect(second.downloaded == ["manifest.json", "Embed1.freshair/manifest.json", "Embed1.freshair/bar.md"])
            #expect(second.filesReused == 1)
            #expect(try Data(contentsOf: client.live.appendingPathComponent("manifest.json")) == servedRoot())
            #expect(client.live.appendingPathComponent("Embed1.freshair/bar.md").text == "# Bar\n\nRevised.\n")
            #expect(try FileManager.default.contentsOfDirectory(atPath: partials).isEmpty)
            #expect(try client.sync.store.verify()?.isIntact == true)

            // Unchanged: one 304. The same bytes under a new date: fetched, kept, nothing left on disk.
            let check = try await client.sync.run()
            #expect(check.outcome == .alreadyCurrent && check.notModified)
            let rootURL = bundle.appendingPathComponent("manifest.json")
            let uploadedAt = try FileManager.default.attributesOfItem(atPath: rootURL.path)[.modificationDate] as? Date
            try PublishedText.uploaded(rootURL, after: uploadedAt)
            let touched = try await client.sync.run()
            #expect(touched.outcome == .alreadyCurrent && !touched.notModified)
            #expect(try FileManager.default.contentsOfDirectory(atPath: partials).isEmpty)

            // A root that fails to parse: the sync fails; the live version and an empty partials
            // folder stay.
            let goodRoot = try servedRoot()
            try PublishedText.write(#"[{"filename": "#, to: rootURL)
            await #expect(throws: (any Error).self) { try await client.sync.run() }
            #expect(client.live.appendingPathComponent("Embed1.freshair/bar.md").text == "# Bar\n\nRevised.\n")
            #expect(try FileManager.default.contentsOfDirectory(atPath: partials).isEmpty)
            try PublishedText.write(String(decoding: goodRoot, as: UTF8.self), to: rootURL)

            // A new environment re-plans from the stored root, in memory.
            var moved = client.sync
            moved.environment = ExampleBundle.environment(appVersion: "1.1")
            let replanned = try await moved.run()
            #expect(replanned.outcome == .updated)
            #expect(try Data(contentsOf: client.live.appendingPathComponent("manifest.json")) == servedRoot())
            #expect(client.liveFiles().contains("Embed2.freshair/baz.md"))
        }
    }

    @Test("A bad hash fails the sync and leaves the whole old version live", arguments: ServerKind.allCases)
    func badHashKeepsTheOldVersion(kind: ServerKind) async throws {
        try await PublishedFolder.with(kind) { server in
            try ExampleBundle.write(in: server.root)
            let client = try ExampleClient(published: server)
            let first = try await client.sync.run()
            let filesBefore = client.liveFiles()

            // The publisher changes two files but re-hashes only one: the manifests are "new",
            // foo.md's content no longer matches.
            let bundle = try ExampleBundle.write(in: server.root, overrides: ["Embed1.freshair/bar.md": "# Bar v2\n"])
            let foo = bundle.appendingPathComponent("Embed1.freshair/foo.md")
            try Data("tampered\n".utf8).write(to: foo)
            let manifest = bundle.appendingPathComponent("Embed1.freshair/manifest.json")
            var entries = try JSONSerialization.jsonObject(with: Data(contentsOf: manifest)) as! [[String: Any]]
            entries = entries.map { entry in
                var entry = entry
                if entry["filename"] as? String == "foo.md" { entry["sha"] = String(repeating: "ab", count: 32) }
                return entry
            }
            try ExampleBundleRehash.rewrite(childManifest: manifest, entries: entries, root: bundle)

            await #expect {
                try await client.sync.run()
            } throws: { error in
                guard let failure = error as? FreshAirError, failure.code == .hashMismatch, let path = failure.path
                else { return false }
                // An app may show the message: it says what the publisher must do, and names no tool.
                return path == "Embed1.freshair/foo.md" && "\(error)".contains("recompute the digests")
                    && !"\(error)".contains("breeze")
            }
            #expect(try client.sync.store.liveRecord()?.id == first.version)
            #expect(client.liveFiles() == filesBefore)
            #expect(
                client.live.appendingPathComponent("Embed1.freshair/bar.md").text
                    == ExampleBundle.contents["Embed1.freshair/bar.md"]
            )
            let staging = client.local.path("store/staging")
            #expect(try FileManager.default.contentsOfDirectory(atPath: staging.path).isEmpty)
        }
    }

    @Test("A malformed manifest names its position; the live version stays", arguments: ServerKind.allCases)
    func malformedManifestNamesItsPosition(kind: ServerKind) async throws {
        try await PublishedFolder.with(kind) { server in
            let bundle = try ExampleBundle.write(in: server.root)
            let client = try ExampleClient(published: server)
            try await client.sync.run()

            try PublishedText.write(
                "[\n  {\"filename\": \"a.md\",\n   \"sha\": 12,, }\n]\n",
                to: bundle.appendingPathComponent("manifest.json")
            )
            await #expect {
                try await client.sync.run()
            } throws: { error in
                let text = "\(error)"
                return text.contains("line 3, column") && text.contains("\(ExampleBundle.name)/manifest.json")
            }
            #expect(client.liveFiles().contains("Embed1.freshair/bar.md"))

            try PublishedText.write(
                #"[{"filename": "a.md", "condition": "platform == 'iOS' &&"}]"#,
                to: bundle.appendingPathComponent("manifest.json")
            )
            await #expect {
                try await client.sync.run()
            } throws: { error in
                "\(error)".contains("entry 0 (\"a.md\")") && "\(error)".contains("column 21")
            }
        }
    }

    @Test("A change of environment re-plans from the stored manifests", arguments: ServerKind.allCases)
    func environmentChangeReplansWithoutRefetchingManifests(kind: ServerKind) async throws {
        try await PublishedFolder.with(kind) { server in
            try ExampleBundle.write(in: server.root)
            var client = try ExampleClient(published: server, appVersion: "0.9")
            try await client.sync.run()
            let before = server.requests().count

            client.sync.environment["appVersion"] = "1.1"
            let upgraded = try await client.sync.run()
            let seen = server.requests().dropFirst(before)
            #expect(upgraded.outcome == .updated)
            #expect(seen.filter { $0.path.hasSuffix("/\(ExampleBundle.name)/manifest.json") }.map(\.status) == [304])
            #expect(
                Set(upgraded.removed) == [
                    "Embed1.freshair/bar.md", "Embed1.freshair/foo.md", "Embed1.freshair/manifest.json",
                ]
            )
            #expect(
                client.liveFiles() == [
                    "Embed2.freshair/baz.md", "Embed2.freshair/manifest.json", "Embed2.freshair/zab.md",
                    "manifest.json",
                ]
            )

            // And back: rollBack() restores the previous version exactly.
            try await client.sync.store.rollBack()
            #expect(
                client.liveFiles() == [
                    "Embed1.freshair/bar.md", "Embed1.freshair/foo.md", "Embed1.freshair/manifest.json",
                    "manifest.json",
                ]
            )
        }
    }
}

/// Helpers that publish hand-made (and deliberately wrong) content.
enum PublishedText {
    private static let uploads = Atomic<Int>(0)

    static func write(_ text: String, to url: URL) throws {
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        let earlier = (try? FileManager.default.attributesOfItem(atPath: url.path)[.modificationDate] as? Date) ?? nil
        try Data(text.utf8).write(to: url)
        try uploaded(url, after: earlier)
    }

    /// Moves a rewritten file's modification time on, as a real upload would: servers derive
    /// validators from it, at one-second resolution. Each file gets a later second than any before it.
    ///
    /// `earlier` is the time the file had before it was rewritten (another writer, `breeze
    /// sign` or `publish`, may have set one ahead of the clock): the new one is past it too, since
    /// an equal second and size would give nginx's ETag back unchanged.
    static func uploaded(_ url: URL, after earlier: Date? = nil) throws {
        let bumped = max(
            Date().addingTimeInterval(Double(2 * uploads.add(1, ordering: .relaxed).newValue)),
            (earlier ?? .distantPast).addingTimeInterval(2)
        )
        try FileManager.default.setAttributes([.modificationDate: bumped], ofItemAtPath: url.path)
    }
}

enum ExampleBundleRehash {
    /// Writes a child manifest and updates the root's hash for it, as `breeze hash` would.
    static func rewrite(childManifest: URL, entries: [[String: Any]], root bundle: URL) throws {
        let childData = try JSONSerialization.data(withJSONObject: entries, options: [.sortedKeys])
        try PublishedText.write(String(decoding: childData, as: UTF8.self), to: childManifest)
        let rootURL = bundle.appendingPathComponent("manifest.json")
        var root = try JSONSerialization.jsonObject(with: Data(contentsOf: rootURL)) as! [[String: Any]]
        let relative = String(childManifest.path.dropFirst(bundle.path.count + 1))
        root = root.map { entry in
            var entry = entry
            if entry["filename"] as? String == relative { entry["sha"] = ContentHash.of(childData, using: .sha256).hex }
            return entry
        }
        let rootData = try JSONSerialization.data(withJSONObject: root, options: [.sortedKeys])
        try PublishedText.write(String(decoding: rootData, as: UTF8.self), to: rootURL)
    }
}
