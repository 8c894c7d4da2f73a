import BreezeKit
import Foundation
import FreshAir
import Testing

/// `breeze release`: one command from an edited folder to content a pinning device installs.
@Suite("breeze release: generate, sign, validate and publish in one step; a dry run changes nothing")
struct ReleaseCommandTests {
    /// Every file under `folder` with its bytes and modification time.
    static func snapshot(_ folder: URL) throws -> [String: (Data, Date)] {
        var files: [String: (Data, Date)] = [:]
        let walker = FileManager.default.enumerator(atPath: folder.path)
        while let relative = walker?.nextObject() as? String {
            let url = folder.appendingPathComponent(relative)
            guard (walker?.fileAttributes?[.type] as? FileAttributeType) == .typeRegular else { continue }
            let date = try FileManager.default.attributesOfItem(atPath: url.path)[.modificationDate] as! Date
            files[relative] = (try Data(contentsOf: url), date)
        }
        return files
    }

    @Test("a signed release a pinning device installs; unchanged keeps its signatures; an edit is the next sequence")
    func releaseToAServedFolder() async throws {
        try await PublishedFolder.with(.nginx) { server in
            let work = try TemporaryFolder("release")
            let bundle = work.path("Content.freshair")
            let site = server.root.appendingPathComponent("Content.freshair").path
            #expect(try await BreezeBinary.run(["init", bundle.path]).status == 0)
            #expect(try await BreezeBinary.run(["keygen", work.path("release.key").path]).status == 0)
            let key = try SigningKey(contentsOf: work.path("release.key"))

            // A dry run: nothing published, the source untouched to the byte and the second.
            let before = try Self.snapshot(bundle)
            let dry = try await BreezeBinary.run([
                "release", bundle.path, site, "--key", work.path("release.key").path, "--dry-run",
            ])
            #expect(dry.status == 0, "\(dry.error)")
            #expect(dry.output.contains("would upload: manifest.json") && dry.output.contains("Would sign sequence"))
            #expect(!FileManager.default.fileExists(atPath: site), "a dry run publishes nothing")
            let after = try Self.snapshot(bundle)
            #expect(
                Set(after.keys) == Set(before.keys) && after.allSatisfy { before[$0.key]! == $0.value },
                "a dry run writes nothing in the source"
            )

            // The release, and a device that pins the key.
            let first = try await BreezeBinary.run([
                "release", bundle.path, site, "--key", work.path("release.key").path,
            ])
            #expect(first.status == 0, "\(first.error)")
            #expect(first.output.contains("Signed sequence") && first.output.contains("The signature expires"))
            #expect(first.output.contains("in 29 days") || first.output.contains("in 30 days"), "\(first.output)")
            let firstSequence = try #require(
                try Manifest(data: Data(contentsOf: bundle.appendingPathComponent("manifest.json")), source: "m")
                    .sequence
            )
            let local = try TemporaryFolder("release-device")
            var configuration = SyncConfiguration()
            configuration.trustedKeys = [key.publicKey]
            configuration.retry = RetryPolicy(maxAttempts: 1)
            var environment = ConditionEnvironment()
            environment["language"] = "en"
            let device = BundleSync(
                remote: server.url.appendingPathComponent("Content.freshair/"),
                store: BundleStore(root: local.path("store"), liveLink: local.path("live")),
                environment: environment,
                configuration: configuration
            )
            #expect(try await device.run().outcome == .updated)
            let welcome = { ContentBundle(root: local.path("live"), environment: environment) }
            let title = welcome().localizedString(forKey: "welcome.title", table: "Feature")

