import BreezeKit
import Foundation
import FreshAir
import Testing

@Suite("Signed bundles, from breeze keygen and sign to a device that pins the key")
struct SigningTests {
    @Test("Only a bundle signed by a pinned key installs; tampering is refused and the live version stays")
    func pinnedKeyGuardsTheBundle() async throws {
        try await PublishedFolder.with(.nginx) { server in
            let bundle = try ExampleBundle.write(in: server.root)
            _ = try await BundleHasher.run(bundle: bundle)  // digests and sizes current: signing requires it
            let keys = try TemporaryFolder("keys")
            let trusted = SigningKey.generate()
            let stranger = SigningKey.generate()
            try trusted.write(to: keys.path("trusted.key"))
            #expect(throws: SigningError.self) { try trusted.write(to: keys.path("trusted.key")) }  // never overwritten
            #expect(try SigningKey(contentsOf: keys.path("trusted.key")).publicKey == trusted.publicKey)

            var client = try ExampleClient(published: server)
            client.sync.configuration.trustedKeys = [trusted.publicKey]
            func refusal() async -> ManifestError.Problem? {
                do { try await client.sync.run() } catch {
                    return (error as? FreshAirError)?.manifestError?.problem
                }
                return nil
            }

            // Unsigned, then signed by a key the app does not pin: nothing is installed.
            #expect(await refusal() == .unsigned)
            _ = try await ManifestSigner.sign(bundle: bundle, with: stranger)
            #expect(await refusal() == .untrustedSigner([stranger.publicKey.base64]))
            #expect(try client.sync.store.liveRecord() == nil)

            // Signed by the pinned key too: it installs (the stranger's signature is kept beside it).
            let report = try await ManifestSigner.sign(bundle: bundle, with: trusted, options: .init(cosign: true))
            #expect(report.kept == [stranger.publicKey.base64] && !report.convertedToObjectForm && report.sequence == 1)
            #expect(try await client.sync.run().outcome == .updated)
            let installed = client.liveFiles()

            // Someone edits the published manifest without the key: refused, the live version stays.
            let rootURL = bundle.appendingPathComponent("manifest.json")
            let original = try String(contentsOf: rootURL, encoding: .utf8)
            try PublishedText.write(
                original.replacingOccurrences(of: "\"sequence\": 1", with: "\"sequence\": 9"),
                to: rootURL
            )
            #expect(await refusal() == .signatureInvalid)
            #expect(client.liveFiles() == installed)

            // The publisher's way: change, hash (which drops the stale signatures), sign, publish.
            try PublishedText.write(original, to: rootURL)
            try PublishedText.write("# Bar, signed\n", to: bundle.appendingPathComponent("Embed1.freshair/bar.md"))
            let hashed = try await BundleHasher.run(bundle: bundle)
            #expect(hashed.signaturesRemoved == 2 && hashed.sequence == 2)
            #expect(await refusal() == .unsigned)
            _ = try await ManifestSigner.sign(bundle: bundle, with: trusted)
            #expect(try await client.sync.run().outcome == .updated)
            #expect(client.live.appendingPathComponent("Embed1.freshair/bar.md").text == "# Bar, signed\n")
        }
    }

