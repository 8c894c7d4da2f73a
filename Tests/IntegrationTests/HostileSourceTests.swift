import BreezeKit
import Foundation
import FreshAir
import Testing

/// What a source nobody signed can still try: raise the anti-rollback floor for good with one
/// forged sequence, or hand over a private file through a link in a local folder.
@Suite("Hostile sources: unsigned sequences and links out of a file:// folder")
struct HostileSourceTests {
    /// A device syncing `Seq.freshair` from `server`, with one attempt per file.
    func device(_ server: PublishedFolder, in local: TemporaryFolder) -> BundleSync {
        var configuration = SyncConfiguration()
        configuration.retry = RetryPolicy(maxAttempts: 1)
        return BundleSync(
            remote: server.url.appendingPathComponent("Seq.freshair/"),
            store: BundleStore(root: local.path("store"), liveLink: local.path("live")),
            configuration: configuration
        )
    }

    @Test(
        "An unsigned sequence leaves no mark: a forged Int.max that never installs blocks nothing; one that installs goes with a rollback"
    )
    func unsignedSequencePoisoning() async throws {
        try await PublishedFolder.with(.nginx) { server in
            let bundle = server.root.appendingPathComponent("Seq.freshair")
            try FileManager.default.createDirectory(at: bundle, withIntermediateDirectories: true)
            var published = 0
            /// Publishes `text` as a.md under `sequence`; `lying` lists a digest the file does not
            /// have, as a man in the middle who forged only the manifest would.
            func publish(sequence: Int, text: String, lying: Bool = false) throws {
                try Data(text.utf8).write(to: bundle.appendingPathComponent("a.md"))
                let digest = ContentHash.of(Array((lying ? "other" : text).utf8), using: .sha256).hex
                let manifest = bundle.appendingPathComponent("manifest.json")
                try Data(
                    #"{"format": 2, "sequence": \#(sequence), "files": [{"filename": "a.md", "sha": "\#(digest)"}]}"#
                        .utf8
                )
                .write(to: manifest)
                published += 1
                for file in [manifest, bundle.appendingPathComponent("a.md")] {
                    try FileManager.default.setAttributes(
                        [.modificationDate: Date().addingTimeInterval(Double(published) * 10)],
                        ofItemAtPath: file.path
                    )
                }
            }
            let local = try TemporaryFolder("poison")
            let sync = device(server, in: local)
            let live = { local.path("live/a.md").text }

            try publish(sequence: 5, text: "v5")
            try await sync.run()
            #expect(live() == "v5")

            // A forged manifest alone: its file never verifies, so nothing installs.
            try publish(sequence: Int.max, text: "evil", lying: true)
            await #expect(throws: FreshAirError.self) { try await sync.run() }
            #expect(live() == "v5")
            try publish(sequence: 6, text: "v6")
            #expect(try await sync.run().outcome == .updated, "the real publisher's next release is accepted")
            #expect(live() == "v6")

            // A forged release that installs (nothing stops that without keys) holds its floor
            // only while it is live: a rollback takes it away.
            try publish(sequence: Int.max, text: "evil")
            try await sync.run()
            #expect(live() == "evil")
            try publish(sequence: 7, text: "v7")
            await #expect(throws: FreshAirError.self) { try await sync.run() }
            _ = try await sync.store.rollBack()
            #expect(live() == "v6")
            #expect(try await sync.run().outcome == .updated)
            #expect(live() == "v7")
            let marks = local.path("store/high-water.json").text ?? "[]"
            #expect(!marks.contains("Seq.freshair"), "no mark kept for an unsigned source: \(marks)")
        }
    }

    @Test("A file:// bundle cannot hand over a file that a link takes outside its folder; the live version stays")
    func fileSourceLinkOut() async throws {
        let source = try TemporaryFolder("file-source")
        let outside = try TemporaryFolder("private")
        let secret = "private key material"
        try Data(secret.utf8).write(to: outside.path("secret.txt"))
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: outside.path("secret.txt").path)
        let bundle = source.path("Linked.freshair")
        try FileManager.default.createDirectory(at: bundle, withIntermediateDirectories: true)
        func manifest(_ files: [(String, String)]) throws {
            let entries = files.map { name, text in
                #"{"filename": "\#(name)", "sha": "\#(ContentHash.of(Array(text.utf8), using: .sha256).hex)"}"#
            }
            try Data("[\(entries.joined(separator: ","))]".utf8).write(
                to: bundle.appendingPathComponent("manifest.json")
            )
        }
        try Data("fine".utf8).write(to: bundle.appendingPathComponent("a.md"))
        try manifest([("a.md", "fine")])
        let local = try TemporaryFolder("file-device")
        var configuration = SyncConfiguration()
        configuration.retry = RetryPolicy(maxAttempts: 1)
        let sync = BundleSync(
            remote: bundle,
            store: BundleStore(root: local.path("store"), liveLink: local.path("live")),
            configuration: configuration
        )
        try await sync.run()
        #expect(local.path("live/a.md").text == "fine")

