import Foundation
import FreshAir
import Testing

@testable import BreezeKit

@Suite("The object layout: objects/<sha256> that never change, one store shared by versions and bundles")
struct ObjectLayoutTests {
    /// A hashed copy of the example bundle, and a served folder it is published into as
    /// `apps/<name>/`, its objects in `apps/objects/`, shared with any other bundle there.
    func authoredBundle(_ folder: TemporaryFolder) async throws -> URL {
        let bundle = try ExampleBundle.write(in: folder.url)
        _ = try await BundleHasher.run(bundle: bundle)
        return bundle
    }

    static let shared = ContentLayout.objects(at: "../objects/")

    /// SHA-256 (hex) of a bundle file.
    func digest(_ bundle: URL, _ path: String) throws -> String {
        try ContentHash.ofFile(at: bundle.appendingPathComponent(path), using: .sha256).hash.hex
    }

    func edit(_ bundle: URL, _ path: String, _ text: String) async throws {
        try PublishedText.write(text, to: bundle.appendingPathComponent(path))
        _ = try await BundleHasher.run(bundle: bundle)
    }

    @Test(
        "Published as objects, synced by digest through nginx; a second bundle reuses the store; --gc keeps what any bundle's kept versions need"
    )
    func endToEnd() async throws {
        try await PublishedFolder.with(.nginx) { server in
            let author = try TemporaryFolder("author")
            let bundle = try await authoredBundle(author)
            let localRoot = try Data(contentsOf: bundle.appendingPathComponent("manifest.json"))
            let destination = FolderDestination(root: server.root.appendingPathComponent("apps/\(ExampleBundle.name)"))
            let store = server.root.appendingPathComponent("apps/objects")

            let first = try await Publisher.run(source: bundle, to: destination, layout: Self.shared)
            // 2 child manifests and 4 files, each an object; then the root, last.
            #expect(first.uploaded.count == 7 && first.uploaded.last == "manifest.json")
            #expect(first.uploaded.dropLast().allSatisfy { $0.hasPrefix("../objects/") })
            #expect(first.layout == "objects at ../objects/")
            // The bundle's folder on the server holds the root alone; the author's root is untouched.
            #expect(try FileManager.default.contentsOfDirectory(atPath: destination.root.path) == ["manifest.json"])
            #expect(try Data(contentsOf: bundle.appendingPathComponent("manifest.json")) == localRoot)
            let publishedRoot = try Manifest(
                data: Data(contentsOf: destination.root.appendingPathComponent("manifest.json")),
                source: "published"
            )
            #expect(publishedRoot.layout == Self.shared)
            let barV1 = try digest(bundle, "Embed1.freshair/bar.md")
            let embedV1 = try digest(bundle, "Embed1.freshair/manifest.json")
            let rootV1 = try servedRoot(destination)
            #expect(
                try Data(contentsOf: store.appendingPathComponent(barV1))
                    == Data(contentsOf: bundle.appendingPathComponent("Embed1.freshair/bar.md"))
            )

            // A device fetches the root and objects only, and installs the files at their paths.
            let client = try ExampleClient(published: server, path: "apps/\(ExampleBundle.name)")
            let synced = try await client.sync.run()
            #expect(synced.outcome == .updated && client.hasEmbed1)
            let paths = server.requests().map(\.path)
            #expect(paths.filter { !$0.hasPrefix("/apps/objects/") } == ["/apps/\(ExampleBundle.name)/manifest.json"])
            #expect(paths.count == 4)  // the root, Embed1's manifest, bar.md, foo.md

            // One file changes: its object, its manifest's object, then the root.
            try await edit(bundle, "Embed1.freshair/bar.md", "# Bar, as an object\n")
            let second = try await Publisher.run(source: bundle, to: destination, layout: Self.shared)
            let barV2 = try digest(bundle, "Embed1.freshair/bar.md")
            let embedV2 = try digest(bundle, "Embed1.freshair/manifest.json")
            #expect(second.uploaded == [barV2, embedV2].sorted().map { "../objects/\($0)" } + ["manifest.json"])
            #expect(try await client.sync.run().outcome == .updated)
            #expect(client.live.appendingPathComponent("Embed1.freshair/bar.md").text == "# Bar, as an object\n")
            // The old object stays: a device that read the old root a moment ago still finds it.
            #expect(FileManager.default.fileExists(atPath: store.appendingPathComponent(barV1).path))
            #expect(try await Publisher.run(source: bundle, to: destination, layout: Self.shared).uploaded.isEmpty)

            // Another bundle with the same content in the same store: only its root goes up.
            let other = FolderDestination(root: server.root.appendingPathComponent("apps/Other.freshair"))
            #expect(
                try await Publisher.run(source: bundle, to: other, layout: Self.shared).uploaded == ["manifest.json"]
            )