    @Test("An app that pins no key is told, in its summary and its one line, that signatures went unchecked")
    func signedButNotPinnedInTheLibrary() async throws {
        try await PublishedFolder.with(.nginx) { server in
            let bundle = try ExampleBundle.write(in: server.root)
            _ = try await BundleHasher.run(bundle: bundle)
            let key = SigningKey.generate()
            _ = try await ManifestSigner.sign(bundle: bundle, with: key)

            let unpinned = try ExampleClient(published: server)
            let summary = try await unpinned.sync.run()
            #expect(summary.outcome == .updated && summary.unverifiedSigners == [key.publicKey.base64])
            #expect(summary.filesForOtherDevices == 1)  // Embed2's manifest, for apps past 1.0: read no further
            #expect(
                summary.oneLine.hasSuffix(
                    "This version is signed (by \(key.publicKey.base64)), but no key is pinned, so no signature was checked."
                ),
                "\(summary.oneLine)"
            )
            let decoded = try JSONDecoder().decode(SyncSummary.self, from: JSONEncoder().encode(summary))
            #expect(decoded.unverifiedSigners == summary.unverifiedSigners)
            // Nothing new installed: nothing to say.
            let again = try await unpinned.sync.run()
            #expect(again.outcome == .alreadyCurrent && again.unverifiedSigners.isEmpty)
            #expect(!again.oneLine.contains("signed"))

            var pinned = try ExampleClient(published: server)
            pinned.sync.configuration.trustedKeys = [key.publicKey]
            let checked = try await pinned.sync.run()
            #expect(checked.outcome == .updated && checked.unverifiedSigners.isEmpty)
            #expect(!checked.oneLine.contains("signed"), "\(checked.oneLine)")
        }
    }

    @Test("breeze keygen, sign, validate and sync --trusted-key, as a publisher and a device run them")
    func commandLine() async throws {
        try await PublishedFolder.with(.nginx) { server in
            let bundle = try ExampleBundle.write(in: server.root)
            let work = try TemporaryFolder("cli-signing")
            let keygen = try await BreezeBinary.run(["keygen", work.path("app.key").path])
            #expect(keygen.status == 0)
            let publicKey = try #require(keygen.output.split(separator: "\n").last.map(String.init))
            #expect(try TrustedKey(base64: publicKey).base64 == publicKey)

            // Signing stale content would ship a bundle every device refuses: sign says so.
            try PublishedText.write("# changed\n", to: bundle.appendingPathComponent("Embed1.freshair/bar.md"))
            let stale = try await BreezeBinary.run(["sign", bundle.path, "--key", work.path("app.key").path])
            #expect(stale.status != 0 && stale.error.contains("breeze hash"))
            #expect(try await BreezeBinary.run(["hash", bundle.path]).status == 0)
            let sign = try await BreezeBinary.run(["sign", bundle.path, "--key", work.path("app.key").path])
            #expect(sign.status == 0 && sign.output.contains("object form"))
            #expect(try await BreezeBinary.run(["validate", bundle.path]).status == 0)

            let url = server.url.appendingPathComponent(ExampleBundle.name + "/").absoluteString
            let sync = try await BreezeBinary.run([
                "sync", url, work.path("live").path, "--trusted-key", publicKey, "--env", "appVersion=0.9",
            ])
            #expect(sync.status == 0, "\(sync.error)")
            let second = try await BreezeBinary.run(["keygen", work.path("second.key").path, "--json"])
            let printed = try JSONSerialization.jsonObject(with: Data(second.output.utf8)) as? [String: String]
            #expect(try SigningKey(contentsOf: work.path("second.key")).publicKey.base64 == printed?["publicKey"])
            let other = SigningKey.generate().publicKey.base64
            let refused = try await BreezeBinary.run(["sync", url, work.path("other").path, "--trusted-key", other])
            #expect(refused.status == 65 && refused.error.contains("none of which this app trusts"))

            // A manifest edited after signing: validate names the stale signature.
            let rootURL = bundle.appendingPathComponent("manifest.json")
            let text = try String(contentsOf: rootURL, encoding: .utf8)
            try PublishedText.write(
                text.replacingOccurrences(of: "\"sequence\": 1", with: "\"sequence\": 2"),
                to: rootURL
            )
            let validate = try await BreezeBinary.run(["validate", bundle.path])
            #expect(
                validate.status == 1 && validate.output.contains("does not match the content: run `breeze sign` again")
            )
        }
    }
}