        // A link inside the folder to a file inside it is fine; one that leaves it is not there.
        try FileManager.default.createSymbolicLink(
            atPath: bundle.appendingPathComponent("b.md").path,
            withDestinationPath: "a.md"
        )
        try FileManager.default.createSymbolicLink(
            atPath: bundle.appendingPathComponent("notes.txt").path,
            withDestinationPath: outside.path("secret.txt").path
        )
        try manifest([("a.md", "fine"), ("b.md", "fine"), ("notes.txt", secret)])
        await #expect {
            try await sync.run()
        } throws: { error in
            guard let failure = error as? FreshAirError, failure.status == 404 else { return false }
            return failure.url?.lastPathComponent == "notes.txt"
        }
        #expect(local.path("live/a.md").text == "fine")
        #expect(!FileManager.default.fileExists(atPath: local.path("live/notes.txt").path))
        let stored = FileManager.default.enumerator(atPath: local.path("store").path)?.allObjects as? [String] ?? []
        for file in stored {
            #expect(local.path("store/\(file)").text != secret, "the private file reached the store as \(file)")
        }

        // Without the link out, the same bundle syncs, the link inside included; a file the
        // source keeps to its owner (0600) is installed no wider.
        try FileManager.default.removeItem(at: bundle.appendingPathComponent("notes.txt"))
        try Data("mine".utf8).write(to: bundle.appendingPathComponent("own.txt"))
        try FileManager.default.setAttributes(
            [.posixPermissions: 0o600],
            ofItemAtPath: bundle.appendingPathComponent("own.txt").path
        )
        try manifest([("a.md", "fine"), ("b.md", "fine"), ("own.txt", "mine")])
        try await sync.run()
        #expect(local.path("live/b.md").text == "fine")
        let mode = { (name: String) in
            (try FileManager.default.attributesOfItem(atPath: local.path("live/\(name)").path)[.posixPermissions]
                as? Int) ?? -1
        }
        #expect(try mode("own.txt") == 0o600)
        #expect(try mode("a.md") == 0o644)
    }

    @Test(
        "A manifest whose files claim sizes that add up past Int64.max: the sync ends with the file's error, not a trap, and the live version stays"
    )
    func claimedSizesPastInt64() async throws {
        try await PublishedFolder.with(.nginx) { server in
            let bundle = server.root.appendingPathComponent("Seq.freshair")
            try FileManager.default.createDirectory(at: bundle, withIntermediateDirectories: true)
            let manifest = bundle.appendingPathComponent("manifest.json")
            func publish(_ files: [(name: String, text: String, size: Int64)], at second: Double) throws {
                let entries = try files.map { file in
                    try Data(file.text.utf8).write(to: bundle.appendingPathComponent(file.name))
                    let digest = ContentHash.of(Array(file.text.utf8), using: .sha256).hex
                    return #"{"filename": "\#(file.name)", "sha256": "\#(digest)", "size": \#(file.size)}"#
                }
                try Data(#"{"format": 2, "files": [\#(entries.joined(separator: ", "))]}"#.utf8).write(to: manifest)
                for name in files.map(\.name) + ["manifest.json"] {
                    try FileManager.default.setAttributes(
                        [.modificationDate: Date().addingTimeInterval(second)],
                        ofItemAtPath: bundle.appendingPathComponent(name).path
                    )
                }
            }
            let local = try TemporaryFolder("sizes")
            let sync = device(server, in: local)
            try publish([("a.md", "v1", 2)], at: 10)
            try await sync.run()
            #expect(local.path("live/a.md").text == "v1")

            try publish([("a.md", "v2", .max), ("b.md", "b", .max)], at: 20)
            let error = await #expect(throws: FreshAirError.self) { try await sync.run() }
            #expect(error?.code == .declaredSizeMismatch, "\(String(describing: error))")
            #expect(
                error?.description.contains("9223372036854775807 are listed") == true,
                "\(String(describing: error))"
            )
            #expect(local.path("live/a.md").text == "v1")
        }
    }
}