            // Nothing changed: the signatures are kept, nothing goes up, the device hears 304.
            let again = try await BreezeBinary.run([
                "release", bundle.path, site, "--key", work.path("release.key").path,
            ])
            #expect(again.status == 0, "\(again.error)")
            #expect(
                again.output.contains("signatures are kept") && again.output.contains(": 0 uploaded"),
                "\(again.output)"
            )
            let current = try await device.run()
            #expect(current.notModified && current.requests == 1, "\(current.oneLine)")
            // generate alone: nothing changed keeps the signatures, byte for byte.
            let signed = try Data(contentsOf: bundle.appendingPathComponent("manifest.json"))
            #expect(try await BreezeBinary.run(["generate", bundle.path]).status == 0)
            #expect(try Data(contentsOf: bundle.appendingPathComponent("manifest.json")) == signed)

            // An edit: the next sequence, with the key from an environment variable as CI has it.
            let edit = try StarterTitle(bundle: bundle)
            let retitle = edit.set
            try retitle("Released")
            let edited = try await BreezeBinary.run(
                ["release", bundle.path, site, "--key-env", "RELEASE_KEY", "--json"],
                environment: ["RELEASE_KEY": try String(contentsOf: work.path("release.key"), encoding: .utf8)]
            )
            #expect(edited.status == 0, "\(edited.error)")
            let report = try JSONSerialization.jsonObject(with: Data(edited.output.utf8)) as? [String: Any]
            // One release, one step: generate and sign do not both move it.
            #expect(
                report?["sequence"] as? Int == firstSequence + 1,
                "the next release after the first: \(edited.output)"
            )
            #expect(try await device.run().outcome == .updated)
            #expect(welcome().localizedString(forKey: "welcome.title", table: "Feature") == "Released")
            #expect(title != "Released")

            // Without the key, over a signed release: refused, nothing replaced.
            try retitle("Unsigned")
            let unsigned = try await BreezeBinary.run(["release", bundle.path, site])
            #expect(unsigned.status == 65, "\(unsigned.status) \(unsigned.error)")
            // A table devices cannot read: validation stops the release before any upload.
            try Data("\"welcome.title\" = ".utf8).write(to: edit.strings)
            let published = try Data(contentsOf: URL(fileURLWithPath: site).appendingPathComponent("manifest.json"))
            let broken = try await BreezeBinary.run([
                "release", bundle.path, site, "--key", work.path("release.key").path,
            ])
            #expect(broken.status == 65 && broken.error.contains("nothing was published"), "\(broken.error)")
            #expect(
                try Data(contentsOf: URL(fileURLWithPath: site).appendingPathComponent("manifest.json")) == published
            )
            #expect(try await device.run().outcome == .alreadyCurrent)

            let missing = try await BreezeBinary.run(["release", work.path("nope").path, site])
            #expect(missing.status == 66 && missing.error.contains("no such file or folder"), "\(missing.error)")
        }
    }

    @Test("a signature is renewed when it has less than a week left, kept otherwise")
    func renewal() throws {
        let key = SigningKey.generate().publicKey
        func manifest(expiresIn days: Double, signedBy signer: TrustedKey) throws -> Manifest {
            let expires = Date().addingTimeInterval(days * 86_400).formatted(.iso8601)
            let text = """
                {"format": 2, "sequence": 4, "expires": "\(expires)", "files": [],
                 "signatures": [{"key": "\(signer.base64)", "sig": "\(Data(count: 64).base64EncodedString())"}]}
                """
            return try Manifest(data: Data(text.utf8), source: "manifest.json")
        }
        #expect(!ReleasePipeline.needsSigning(try manifest(expiresIn: 20, signedBy: key), by: [key], now: Date()))
        #expect(ReleasePipeline.needsSigning(try manifest(expiresIn: 3, signedBy: key), by: [key], now: Date()))
        let other = SigningKey.generate().publicKey
        #expect(ReleasePipeline.needsSigning(try manifest(expiresIn: 20, signedBy: other), by: [key], now: Date()))
    }

    @Test(
        "A staged release reaches 10% of the beta channel and nobody else; widened, stopped by revert, promoted, reverted"
    )
    func stagedReleaseAndRevert() async throws {
        try await PublishedFolder.with(.nginx) { server in
            let work = try TemporaryFolder("staged-release")
            let bundle = work.path("Content.freshair")
            let site = server.root.appendingPathComponent("Content.freshair")
            let keyPath = work.path("release.key").path
            #expect(try await BreezeBinary.run(["init", bundle.path]).status == 0)
            #expect(try await BreezeBinary.run(["keygen", keyPath]).status == 0)
            let key = try SigningKey(contentsOf: work.path("release.key"))
            let retitle = try StarterTitle(bundle: bundle).set
            func release(_ options: [String]) async throws -> BreezeBinary.Run {
                try await BreezeBinary.run(["release", bundle.path, site.path, "--key", keyPath] + options)
            }

            // Devices that pin the key: on the beta channel or not, in a low or a high bucket.
            struct Device {
                let sync: BundleSync
                let environment: ConditionEnvironment
                let live: URL
                var title: String? {
                    ContentBundle(root: live, environment: environment).localizedString(
                        forKey: "welcome.title",
                        table: "Feature"
                    )
                }
            }
            let local = try TemporaryFolder("staged-devices")
            let devices = [("beta", 5), ("beta", 50), (nil, 5), (nil, 90)].map { channel, bucket in
                var configuration = SyncConfiguration()
                configuration.trustedKeys = [key.publicKey]
                configuration.retry = RetryPolicy(maxAttempts: 1)
                var environment = ConditionEnvironment()
                environment["language"] = "en"
                environment[RolloutBucket.key] = .number(String(bucket))
                if let channel { environment["channel"] = .string(channel) }
                let name = "\(channel ?? "none")-\(bucket)"
                let live = local.path("\(name)/live")
                let sync = BundleSync(
                    remote: server.url.appendingPathComponent("Content.freshair/"),
                    store: BundleStore(root: local.path("\(name)/store"), liveLink: live),
                    environment: environment,
                    configuration: configuration
                )
                return Device(sync: sync, environment: environment, live: live)
            }
            func titlesAfterSync() async throws -> [String?] {
                var titles: [String?] = []
                for device in devices {
                    try await device.sync.run()
                    titles.append(device.title)
                }
                return titles
            }

            // To everyone, in the object layout.
            #expect(try await release(["--layout", "objects"]).status == 0)
            #expect(try await titlesAfterSync() == ["Welcome", "Welcome", "Welcome", "Welcome"])

            // Staged: 10% of the beta channel.
            try retitle("Beta")
            let staged = try await release(["--rollout", "10", "--channel", "beta"])
            #expect(staged.status == 0, "\(staged.error)")
            #expect(staged.output.contains("Staged: 10% of installs on the channel beta"), "\(staged.output)")
            #expect(try await titlesAfterSync() == ["Beta", "Welcome", "Welcome", "Welcome"])

            // Widened to 60%: the second beta device too; nobody off the channel.
            #expect(try await release(["--rollout", "60", "--channel", "beta"]).status == 0)
            #expect(try await titlesAfterSync() == ["Beta", "Beta", "Welcome", "Welcome"])

            // Stopped: the release before it, to everyone, under a new sequence devices accept;
            // nothing but manifest.json goes up.
            let objects = try FileManager.default.contentsOfDirectory(
                atPath: site.appendingPathComponent("objects").path
            )
            let stop = try await BreezeBinary.run(["revert", site.path, "--key", keyPath])
            #expect(stop.status == 0, "\(stop.error)")
            #expect(stop.output.contains("the release before the staged one, to everyone"), "\(stop.output)")
            #expect(try await titlesAfterSync() == ["Welcome", "Welcome", "Welcome", "Welcome"])

            // Promoted: released to everyone.
            #expect(try await release([]).status == 0)
            #expect(try await titlesAfterSync() == ["Beta", "Beta", "Beta", "Beta"])

            // The publisher's rollback: the release before, as the next sequence; only a new root.
            let back = try await BreezeBinary.run(["revert", site.path, "--key", keyPath, "--json"])
            #expect(back.status == 0, "\(back.error)")
            let report = try JSONSerialization.jsonObject(with: Data(back.output.utf8)) as? [String: Any]
            let sequence = try #require(report?["sequence"] as? Int)
            #expect(try await titlesAfterSync() == ["Welcome", "Welcome", "Welcome", "Welcome"])
            let released = try Manifest(
                data: Data(contentsOf: site.appendingPathComponent("manifest.json")),
                source: "m"
            )
            #expect(released.sequence == sequence)
            let after = try FileManager.default.contentsOfDirectory(atPath: site.appendingPathComponent("objects").path)
            #expect(Set(after).subtracting(objects).allSatisfy { $0 == "history" || $0.count == 64 })
            #expect(
                Set(after).subtracting(objects).count <= 4,
                "the new roots only: \(Set(after).subtracting(objects))"
            )

            // Mistakes, in words: everyone is not a stage; the path layout cannot keep two releases.
            let hundred = try await release(["--rollout", "100"])
            #expect(hundred.status == 78 && hundred.error.contains("release without --rollout"), "\(hundred.error)")
            let plain = work.path("Plain.freshair").path
            let paths = server.root.appendingPathComponent("Plain.freshair").path
            #expect(try await BreezeBinary.run(["init", plain]).status == 0)
            #expect(
                try await BreezeBinary.run(["release", plain, paths, "--key", keyPath, "--layout", "paths"]).status == 0
            )
            let staging = try await BreezeBinary.run([
                "release", plain, paths, "--key", keyPath, "--rollout", "10",
            ])
            #expect(staging.status == 78 && staging.error.contains("--layout objects"), "\(staging.error)")
            let revertPaths = try await BreezeBinary.run(["revert", paths, "--key", keyPath])
            #expect(revertPaths.status == 78 && revertPaths.error.contains("path layout"), "\(revertPaths.error)")
        }
    }

    @Test(
        "A bundle released under another name (site/Content-beta) is signed for that name, which devices there expect; released back, for its own"
    )
    func identityOfTheDestination() async throws {
        try await PublishedFolder.with(.nginx) { server in
            let work = try TemporaryFolder("identity-destination")
            let bundle = work.path("Content.freshair")
            let keyPath = work.path("release.key").path
            #expect(try await BreezeBinary.run(["init", bundle.path]).status == 0)
            let keygen = try await BreezeBinary.run(["keygen", keyPath])
            let publicKey = try #require(keygen.output.split(separator: "\n").last.map(String.init))
            for name in ["Content-beta", "Content.freshair"] {
                let released = try await BreezeBinary.run([
                    "release", bundle.path, server.root.appendingPathComponent(name).path, "--key", keyPath,
                ])
                #expect(released.status == 0, "\(released.error)")
                let root = try Manifest(
                    data: Data(contentsOf: server.root.appendingPathComponent("\(name)/manifest.json")),
                    source: name
                )
                #expect(root.identity == name)
                // A device pinning the key, at that URL, expecting the name in it (the default).
                let synced = try await BreezeBinary.run([
                    "sync", server.url.appendingPathComponent(name + "/").absoluteString,
                    work.path("live-\(name)").path, "--trusted-key", publicKey,
                ])
                #expect(synced.status == 0, "\(name): \(synced.error)")
            }
            // `publish` cannot sign: it says what devices there would do, and publishes.
            let published = try await BreezeBinary.run([
                "publish", bundle.path, server.root.appendingPathComponent("Other").path, "--json",
            ])
            #expect(published.status == 0, "\(published.error)")
            #expect(published.error.contains("devices that read it here expect \"Other\""), "\(published.error)")
            #expect(published.output.contains("SyncConfiguration.expectedIdentity"), "the JSON report carries it")
            let same = try await BreezeBinary.run([
                "publish", bundle.path, server.root.appendingPathComponent("Content.freshair").path,
            ])
            #expect(same.status == 0 && !same.error.contains("warning"), "\(same.error)")
        }
    }

    @Test(
        "A signed release in the path layout moves to the object layout with --layout objects (signed again: the signature covers the layout), then stages without the flag"
    )
    func pathsToObjectsThenStaged() async throws {
        let work = try TemporaryFolder("paths-to-objects")
        let bundle = work.path("Content.freshair")
        let site = work.path("site/Content.freshair")
        let keyPath = work.path("release.key").path
        #expect(try await BreezeBinary.run(["init", bundle.path]).status == 0)
        #expect(try await BreezeBinary.run(["keygen", keyPath]).status == 0)
        let retitle = try StarterTitle(bundle: bundle).set
        func release(_ extra: [String]) async throws -> BreezeBinary.Run {
            try await BreezeBinary.run(["release", bundle.path, site.path, "--key", keyPath] + extra)
        }
        #expect(try await release(["--layout", "paths"]).status == 0)
        // It said: "manifest.json is signed for the paths layout … run `breeze sign --layout objects`".
        let moved = try await release(["--layout", "objects"])
        #expect(moved.status == 0, "\(moved.error)")
        #expect(moved.output.contains("Signed sequence 2"), "\(moved.output)")
        let root = try Manifest(data: Data(contentsOf: site.appendingPathComponent("manifest.json")), source: "m")
        #expect(root.layout == .objects(at: ContentLayout.defaultLocation))
        try retitle("Two")
        let staged = try await release(["--rollout", "10"])
        #expect(staged.status == 0, "\(staged.error)")
        #expect(staged.output.contains("Staged: 10% of installs"), "\(staged.output)")
    }

    @Test(
        "Whoever writes to the bucket without the key gets nothing signed: a changed root or history object is refused, a huge sequence is an error"
    )
    func tamperedStoreIsNeverSignedAgain() async throws {
        let work = try TemporaryFolder("tampered-release")
        let bundle = work.path("Content.freshair")
        let site = work.path("site/Content.freshair")
        let root = site.appendingPathComponent("manifest.json")
        let keyPath = work.path("release.key").path
        #expect(try await BreezeBinary.run(["init", bundle.path]).status == 0)
        #expect(try await BreezeBinary.run(["keygen", keyPath]).status == 0)
        let retitle = try StarterTitle(bundle: bundle).set
        func breeze(_ arguments: [String]) async throws -> BreezeBinary.Run {
            try await BreezeBinary.run(arguments + ["--key", keyPath])
        }
        /// `data` as a JSON object with `change` applied, as a bucket writer would edit it.
        func edited(_ data: Data, _ change: (inout [String: Any]) -> Void) throws -> Data {
            var json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            change(&json)
            return try JSONSerialization.data(withJSONObject: json)
        }
        #expect(try await breeze(["release", bundle.path, site.path, "--layout", "objects"]).status == 0)
        try retitle("Two")
        #expect(try await breeze(["release", bundle.path, site.path]).status == 0)
        // The writer's file: any object in the store, under a name of their choosing.
        let stored = try FileManager.default.contentsOfDirectory(atPath: site.appendingPathComponent("objects").path)
        let evil: [String: Any] = ["filename": "evil.txt", "sha": try #require(stored.first { $0.count == 64 })]
        let good = try Data(contentsOf: root)

        // A root that claims a staged release whose "previous" files are the writer's.
        let forged = try edited(good) { $0["staged"] = ["percent": 10, "previous": [evil]] }
        try forged.write(to: root)
        try retitle("Three")
        let staged = try await breeze(["release", bundle.path, site.path, "--rollout", "10"])
        #expect(staged.status != 0 && staged.error.contains("not signed by the given key"), "\(staged.error)")
        let stop = try await breeze(["revert", site.path])
        #expect(stop.status != 0 && stop.error.contains("not signed by the given key"), "\(stop.error)")
        #expect(try Data(contentsOf: root) == forged, "nothing published over it")

        // An earlier root in the publish history, changed in place under its name.
        try good.write(to: root)
        let history = site.appendingPathComponent("objects/history")
        let historyFile = try #require(try FileManager.default.contentsOfDirectory(atPath: history.path).first)
        let roots =
            try #require(
                try JSONSerialization.jsonObject(with: Data(contentsOf: history.appendingPathComponent(historyFile)))
                    as? [String: Any]
            )["roots"] as? [[String: Any]]
        let earlier = try #require(roots?.last?["sha256"] as? String)
        let earlierObject = site.appendingPathComponent("objects/\(earlier)")
        try edited(try Data(contentsOf: earlierObject)) {
            $0["files"] = (($0["files"] as? [Any]) ?? []) + [evil]
        }.write(to: earlierObject)
        let back = try await breeze(["revert", site.path])
        #expect(back.status != 0 && back.error.contains("not signed by the given key"), "\(back.error)")
        #expect(back.error.contains(earlier), "names the object: \(back.error)")
        #expect(try Data(contentsOf: root) == good)

        // The largest sequence a manifest holds: no release can follow it, and breeze says so.
        try edited(good) { $0["sequence"] = Int64.max }.write(to: root)
        let after = try await breeze(["release", bundle.path, site.path])
        #expect(after.status == 69 && after.error.contains("largest"), "\(after.status): \(after.error)")
    }

    @Test(
        "A package or repository released again unchanged keeps its signature; a package a device would refuse is not published"
    )
    func packageAndRepositoryReleasedAgain() async throws {
        let work = try TemporaryFolder("release-package")
        let keyPath = work.path("release.key").path
        let keygen = try await BreezeBinary.run(["keygen", keyPath])
        let publicKey = try #require(keygen.output.split(separator: "\n").last.map(String.init))
        try FileManager.default.createDirectory(at: work.path("content"), withIntermediateDirectories: true)
        try Data("hello".utf8).write(to: work.path("content/message.txt"))
        let package = work.path("build/content.tgz").path
        #expect(try await BreezeBinary.run(["package", work.path("content").path, "-o", package]).status == 0)
        let site = work.path("site").path
        let first = try await BreezeBinary.run(["release", package, site, "--key", keyPath])
        #expect(first.status == 0 && first.output.contains("Signed sequence 1"), "\(first.output) \(first.error)")
        let signature = try Data(contentsOf: work.path("site/content.tgz.sig"))
        let again = try await BreezeBinary.run(["release", package, site, "--key", keyPath])
        #expect(again.status == 0 && again.output.contains("its signatures are kept"), "\(again.output)")
        #expect(again.output.contains("0 uploaded"))
        #expect(try Data(contentsOf: work.path("site/content.tgz.sig")) == signature)

        // Packed again after it was signed, then released without a key: its .sig names other
        // bytes, and nothing is published.
        try Data("hello, world".utf8).write(to: work.path("content/message.txt"))
        #expect(try await BreezeBinary.run(["package", work.path("content").path, "-o", package]).status == 0)
        let stale = try await BreezeBinary.run(["release", package, site])
        #expect(stale.status != 0 && stale.error.contains("signed for other bytes"), "\(stale.error)")
        #expect(try Data(contentsOf: work.path("site/content.tgz.sig")) == signature)
        let next = try await BreezeBinary.run(["release", package, site, "--key", keyPath])
        #expect(next.status == 0 && next.output.contains("Signed sequence 2"), "\(next.output) \(next.error)")

        // A repository: the same.
        let repository = work.path("repos/com.example.zoo").path
        #expect(try await BreezeBinary.run(["repo", "add", work.path("content").path, repository]).status == 0)
        let published = work.path("site/com.example.zoo").path
        let signedIndex = try await BreezeBinary.run(["release", repository, published, "--key", keyPath])
        #expect(signedIndex.status == 0 && signedIndex.output.contains("Signed sequence 1"), "\(signedIndex.output)")
        let index = try Data(contentsOf: work.path("site/com.example.zoo/index.json"))
        let indexAgain = try await BreezeBinary.run(["release", repository, published, "--key", keyPath])
        #expect(indexAgain.status == 0 && indexAgain.output.contains("its signatures are kept"), "\(indexAgain.output)")
        #expect(try Data(contentsOf: work.path("site/com.example.zoo/index.json")) == index)

        // Published under another name: signed for the id devices read it by, and installed so.
        let renamed = try await BreezeBinary.run(["release", repository, work.path("site/zoo").path, "--key", keyPath])
        #expect(
            renamed.status == 0 && renamed.output.contains("Signed sequence 2"),
            "\(renamed.output) \(renamed.error)"
        )
        let device = try await BreezeBinary.run([
            "sync", site, work.path("Zoo").path, "--repo", "zoo", "--trusted-key", publicKey,
        ])
        #expect(device.status == 0 && work.path("Zoo/content/message.txt").text == "hello, world", "\(device.error)")
    }

    @Test(
        "A release signed only by another key than the published one is refused, the source unchanged; co-signed or with --switch-keys it goes"
    )
    func anotherKeyIsRefused() async throws {
        let work = try TemporaryFolder("switch-keys")
        for name in ["old", "new"] {
            #expect(try await BreezeBinary.run(["keygen", work.path("\(name).key").path]).status == 0)
        }
        let (old, new) = (work.path("old.key").path, work.path("new.key").path)
        let bundle = work.path("C.freshair").path
        let site = work.path("site/C.freshair").path
        #expect(try await BreezeBinary.run(["init", bundle]).status == 0)
        #expect(try await BreezeBinary.run(["release", bundle, site, "--key", old]).status == 0)
        let manifest = try Data(contentsOf: work.path("C.freshair/manifest.json"))

        let refused = try await BreezeBinary.run(["release", bundle, site, "--key", new])
        #expect(refused.status == 65 && refused.error.contains("--switch-keys"), "\(refused.status): \(refused.error)")
        #expect(try Data(contentsOf: work.path("C.freshair/manifest.json")) == manifest)  // not signed
        #expect(try Data(contentsOf: work.path("site/C.freshair/manifest.json")) == manifest)  // not published
        let both = try await BreezeBinary.run(["release", bundle, site, "--key", old, "--key", new])
        #expect(both.status == 0, "\(both.error)")

        // `publish` of a bundle signed since by the new key alone (a new release drops the
        // signatures of earlier ones): the same check, the same way past it.
        let second = work.path("D.freshair").path
        let other = work.path("site/D.freshair").path
        #expect(try await BreezeBinary.run(["init", second]).status == 0)
        #expect(try await BreezeBinary.run(["release", second, other, "--key", old]).status == 0)
        #expect(try await BreezeBinary.run(["sign", second, "--key", new]).status == 0)
        let published = try await BreezeBinary.run(["publish", second, other])
        #expect(published.status != 0 && published.error.contains("would be signed by"), "\(published.error)")
        let switched = try await BreezeBinary.run(["publish", second, other, "--switch-keys"])
        #expect(switched.status == 0, "\(switched.error)")

        // A package: its .sig is the document devices check.
        try FileManager.default.createDirectory(at: work.path("content"), withIntermediateDirectories: true)
        try Data("hello".utf8).write(to: work.path("content/message.txt"))
        let package = work.path("content.tgz").path
        #expect(try await BreezeBinary.run(["package", work.path("content").path, "-o", package]).status == 0)
        #expect(try await BreezeBinary.run(["release", package, work.path("site").path, "--key", old]).status == 0)
        let package2 = try await BreezeBinary.run(["release", package, work.path("site").path, "--key", new])
        #expect(
            package2.status == 65 && package2.error.contains("published content.tgz.sig is signed by"),
            "\(package2.status): \(package2.error)"
        )
    }

    @Test("strace: a package release reads the package once for its digest, besides installing and copying it")
    func packageReadOnce() async throws {
        try DurabilityTests.requireStrace()
        let work = try TemporaryFolder("release-reads")
        #expect(try await BreezeBinary.run(["keygen", work.path("release.key").path]).status == 0)
        try FileManager.default.createDirectory(at: work.path("content"), withIntermediateDirectories: true)
        try Data("hello".utf8).write(to: work.path("content/message.txt"))
        let package = work.path("content.tgz").path
        #expect(try await BreezeBinary.run(["package", work.path("content").path, "-o", package]).status == 0)
        // Signed, checked, copied to the site: its digest, the install, the copy. Then again,
        // unchanged: its signature kept, nothing copied.
        for (run, said, reads) in [(1, "Signed sequence 1", 3), (2, "its signatures are kept", 2)] {
            let output = try await shell(
                "strace -f -qq -e trace=open,openat,openat2 -o trace\(run).txt '\(try BreezeBinary.path)' release "
                    + "'\(package)' '\(work.path("site").path)' --key '\(work.path("release.key").path)'",
                in: work.url
            )
            #expect(output.contains(said), "\(output)")
            // The release reads its working copy, whose file is a link to the package.
            let opens = (work.path("trace\(run).txt").text ?? "").split(separator: "\n").filter {
                ($0.contains("\"\(package)\"") || $0.contains("/breeze-release-") && $0.contains("/content.tgz\""))
                    && !$0.contains("ENOENT")
            }
            // Each step used to read it for its own digest: signing (or the check that its
            // signature still holds), validation, publishing, the comparison with the copy
            // already published.
            #expect(
                opens.count == reads,
                "release \(run) opened the package \(opens.count) times:\n\(opens.joined(separator: "\n"))"
            )
        }
    }
}

/// An author's edit of a `breeze init` starter: its English welcome title set to another.
struct StarterTitle {
    let strings: URL
    let starter: String

    init(bundle: URL) throws {
        strings = bundle.appendingPathComponent("en.lproj/Feature.strings")
        starter = try String(contentsOf: strings, encoding: .utf8)
    }

    func set(_ title: String) throws {
        let lines = starter.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            line.hasPrefix("\"welcome.title\"") ? "\"welcome.title\" = \"\(title)\";" : String(line)
        }
        try Data(lines.joined(separator: "\n").utf8).write(to: strings)
    }
}