/// TUF's rollback, replay, freeze and mix-and-match attacks on signed bundles, each against
/// nginx: refused with a clear error, and the live version stays.
@Suite("Signed bundles: replay, rollback, freeze and substitution are refused")
struct SignedBundleFreshnessTests {
    let trusted = SigningKey.generate()

    /// A signed bundle on `server`, hashed and signed as a publisher would.
    func publishSigned(
        _ server: PublishedFolder,
        folder: String = ExampleBundle.name,
        text: String,
        options: SigningOptions = .init()
    ) async throws -> URL {
        let bundle = try ExampleBundle.write(in: server.root)
        if folder != ExampleBundle.name {
            try? FileManager.default.removeItem(at: server.root.appendingPathComponent(folder))
            try FileManager.default.moveItem(at: bundle, to: server.root.appendingPathComponent(folder))
        }
        let root = server.root.appendingPathComponent(folder)
        try PublishedText.write(text, to: root.appendingPathComponent("Embed1.freshair/bar.md"))
        _ = try await BundleHasher.run(bundle: root)
        _ = try await ManifestSigner.sign(bundle: root, with: trusted, options: options)
        // Hashing and signing rewrote the manifests, within the second for a fast machine.
        for manifest in ["manifest.json", "Embed1.freshair/manifest.json", "Embed2.freshair/manifest.json"] {
            try? PublishedText.uploaded(root.appendingPathComponent(manifest))
        }
        return root
    }

    func client(_ server: PublishedFolder, folder: String = ExampleBundle.name) throws -> ExampleClient {
        var client = try ExampleClient(published: server, path: folder)
        client.sync.configuration.trustedKeys = [trusted.publicKey]
        return client
    }

    func problem(_ client: ExampleClient) async -> ManifestError.Problem? {
        do { try await client.sync.run() } catch {
            return (error as? FreshAirError)?.manifestError?.problem
        }
        return nil
    }

    func bar(_ client: ExampleClient) -> String? { client.live.appendingPathComponent("Embed1.freshair/bar.md").text }

