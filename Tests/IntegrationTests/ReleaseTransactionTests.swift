import BreezeKit
import Foundation
import FreshAir
import Testing

/// A release is a transaction: racing releases, a stale copy, an empty folder or a refused
/// release never break or downgrade a device, and the source changes only when it succeeds.
/// One test at a time: the races start 80 breeze processes (`scripts/test` runs the two races
/// on their own, before the rest: beside 96 other tests on 2 cores they starved the transport
/// tests' time limits).
@Suite(
    "A release is a transaction: one of two racing releases wins, sequences only go up, removals are guarded",
    .serialized
)
struct ReleaseTransactionTests {
    /// A bundle folder `name` under `folder` holding `files`.
    static func bundle(_ name: String, in folder: URL, _ files: [String: String]) throws -> URL {
        let bundle = folder.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: bundle, withIntermediateDirectories: true)
        for (path, text) in files { try Data(text.utf8).write(to: bundle.appendingPathComponent(path)) }
        return bundle
    }

    /// A key file made by `breeze keygen`, and its key.
    static func key(in work: TemporaryFolder) async throws -> (path: String, key: SigningKey) {
        let path = work.path("release.key").path
        let run = try await BreezeBinary.run(["keygen", path])
        #expect(run.status == 0, "\(run.error)")
        return (path, try SigningKey(contentsOf: URL(fileURLWithPath: path)))
    }

    /// A bucket of its own on the test run's Ceph gateway, named `prefix-…`.
    static func newBucket(_ prefix: String) async throws -> (CephGateway, String) {
        let ceph = try await CephGateway.shared()
        let bucket = "\(prefix)-\(UUID().uuidString.prefix(8).lowercased())"
        try await PublishDestinations.with("s3://\(bucket)", endpoint: ceph.endpoint, environment: ceph.credentials) {
            try await ($0 as! S3Destination).createBucket()
        }
        return (ceph, bucket)
    }

    /// A release's sequence, from `--json`.
    static func sequence(of run: BreezeBinary.Run) -> Int? {
        ((try? JSONSerialization.jsonObject(with: Data(run.output.utf8))) as? [String: Any])?["sequence"] as? Int
    }

    /// Twenty pairs of releases of different content started together into `destination`
    /// (object layout, one key); after each pair a device that pins the key syncs. Returns how
    /// many pairs overlapped (one lost with 75).
    static func race(
        into destination: String,
        extra: [String] = [],
        environment: [String: String] = [:],
        device url: URL
    ) async throws -> Int {
        let work = try TemporaryFolder("race")
        let (keyPath, key) = try await key(in: work)
        let local = try TemporaryFolder("race-device")
        let device = testDevice(url, in: local) { $0.trustedKeys = [key.publicKey] }
        let release: @Sendable (URL) async throws -> BreezeBinary.Run = { source in
            try await BreezeBinary.run(
                ["release", source.path, destination, "--key", keyPath, "--layout", "objects", "--json"] + extra,
                environment: environment
            )
        }
        let seed = try bundle("seed/App", in: work.url, ["a.txt": "seed", "b.txt": "shared"])
        #expect(try await release(seed).status == 0)
        _ = try await device.run()
        var overlapped = 0
        var wins = 0
        for pair in 0..<20 {
            let a = try bundle("a\(pair)/App", in: work.url, ["a.txt": "A\(pair)", "b.txt": "shared"])
            let b = try bundle("b\(pair)/App", in: work.url, ["a.txt": "B\(pair)", "b.txt": "shared"])
            async let first = release(a)
            async let second = release(b)
            let runs = try await [first, second]
            let won = runs.filter { $0.status == 0 }
            let lost = runs.filter { $0.status != 0 }
            wins += won.count
            #expect(!won.isEmpty, "pair \(pair): neither release won: \(runs.map(\.error))")
            for run in lost {
                #expect(
                    run.status == 75 && run.error.contains("another release reached")
                        && run.error.contains("hint: run the same `breeze release` again"),
                    "pair \(pair): \(run.error)"
                )
            }
            if lost.isEmpty {
                // One after the other: the second signed above the first.
                #expect(Set(won.compactMap(sequence)).count == 2, "pair \(pair): both won at one sequence")
            } else {
                overlapped += 1
            }
            // The device takes what is live, never refusing it, and it is one release's exactly.
            do { _ = try await device.run() } catch {
                Issue.record("pair \(pair): the device refused what it found: \(error)")
            }
            let text = local.path("live/a.txt").text
            #expect(text == "A\(pair)" || text == "B\(pair)", "pair \(pair): the device has \(text ?? "nothing")")
            let winner = won.max { (sequence(of: $0) ?? 0) < (sequence(of: $1) ?? 0) }
            let winnerText = winner.map { runs[0].output == $0.output ? "A\(pair)" : "B\(pair)" }
            #expect(text == winnerText, "pair \(pair): the device has \(text ?? "nothing"), not the winner's")
        }
        // The history names every release that became live, and none that lost.
        let history = try await BreezeBinary.run(
            ["history", destination, "--json"] + extra.prefix(2),
            environment: environment
        )
        let listed = (try? JSONSerialization.jsonObject(with: Data(history.output.utf8))) as? [[String: Any]]
        #expect(listed?.count == 1 + wins, "\(history.error)")
        #expect(listed?.first?["live"] as? Bool == true)
        return overlapped
    }

    @Test("20 pairs of releases into one served folder: one of each racing pair wins, devices never refuse")
    func racingReleasesIntoAFolder() async throws {
        try await PublishedFolder.with(.nginx) { server in
            let overlapped = try await Self.race(
                into: server.root.appendingPathComponent("App").path,
                device: server.url.appendingPathComponent("App/")
            )
            #expect(overlapped > 0, "no pair overlapped: the race was never run")
        }
    }

    @Test("20 pairs of releases into Ceph's S3 gateway: If-Match lets one of each racing pair win")
    func racingReleasesIntoCeph() async throws {
        let (ceph, bucket) = try await Self.newBucket("race")
        let overlapped = try await Self.race(
            into: "s3://\(bucket)/App",
            extra: ["--endpoint", ceph.endpoint, "--acl", "public-read"],
            environment: ceph.credentials,
            device: ceph.url(bucket, "App/")
        )
        #expect(overlapped > 0, "no pair overlapped: the race was never run")
    }

    @Test("The root is replaced only while it is the one read: a folder's lock and S3's If-Match / If-None-Match")
    func compareAndSwap() async throws {
        let (ceph, bucket) = try await Self.newBucket("swap")
        let folder = try TemporaryFolder("swap")
        for target in [folder.path("site").path, "s3://\(bucket)/site"] {
            try await PublishDestinations.with(target, endpoint: ceph.endpoint, environment: ceph.credentials) {
                destination in
                let empty = try await LiveRoot.read("manifest.json", at: destination)
                #expect(empty.object == nil)
                _ = try await empty.replace(with: Data("one".utf8), at: destination)
                // A second writer that also saw nothing there loses.
                await #expect(throws: PublishError.self) {
                    try await empty.replace(with: Data("two".utf8), at: destination)
                }
                let one = try await LiveRoot.read("manifest.json", at: destination)
                #expect(one.data == Data("one".utf8))
                _ = try await one.replace(with: Data("three".utf8), at: destination)
                do {
                    _ = try await one.replace(with: Data("four".utf8), at: destination)
                    Issue.record("\(target): a write over a root that changed since it was read went through")
                } catch let error as PublishError {
                    #expect(error.kind == .conflict && error.description.contains("another release reached"))
                }
                #expect(try await destination.read("manifest.json") == Data("three".utf8), "\(target)")
            }
        }
    }

    @Test(
        "Sequences only go up: a stale signed copy is refused by release and publish; the same release again is a no-op"
    )
    func staleCopyRefused() async throws {
        try await PublishedFolder.with(.nginx) { server in
            let work = try TemporaryFolder("stale")
            let (keyPath, key) = try await Self.key(in: work)
            let site = server.root.appendingPathComponent("App").path
            let bundle = try Self.bundle("App", in: work.url, ["a.txt": "one"])
            #expect(try await BreezeBinary.run(["release", bundle.path, site, "--key", keyPath]).status == 0)
            let stale = work.path("stale")
            try FileManager.default.copyItem(at: bundle, to: stale)
            try Data("two".utf8).write(to: bundle.appendingPathComponent("a.txt"))
            #expect(try await BreezeBinary.run(["release", bundle.path, site, "--key", keyPath]).status == 0)
            let live = try Data(contentsOf: URL(fileURLWithPath: site + "/manifest.json"))

            let local = try TemporaryFolder("stale-device")
            let device = testDevice(server.url.appendingPathComponent("App/"), in: local) {
                $0.trustedKeys = [key.publicKey]
            }
            _ = try await device.run()
            for command in ["release", "publish"] {
                let run = try await BreezeBinary.run([command, stale.path, site])
                #expect(run.status == 65, "\(command): \(run.status) \(run.error)")
                #expect(
                    run.error.contains("sequence 1, but sequence 2 is live")
                        && run.error.contains("release it with --key")
                        && run.error.contains("hint: in the object layout, `breeze revert \(site) --key KEY_FILE`"),
                    "\(command): \(run.error)"
                )
                #expect(try Data(contentsOf: URL(fileURLWithPath: site + "/manifest.json")) == live, "\(command)")
            }
            // The live release again: nothing to do, exit 0.
            let again = try await BreezeBinary.run(["publish", bundle.path, site])
            #expect(again.status == 0, "\(again.error)")
            _ = try await device.run()
            #expect(local.path("live/a.txt").text == "two")
        }
    }

    @Test("An empty or wrong folder is refused before devices lose their files; a dry run lists the removals")
    func removalsGuarded() async throws {
        try await PublishedFolder.with(.nginx) { server in
            let work = try TemporaryFolder("removals")
            let (keyPath, _) = try await Self.key(in: work)
            let site = server.root.appendingPathComponent("App").path
            let files = Dictionary(uniqueKeysWithValues: (1...4).map { ("f\($0).txt", "file \($0)") })
            let bundle = try Self.bundle("App", in: work.url, files)
            #expect(try await BreezeBinary.run(["release", bundle.path, site, "--key", keyPath]).status == 0)
            let live = try Data(contentsOf: URL(fileURLWithPath: site + "/manifest.json"))

            let wrong = try Self.bundle("Wrong", in: work.url, [:])
            let refused = try await BreezeBinary.run(["release", wrong.path, site, "--key", keyPath])
            #expect(refused.status == 65, "\(refused.error)")
            #expect(refused.error.contains("every file devices have (4)") && refused.error.contains("--allow-removals"))
            #expect(try Data(contentsOf: URL(fileURLWithPath: site + "/manifest.json")) == live)
            #expect(
                !FileManager.default.fileExists(atPath: wrong.appendingPathComponent("manifest.json").path),
                "a refused release wrote into its source"
            )

            let dry = try await BreezeBinary.run(["release", wrong.path, site, "--key", keyPath, "--dry-run"])
            #expect(dry.status == 0, "\(dry.error)")
            #expect(dry.output.contains("would remove for devices: f1.txt"), "\(dry.output)")

            // Three of four go: more than half.
            for name in ["f1.txt", "f2.txt", "f3.txt"] {
                try FileManager.default.removeItem(at: bundle.appendingPathComponent(name))
            }
            let most = try await BreezeBinary.run(["release", bundle.path, site, "--key", keyPath])
            #expect(most.status == 65 && most.error.contains("3 of the 4 files"), "\(most.error)")
            let allowed = try await BreezeBinary.run([
                "release", bundle.path, site, "--key", keyPath, "--allow-removals",
            ])
            #expect(allowed.status == 0, "\(allowed.error)")
            #expect(allowed.output.contains("removed for devices: f2.txt"), "\(allowed.output)")
        }
    }

    @Test("A refused release leaves the source as it was: a key inside the bundle, then removed, releases cleanly")
    func refusedReleaseLeavesTheSource() async throws {
        let work = try TemporaryFolder("refused")
        let (keyPath, _) = try await Self.key(in: work)
        let bundle = try Self.bundle("App", in: work.url, ["a.txt": "one"])
        let site = work.path("site/App").path
        #expect(try await BreezeBinary.run(["release", bundle.path, site, "--key", keyPath]).status == 0)
        let manifest = bundle.appendingPathComponent("manifest.json")
        let before = try Data(contentsOf: manifest)

        try FileManager.default.copyItem(atPath: keyPath, toPath: bundle.appendingPathComponent("release.key").path)
        try Data("two".utf8).write(to: bundle.appendingPathComponent("a.txt"))
        let refused = try await BreezeBinary.run(["release", bundle.path, site, "--key", keyPath])
        #expect(refused.status == 65 && refused.error.contains("release.key is a signing key"), "\(refused.error)")
        #expect(try Data(contentsOf: manifest) == before, "the refused release rewrote the source's manifest.json")

        try FileManager.default.removeItem(at: bundle.appendingPathComponent("release.key"))
        let released = try await BreezeBinary.run(["release", bundle.path, site, "--key", keyPath])
        #expect(released.status == 0, "\(released.error)")
        #expect(try Data(contentsOf: manifest) != before, "a successful release updates the source")
        #expect(try Data(contentsOf: manifest) == Data(contentsOf: URL(fileURLWithPath: site + "/manifest.json")))
    }

    @Test("--key takes only keygen's key file; the secret line alone inside the bundle is never published")
    func keyHygiene() async throws {
        let work = try TemporaryFolder("keys")
        let (keyPath, key) = try await Self.key(in: work)
        let bundle = try Self.bundle("App", in: work.url, ["a.txt": "one"])
        let site = work.path("site/App").path

        let publicOnly = work.path("public.key")
        try Data("\(key.publicKey.base64)\n".utf8).write(to: publicOnly)
        let wrongKey = try await BreezeBinary.run(["release", bundle.path, site, "--key", publicOnly.path])
        #expect(wrongKey.status == 65 && wrongKey.error.contains("looks like the public key"), "\(wrongKey.error)")
        #expect(!FileManager.default.fileExists(atPath: site))

        let keyText = try String(contentsOfFile: keyPath, encoding: .utf8)
        let secretLine = try #require(keyText.split(separator: "\n").first { !$0.hasPrefix("#") })
        try Data("token = \(secretLine)\n".utf8).write(to: bundle.appendingPathComponent("config.txt"))
        for layout in ["paths", "objects"] {
            let leaked = try await BreezeBinary.run([
                "release", bundle.path, site, "--key", keyPath, "--layout", layout,
            ])
            #expect(leaked.status == 65, "\(layout): \(leaked.error)")
            #expect(leaked.error.contains("config.txt holds the secret of the signing key"), "\(leaked.error)")
            #expect(!FileManager.default.fileExists(atPath: site + "/manifest.json"), "\(layout)")
        }
    }

    @Test("What a release carries back to its source is only what it wrote: an author's edits made meanwhile stay")
    func writeBackKeepsTheAuthorsEdits() throws {
        let work = try TemporaryFolder("write-back")
        let source = try Self.bundle(
            "App",
            in: work.url,
            [
                "a.txt": "a", "b.txt": "b", "old.pack": "pack", "gone.txt": "gone",
            ]
        )
        // The working copy as a release makes it: every file a link to the source's.
        let working = work.path("copy/App")
        try FileManager.default.createDirectory(at: working, withIntermediateDirectories: true)
        for name in ["a.txt", "b.txt", "old.pack", "gone.txt"] {
            try FileManager.default.linkItem(
                at: source.appendingPathComponent(name),
                to: working.appendingPathComponent(name)
            )
        }
        let made = try SourceWriteBack.snapshot(of: working)

        // The release's tools replace files by renaming new ones over them, and remove some.
        try Data("a, generated".utf8).write(to: working.appendingPathComponent("a.txt"), options: .atomic)
        try Data("{}".utf8).write(to: working.appendingPathComponent("manifest.json"), options: .atomic)
        try FileManager.default.removeItem(at: working.appendingPathComponent("old.pack"))
        try FileManager.default.removeItem(at: working.appendingPathComponent("gone.txt"))
        // Meanwhile the author saves in the source.
        try Data("b, edited".utf8).write(to: source.appendingPathComponent("b.txt"), options: .atomic)
        try Data("new".utf8).write(to: source.appendingPathComponent("new.txt"))
        try Data("gone, edited".utf8).write(to: source.appendingPathComponent("gone.txt"), options: .atomic)

        try SourceWriteBack.apply(from: working, to: source, made: made)
        #expect(source.appendingPathComponent("a.txt").text == "a, generated")
        #expect(source.appendingPathComponent("manifest.json").text == "{}")
        #expect(!FileManager.default.fileExists(atPath: source.appendingPathComponent("old.pack").path))
        #expect(source.appendingPathComponent("b.txt").text == "b, edited", "the author's edit was overwritten")
        #expect(source.appendingPathComponent("new.txt").text == "new", "the author's new file was removed")
        #expect(source.appendingPathComponent("gone.txt").text == "gone, edited", "the author's edit was removed")
    }

}