            // A third version with garbage collection keeping one version per bundle: objects
            // younger than the grace period stay, whatever needs them.
            try await edit(bundle, "Embed1.freshair/foo.md", "# Foo, third\n")
            let young = try await Publisher.run(
                source: bundle,
                to: destination,
                layout: Self.shared,
                collect: ObjectCollector(keep: 1)
            )
            #expect(young.uploaded.count == 3 && young.collected.isEmpty)
            // Without the grace period: v1 is neither bundle's newest (this one's is v3, the
            // other's v2), so its root, its Embed1 manifest and its bar.md go; nothing else.
            let collected = try await Publisher.run(
                source: bundle,
                to: destination,
                layout: Self.shared,
                collect: ObjectCollector(keep: 1, grace: .zero)
            )
            #expect(collected.uploaded.isEmpty)
            #expect(Set(collected.collected) == [rootV1, embedV1, barV1])
            #expect(!FileManager.default.fileExists(atPath: store.appendingPathComponent(barV1).path))
            #expect(try await client.sync.run().outcome == .updated)
            #expect(client.live.appendingPathComponent("Embed1.freshair/foo.md").text == "# Foo, third\n")
            let otherClient = try ExampleClient(published: server, path: "apps/Other.freshair")
            #expect(try await otherClient.sync.run().outcome == .updated)
            #expect(otherClient.live.appendingPathComponent("Embed1.freshair/bar.md").text == "# Bar, as an object\n")
            withExtendedLifetime(author) {}
        }
    }

    /// SHA-256 (hex) of the root manifest as served.
    func servedRoot(_ destination: FolderDestination) throws -> String {
        ContentHash.of(try Data(contentsOf: destination.root.appendingPathComponent("manifest.json")), using: .sha256)
            .hex
    }

    @Test(
        "Moving a published bundle from paths to objects with --delete: the old paths go after the new root, the objects stay"
    )
    func migrateWithDelete() async throws {
        try await PublishedFolder.with(.nginx) { server in
            let author = try TemporaryFolder("author")
            let bundle = try await authoredBundle(author)
            let destination = FolderDestination(root: server.root.appendingPathComponent(ExampleBundle.name))
            _ = try await Publisher.run(source: bundle, to: destination)
            let client = try ExampleClient(published: server)
            _ = try await client.sync.run()

            let moved = try await Publisher.run(source: bundle, to: destination, layout: .objects, delete: true)
            #expect(moved.uploaded.last == "manifest.json")
            #expect(
                Set(moved.deleted)
                    == Set(ExampleBundle.contents.keys).union([
                        "Embed1.freshair/manifest.json", "Embed2.freshair/manifest.json",
                    ])
            )
            let left = try FileManager.default.contentsOfDirectory(atPath: destination.root.path).sorted()
            #expect(left == ["manifest.json", "objects"])
            // The device follows: same files, so nothing to download but the root.
            let update = try await client.sync.run()
            #expect(client.hasEmbed1, "\(update.oneLine)")
            withExtendedLifetime(author) {}
        }
    }

    @Test(
        "Signed: the layout is part of what is signed; a damaged object is refused and the live version stays; publishing repairs it"
    )
    func signedAndTampered() async throws {
        try await PublishedFolder.with(.breezeServe) { server in
            let author = try TemporaryFolder("author")
            let bundle = try await authoredBundle(author)
            let key = SigningKey.generate()
            let keyFile = author.path("release.key")
            try key.write(to: keyFile)
            let published = server.root.appendingPathComponent(ExampleBundle.name)

            // Signed for the path layout, a bundle cannot go up as objects: the signature covers the layout.
            _ = try await ManifestSigner.sign(bundle: bundle, with: key)
            let refused = try await BreezeBinary.run(["publish", bundle.path, published.path, "--layout", "objects"])
            #expect(refused.status == 65 && refused.error.contains("breeze sign --layout objects"), "\(refused.error)")
            #expect(!FileManager.default.fileExists(atPath: published.path))

            // Signed with the layout recorded, it goes up as objects without being asked.
            let signed = try await BreezeBinary.run(["sign", bundle.path, "--key", keyFile.path, "--layout", "objects"])
            #expect(signed.status == 0, "\(signed.error)")
            let first = try await BreezeBinary.run(["publish", bundle.path, published.path, "--json"])
            #expect(
                first.status == 0 && first.output.contains("\"layout\" : \"objects\""),
                "\(first.output)\(first.error)"
            )
            #expect(
                try Data(contentsOf: published.appendingPathComponent("manifest.json"))
                    == Data(contentsOf: bundle.appendingPathComponent("manifest.json"))
            )

            var client = try ExampleClient(published: server)
            client.sync.configuration.trustedKeys = [key.publicKey]
            #expect(try await client.sync.run().outcome == .updated)

            // What a CDN is told: objects for a year, the root briefly.
            let bar = try digest(bundle, "Embed1.freshair/bar.md")
            let object = try await head(server.url.appendingPathComponent("\(ExampleBundle.name)/objects/\(bar)"))
            #expect(object["Cache-Control"] == CachePolicy.defaultImmutable)
            let root = try await head(server.url.appendingPathComponent("\(ExampleBundle.name)/manifest.json"))
            #expect(root["Cache-Control"] == CachePolicy.defaultDocuments)

            // v2 is published, then its new object is damaged on the server (same size).
            try await edit(bundle, "Embed1.freshair/bar.md", "# Bar, signed v2\n")
            #expect(try await BreezeBinary.run(["sign", bundle.path, "--key", keyFile.path]).status == 0)
            #expect(try await BreezeBinary.run(["publish", bundle.path, published.path]).status == 0)
            let barV2 = try digest(bundle, "Embed1.freshair/bar.md")
            let damaged = published.appendingPathComponent("objects/\(barV2)")
            try PublishedText.write("# Bar, DAMAGED!!\n", to: damaged)
            await #expect {
                try await client.sync.run()
            } throws: { error in
                guard let error = error as? FreshAirError, error.code == .hashMismatch else { return false }
                return error.url?.absoluteString.hasSuffix("/objects/\(barV2)") == true
            }
            #expect(
                client.live.appendingPathComponent("Embed1.freshair/bar.md").text
                    == ExampleBundle.contents["Embed1.freshair/bar.md"]
            )

            // The next publish compares what is there and replaces the damaged object alone.
            let repair = try await BreezeBinary.run(["publish", bundle.path, published.path])
            #expect(
                repair.output.contains("uploaded: objects/\(barV2)") && repair.output.contains("1 uploaded"),
                "\(repair.output)"
            )
            #expect(try await client.sync.run().outcome == .updated)
            #expect(client.live.appendingPathComponent("Embed1.freshair/bar.md").text == "# Bar, signed v2\n")
            withExtendedLifetime(author) {}
        }
    }

    func head(_ url: URL) async throws -> HTTPResponseHead {
        try await URLSessionTransport().get(HTTPGetRequest(url: url)) { head, body in
            for try await _ in body {}
            return head
        }
    }
}