    @Test("Every signing moves the sequence on and writes expires and identity")
    func signingIsARelease() async throws {
        try await PublishedFolder.with(.nginx) { server in
            let bundle = try await publishSigned(server, text: "one\n")
            var manifest = try Manifest(
                data: Data(contentsOf: bundle.appendingPathComponent("manifest.json")),
                source: "m"
            )
            #expect(manifest.sequence == 1 && manifest.identity == ExampleBundle.name)
            let expires = try #require(manifest.expires)
            #expect(abs(expires.timeIntervalSinceNow - 30 * 86_400) < 120)
            // Nothing changed, signed again: still a new release.
            let again = try await ManifestSigner.sign(bundle: bundle, with: trusted)
            #expect(again.sequence == 2 && again.dropped == 1)
            // A co-signer adds a signature and changes nothing else.
            let second = SigningKey.generate()
            let cosigned = try await ManifestSigner.sign(bundle: bundle, with: second, options: .init(cosign: true))
            manifest = try Manifest(data: Data(contentsOf: bundle.appendingPathComponent("manifest.json")), source: "m")
            #expect(
                cosigned.sequence == 2 && cosigned.kept == [trusted.publicKey.base64] && manifest.signatures.count == 2
            )
        }
    }

    @Test("Replay: an older signed manifest with the same sequence is refused after the newer one")
    func sameSequenceReplay() async throws {
        try await PublishedFolder.with(.nginx) { server in
            let bundle = try await publishSigned(server, text: "first\n", options: .init(sequence: 5))
            let rootURL = bundle.appendingPathComponent("manifest.json")
            let first = try Data(contentsOf: rootURL)
            let firstBar = try Data(contentsOf: bundle.appendingPathComponent("Embed1.freshair/bar.md"))
            let client = try client(server)
            try await client.sync.run()
            // The publisher re-signs other content at the same number (as hash-then-sign at a fixed --sequence would).
            _ = try await publishSigned(server, text: "second\n", options: .init(sequence: 5))
            #expect(await problem(client) == .replayedSequence(5))
            #expect(bar(client) == "first\n", "the live version stays")
            // The very manifest accepted before, replayed byte for byte, is fine (nothing new to install).
            try PublishedText.write(String(decoding: first, as: UTF8.self), to: rootURL)
            try firstBar.write(to: bundle.appendingPathComponent("Embed1.freshair/bar.md"))
            #expect(await problem(client) == nil)
        }
    }

    @Test("Rollback: a device rolled back still refuses the older manifest it rolled back over")
    func rollbackKeepsTheFloor() async throws {
        try await PublishedFolder.with(.nginx) { server in
            let bundle = try await publishSigned(server, text: "v1\n")
            let rootURL = bundle.appendingPathComponent("manifest.json")
            let v1 = try Data(contentsOf: rootURL)
            let client = try client(server)
            try await client.sync.run()
            // A fresh folder: name the next sequence.
            _ = try await publishSigned(server, text: "v2\n", options: .init(sequence: 2))
            try await client.sync.run()
            #expect(bar(client) == "v2\n")
            try await client.sync.store.rollBack()
            #expect(bar(client) == "v1\n")
            // A hostile server now offers the genuine, older v1 manifest with other files.
            try PublishedText.write(String(decoding: v1, as: UTF8.self), to: rootURL)
            #expect(await problem(client) == .olderSequence(installed: 2, offered: 1))
            #expect(bar(client) == "v1\n")
        }
    }

    @Test(
        "A purged store heals on the next sync; the install ID and the anti-rollback floor, kept apart, survive the purge"
    )
    func purgedContentKeepsTheFloor() async throws {
        try await PublishedFolder.with(.nginx) { server in
            let bundle = try await publishSigned(server, text: "v1\n")
            let rootURL = bundle.appendingPathComponent("manifest.json")
            let v1 = try Data(contentsOf: rootURL)
            _ = try await publishSigned(server, text: "v2\n", options: .init(sequence: 2))
            var client = try client(server)
            // Content where the system may purge it (tvOS's Caches), state apart (StoragePlan).
            client.sync.store = BundleStore(
                root: client.local.path("Caches/store"),
                liveLink: client.local.path("live"),
                stateFolder: client.local.path("Application Support/store.state")
            )
            try await client.sync.run()
            #expect(bar(client) == "v2\n")
            let installID = try client.sync.store.installID()

            // The system empties Caches: the live link dangles, nothing reads as installed.
            try FileManager.default.removeItem(at: client.local.path("Caches"))
            #expect(client.sync.store.liveVersionID == nil)
            let healed = try await client.sync.run()
            #expect(healed.outcome == .updated)
            #expect(bar(client) == "v2\n")
            #expect(try client.sync.store.installID() == installID, "the same rollout bucket after the purge")

            // Purged again, and a hostile server offers the genuine, older v1: the floor held.
            try FileManager.default.removeItem(at: client.local.path("Caches"))
            try PublishedText.write(String(decoding: v1, as: UTF8.self), to: rootURL)
            #expect(await problem(client) == .olderSequence(installed: 2, offered: 1))
            #expect(client.sync.store.liveVersionID == nil)
        }
    }

    @Test("Freeze and fresh installs: an expired manifest, and an old one below the app's minimum")
    func freezeAndMinimum() async throws {
        try await PublishedFolder.with(.nginx) { server in
            _ = try await publishSigned(server, text: "old\n", options: .init(sequence: 3))
            var fresh = try client(server)
            fresh.sync.configuration.minimumSequence = 4
            #expect(await problem(fresh) == .olderSequence(installed: 4, offered: 3))
            #expect(try fresh.sync.store.liveRecord() == nil)

            _ = try await publishSigned(server, text: "short\n", options: .init(validity: .seconds(1), sequence: 4))
            var expired = try client(server)
            expired.sync.configuration.clockSkewTolerance = .zero
            expired.sync.configuration.environment.now = { Date().addingTimeInterval(5) }  // not a real wait
            guard case .expired = await problem(expired) else {
                Issue.record("an expired manifest was not refused")
                return
            }

        }
    }

    @Test("Mix-and-match: bundle B's signed manifest served at A's URL is refused, and A's own still installs")
    func crossBundleSubstitution() async throws {
        try await PublishedFolder.with(.nginx) { server in
            let a = try await publishSigned(server, folder: "A.freshair", text: "a\n", options: .init(sequence: 1))
            let b = try await publishSigned(server, folder: "B.freshair", text: "b\n", options: .init(sequence: 50))
            let genuineA = try Data(contentsOf: a.appendingPathComponent("manifest.json"))
            // The same files under both folders: only the root manifest is substituted.
            try PublishedText.write(
                String(decoding: try Data(contentsOf: b.appendingPathComponent("manifest.json")), as: UTF8.self),
                to: a.appendingPathComponent("manifest.json")
            )
            let client = try client(server, folder: "A.freshair")
            #expect(await problem(client) == .wrongIdentity(expected: "A.freshair", found: "B.freshair"))
            try PublishedText.write(
                String(decoding: genuineA, as: UTF8.self),
                to: a.appendingPathComponent("manifest.json")
            )
            #expect(await problem(client) == nil, "B's sequence 50 did not raise A's floor")
            #expect(bar(client) == "a\n")
        }
    }
}

/// Packages and repositories signed with the same keys and tools as bundles, against nginx.
@Suite("Signed packages and repositories")
struct SignedPackageAndRepositoryTests {
    let key = SigningKey.generate()

    /// `content.tgz` made by GNU tar from one file saying `text`.
    func pack(_ text: String, in server: PublishedFolder, as name: String = "content.tgz") async throws {
        let source = server.root.appendingPathComponent("src-\(name)")
        try? FileManager.default.removeItem(at: source)
        try FileManager.default.createDirectory(at: source, withIntermediateDirectories: true)
        try Data(text.utf8).write(to: source.appendingPathComponent("message.txt"))
        try await shell(
            "tar -czf \(name) -C src-\(name) . && touch -d '@\(Int(Date().timeIntervalSince1970) + 2)' \(name)",
            in: server.root
        )
    }

    func updater(_ server: PublishedFolder, _ local: TemporaryFolder) -> PackageUpdater {
        signedPackageDevice(server.url.appendingPathComponent("content.tgz"), trusting: key, in: local)
    }

    func failure(_ updater: PackageUpdater) async -> FreshAirError? {
        do { try await updater.update() } catch { return error as? FreshAirError }
        return nil
    }

    @Test("A .sig over 64 KiB is refused as too large, before it is read as JSON; the package is not fetched")
    func oversizedSignature() async throws {
        try await PublishedFolder.with(.nginx) { server in
            let local = try TemporaryFolder("huge-sig")
            try await pack("v1", in: server)
            let padding = String(repeating: " ", count: 100 << 10)
            try PublishedText.write(
                "{\(padding)\"signatures\": []}",
                to: server.root.appendingPathComponent("content.tgz.sig")
            )
            let failure = await failure(updater(server, local))
            #expect(failure?.code == .bodyTooLarge && failure?.sizeLimit == 64 << 10, "\(String(describing: failure))")
            #expect(!FileManager.default.fileExists(atPath: local.path("live/message.txt").path))
        }
    }

    @Test("A signed package installs; a 304 on its .sig ends the check; tampering, replay and substitution are refused")
    func signedPackage() async throws {
        try await PublishedFolder.with(.nginx) { server in
            let package = server.root.appendingPathComponent("content.tgz")
            let signature = server.root.appendingPathComponent("content.tgz.sig")
            let local = try TemporaryFolder("signed-package")
            let updater = updater(server, local)
            try await pack("v1", in: server)
            let first = try PackageSigner.sign(package: package, with: [key])
            #expect(first.sequence == 1 && first.identity == "content.tgz")
            let v1Signature = try Data(contentsOf: signature)
            #expect(try await updater.update().outcome == .downloaded)
            #expect(local.path("live/message.txt").text == "v1")
            let again = try await updater.run()
            #expect(
                again.package?.outcome == .notModified && again.requests == 1,
                "one conditional request for the .sig"
            )

            // A new release whose package is swapped on the server: the signed digest catches it.
            try await pack("v2", in: server)
            _ = try PackageSigner.sign(package: package, with: [key])
            try await pack("v2, tampered on the way", in: server)
            guard await failure(updater)?.code == .declaredSizeMismatch else {
                Issue.record("a package that is not the signed one was installed")
                return
            }
            #expect(local.path("live/message.txt").text == "v1")
            try await pack("v2", in: server)
            _ = try PackageSigner.sign(package: package, with: [key], options: .init(sequence: 3))
            #expect(try await updater.update().outcome == .downloaded)
            #expect(local.path("live/message.txt").text == "v2")

            // The genuine, older v1 document and package replayed: refused, v2 stays.
            try await pack("v1", in: server)
            try PublishedText.write(String(decoding: v1Signature, as: UTF8.self), to: signature)
            guard let old = await failure(updater)?.manifestError,
                old.problem == .olderSequence(installed: 3, offered: 1)
            else {
                Issue.record("an older signed package was accepted")
                return
            }
            #expect(local.path("live/message.txt").text == "v2")

            // Another package's document served for this one.
            try await pack("other", in: server, as: "other.tgz")
            _ = try PackageSigner.sign(
                package: server.root.appendingPathComponent("other.tgz"),
                with: [key],
                options: .init(sequence: 9)
            )
            try FileManager.default.copyItem(
                at: server.root.appendingPathComponent("other.tgz"),
                to: server.root.appendingPathComponent("swap.tgz")
            )
            try FileManager.default.removeItem(at: package)
            try FileManager.default.moveItem(at: server.root.appendingPathComponent("swap.tgz"), to: package)
            try PublishedText.write(
                String(
                    decoding: try Data(contentsOf: server.root.appendingPathComponent("other.tgz.sig")),
                    as: UTF8.self
                ),
                to: signature
            )
            guard let swapped = await failure(updater)?.manifestError,
                swapped.problem == .wrongIdentity(expected: "content.tgz", found: "other.tgz")
            else {
                Issue.record("another package's signed document was accepted")
                return
            }
            #expect(local.path("live/message.txt").text == "v2")
        }
    }

    @Test("breeze sign PACKAGE, repo add --key and sync --trusted-key, as a publisher and a device run them")
    func commandLine() async throws {
        try await PublishedFolder.with(.nginx) { server in
            let work = try TemporaryFolder("cli-signed-delivery")
            let keygen = try await BreezeBinary.run(["keygen", work.path("app.key").path, "--json"])
            let publicKey = try #require(
                (try JSONSerialization.jsonObject(with: Data(keygen.output.utf8)) as? [String: String])?["publicKey"]
            )
            try await pack("hello", in: server)
            let sign = try await BreezeBinary.run([
                "sign", server.root.appendingPathComponent("content.tgz").path, "--key", work.path("app.key").path,
            ])
            #expect(
                sign.status == 0 && sign.output.contains("Signed content.tgz.sig (content.tgz, sequence 1"),
                "\(sign.output) \(sign.error)"
            )
            let url = server.url.appendingPathComponent("content.tgz").absoluteString
            let synced = try await BreezeBinary.run([
                "sync", url, work.path("Package").path, "--trusted-key", publicKey,
            ])
            #expect(synced.status == 0, "\(synced.error)")
            #expect(work.path("Package/message.txt").text == "hello")

            // Packed again after it was signed: a new device refuses it, in the words of a package
            // and its .sig (one that has the package installed finds the .sig unchanged: a 304).
            try await pack("hello again", in: server)
            let stale = try await BreezeBinary.run([
                "sync", url, work.path("NewDevice").path, "--trusted-key", publicKey,
            ])
            #expect(stale.status == 65 && !FileManager.default.fileExists(atPath: work.path("NewDevice").path))
            #expect(
                stale.error.contains("not the one its signed document (content.tgz.sig) describes"),
                "\(stale.error)"
            )
            #expect(stale.error.contains("hint: `breeze sign PACKAGE --key KEY`"), "\(stale.error)")

            // A repository: the index is signed as bundles are added; each archive is checked against it.
            try FileManager.default.createDirectory(at: work.path("cats"), withIntermediateDirectories: true)
            try Data("meow".utf8).write(to: work.path("cats/cat.txt"))
            let repository = server.root.appendingPathComponent("com.example.signed")
            let added = try await BreezeBinary.run([
                "repo", "add", work.path("cats").path, repository.path, "--key", work.path("app.key").path,
            ])
            #expect(added.status == 0, "\(added.error)")
            let index = try RepositoryIndex(
                data: Data(contentsOf: repository.appendingPathComponent("index.json")),
                source: "index.json"
            )
            #expect(
                index.release.identity == "com.example.signed" && index.release.signatures.count == 1
                    && index.bundles["cats"]?.sha256 != nil
            )
            let repo = try await BreezeBinary.run([
                "sync", "--repo", "com.example.signed", server.url.absoluteString, work.path("Bundles").path,
                "--trusted-key", publicKey,
            ])
            #expect(repo.status == 0, "\(repo.error)")
            #expect(work.path("Bundles/cats/cat.txt").text == "meow")

            // Version 2 published, then its archive swapped on the server: refused, version 1 stays.
            try Data("purr".utf8).write(to: work.path("cats/cat.txt"))
            _ = try await BreezeBinary.run([
                "repo", "add", work.path("cats").path, repository.path, "--key", work.path("app.key").path,
            ])
            try FileManager.default.removeItem(at: repository.appendingPathComponent("cats-2.tar.gz"))
            try FileManager.default.copyItem(
                at: repository.appendingPathComponent("cats-1.tar.gz"),
                to: repository.appendingPathComponent("cats-2.tar.gz")
            )
            let tampered = try await BreezeBinary.run([
                "sync", "--repo", "com.example.signed", server.url.absoluteString, work.path("Bundles").path,
                "--trusted-key", publicKey,
            ])
            #expect(tampered.status == 65, "\(tampered.output) \(tampered.error)")
            #expect(tampered.error.contains("the repository's signed index"), "\(tampered.error)")
            #expect(work.path("Bundles/cats/cat.txt").text == "meow")

            // An unsigned index is refused where keys are pinned.
            try Data(#"{"bundles": {"cats": {"version": 1}}}"#.utf8).write(
                to: repository.appendingPathComponent("index.json")
            )
            try FileManager.default.setAttributes(
                [.modificationDate: Date().addingTimeInterval(3)],
                ofItemAtPath: repository.appendingPathComponent("index.json").path
            )
            let unsigned = try await BreezeBinary.run([
                "sync", "--repo", "com.example.signed", server.url.absoluteString, work.path("Bundles").path,
                "--trusted-key", publicKey,
            ])
            #expect(unsigned.status == 65 && unsigned.error.contains("not signed"), "\(unsigned.error)")
            // What to do, said once, and the hint names what to sign.
            #expect(unsigned.error.contains("sign it with a key the app pins and publish again.\n"))
            #expect(!unsigned.error.contains("The publisher must fix"), "\(unsigned.error)")
            #expect(unsigned.error.contains("hint: `breeze sign REPOSITORY --key KEY`"), "\(unsigned.error)")
        }
    }
}
