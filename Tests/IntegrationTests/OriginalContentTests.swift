import BreezeKit
import Foundation
import FreshAir
import Testing

/// Content shaped as the original libraries shipped it (FreshAir's schema examples, the
/// Android port's release notes, Fresh's `tar -czf content.gz`, ADM's index), loaded as a user
/// migrating from them would.
@Suite("Fidelity to the originals' content")
struct OriginalContentTests {
    /// FreshAir's `TestBasic.freshair`: an entry iOS never selects carries a placeholder digest.
    static func writeBasicBundle(in folder: URL) throws -> URL {
        let bundle = folder.appendingPathComponent("TestBasic.freshair")
        try FileManager.default.createDirectory(at: bundle, withIntermediateDirectories: true)
        let files = ["not_on_ios": "mac only\n", "gt_version_1": "newer app\n", "lte_version_1": "older app\n"]
        for (name, text) in files { try Data(text.utf8).write(to: bundle.appendingPathComponent(name)) }
        let sha1 = { (name: String) in ContentHash.of(Data(files[name]!.utf8), using: .sha1).hex }
        let manifest = """
            [
              {"sha" : "THISINVALIDSHASHOULDNOTBEREPORTED", "filename" : "not_on_ios",
               "conditions" : [{"key" : "platform", "comparison" : "ne", "value" : "iOS"}]},
              {"sha" : "\(sha1("gt_version_1"))", "filename" : "gt_version_1",
               "conditions" : [{"key" : "appVersion", "comparison" : "gt", "value" : "1.0"}]},
              {"sha" : "\(sha1("lte_version_1"))", "filename" : "lte_version_1",
               "conditions" : [{"key" : "appVersion", "comparison" : "lte", "value" : "1.0"}]}
            ]
            """
        try Data(manifest.utf8).write(to: bundle.appendingPathComponent("manifest.json"))
        return bundle
    }

    /// Edits the bundle's manifest as text, as an author would by hand.
    static func editManifest(of bundle: URL, replacing old: String, with new: String) throws {
        let url = bundle.appendingPathComponent("manifest.json")
        try Data(try String(contentsOf: url, encoding: .utf8).replacingOccurrences(of: old, with: new).utf8).write(
            to: url
        )
    }

    func sync(_ url: URL, into local: TemporaryFolder, _ values: [String: String]) -> BundleSync {
        var environment = ConditionEnvironment()
        for (key, value) in values { environment[key] = .string(value) }
        var configuration = SyncConfiguration()
        configuration.retry = RetryPolicy(maxAttempts: 1)
        return BundleSync(
            remote: url,
            store: BundleStore(root: local.path("store"), liveLink: local.path("live")),
            environment: environment,
            configuration: configuration
        )
    }

    @Test(
        "A broken entry another platform would select does not stop an iOS device; a device that selects it refuses it"
    )
    func brokenEntryOnlyMattersWhereSelected() async throws {
        try await PublishedFolder.with(.nginx) { server in
            _ = try Self.writeBasicBundle(in: server.root)
            let url = server.url.appendingPathComponent("TestBasic.freshair/")
            let phone = try TemporaryFolder("basic-ios")
            let summary = try await sync(url, into: phone, ["platform": "iOS", "appVersion": "2.0"]).run()
            #expect(summary.outcome == .updated)
            #expect(phone.path("live/gt_version_1").text == "newer app\n")
            #expect(!FileManager.default.fileExists(atPath: phone.path("live/not_on_ios").path))

            let mac = try TemporaryFolder("basic-mac")
            await #expect {
                try await sync(url, into: mac, ["platform": "macOS", "appVersion": "2.0"]).run()
            } throws: { error in
                "\(error)".contains("entry 0 (\"not_on_ios\"): \"sha\" must be 40 (SHA-1) or 64 (SHA-256) hex digits")
            }
            #expect(!FileManager.default.fileExists(atPath: mac.path("live").path))
        }
    }

    @Test(
        "validate: a broken entry no targeted platform selects is a warning, one that some device selects an error, and no false 'in no manifest'"
    )
    func validateJudgesBrokenEntriesBySelection() async throws {
        let work = try TemporaryFolder("basic-validate")
        let bundle = try Self.writeBasicBundle(in: work.url)
        let problems = await BundleValidator.run(bundle: bundle)
        #expect(problems.count == 1)
        #expect(problems.first?.severity == .warning)
        #expect(problems.first?.message.contains("entry 0 (\"not_on_ios\")") == true)
        #expect(problems.first?.message.contains("no platform this bundle names (iOS) selects it") == true)

        // The same placeholder on an entry an iOS device with a newer app selects: an error.
        try Self.editManifest(
            of: bundle,
            replacing: ContentHash.of(Data("newer app\n".utf8), using: .sha1).hex,
            with: "ABCDEF012345"
        )
        let second = await BundleValidator.run(bundle: bundle)
        let errors = second.filter { $0.severity == .error }
        #expect(errors.count == 1 && errors.first?.message.contains("entry 1 (\"gt_version_1\")") == true)
        #expect(!second.contains { $0.message.contains("on disk but in no manifest") })

        // A manifest that cannot be read at all: its error, and no warning for every file it lists.
        try Data("[{\"filename\": \"gt_version_1\", ".utf8).write(to: bundle.appendingPathComponent("manifest.json"))
        let third = await BundleValidator.run(bundle: bundle)
        #expect(third.count == 1 && third.first?.severity == .error && third.first?.file == "manifest.json")
    }

    @Test("validate warns about keys FreshAir does not read, in manifests and release notes")
    func validateWarnsAboutUnknownKeys() async throws {
        let work = try TemporaryFolder("unknown-keys")
        let bundle = try Self.writeBasicBundle(in: work.url)
        try Self.editManifest(
            of: bundle,
            replacing: "\"filename\" : \"gt_version_1\"",
            with: "\"filename\" : \"gt_version_1\", \"conditon\": \"appVersion > 3\""
        )
        try Data(
            #"{"releases": [{"version": "1.1", "minimumSytemVersion": "8.0", "features": []}], "minimumVersion": "1.0", "upgradeUrl": "x"}"#
                .utf8
        )
        .write(to: bundle.appendingPathComponent("release_notes.json"))
        let problems = await BundleValidator.run(bundle: bundle).filter { $0.message.contains("unknown key") }
        #expect(Set(problems.compactMap(\.key)) == ["conditon", "minimumSytemVersion", "upgradeUrl"])
        #expect(problems.allSatisfy { $0.severity == .warning })
        #expect(
            problems.contains {
                $0.file == "manifest.json" && $0.message.hasPrefix("entry 1: unknown key \"conditon\"")
            }
        )
    }

    /// The Android port's release notes: versions and `minimumSystemVersion` as the system's API level.
    static let androidReleaseNotes = #"""
        {"releases": [{"version": "11", "minimumSystemVersion": "8", "features": ["eleven"]},
                      {"version": "12", "minimumSystemVersion": "14", "features": ["twelve"]},
                      {"version": "20", "minimumSystemVersion": "14", "features": ["twenty"]},
                      {"version": "21", "minimumSystemVersion": "50", "features": ["twenty_one"]}],
         "minimumVersion": "12"}
        """#

    @Test("minimumSystemVersion: a release a device's system cannot run is neither offered nor announced")
    func minimumSystemVersionApplies() async throws {
        let notes = try ReleaseNotes(data: Data(Self.androidReleaseNotes.utf8), source: "release_notes.json")
        let device = { (system: String) in ConditionEnvironment(["systemVersion": .string(system)]) }
        #expect(notes.updateStatus(current: Version("20")!, environment: device("30")) == .upToDate)
        #expect(
            notes.updateStatus(current: Version("20")!, environment: device("60"))
                == .available(Version("21")!, url: nil)
        )
        #expect(
            notes.updateStatus(current: Version("12")!, environment: device("30"))
                == .available(Version("20")!, url: nil)
        )
        // Below minimumVersion is still "required": the publisher withdrew the running version.
        #expect(
            notes.updateStatus(current: Version("11")!, environment: device("30"))
                == .required(minimum: Version("12")!, url: nil)
        )
        #expect(
            notes.featuresNew(from: Version("11"), to: Version("21")!, environment: device("30")).map(\.key) == [
                "twelve", "twenty",
            ]
        )
        // An unknown system version runs nothing that names a minimum.
        #expect(notes.releases(for: ConditionEnvironment()).isEmpty)

        // And as a user runs it.
        let work = try TemporaryFolder("android-notes")
        try Data(Self.androidReleaseNotes.utf8).write(to: work.path("release_notes.json"))
        let low = try await BreezeBinary.run([
            "check-update", work.url.path, "--app-version", "20", "--env", "systemVersion=30",
        ])
        #expect(low.status == 0 && low.output == "up to date\n")
        let high = try await BreezeBinary.run([
            "check-update", work.url.path, "--app-version", "20", "--env", "systemVersion=60",
        ])
        #expect(high.output == "available 21\n")
    }

    @Test("An untouched original bundle without sizes passes hash --check, is not rewritten by hash, and publishes")
    func missingSizeIsNotStale() async throws {
        let work = try TemporaryFolder("no-sizes")
        let bundle = try Self.writeBasicBundle(in: work.url)
        // A bundle the original tool wrote: every digest current, no sizes.
        try Self.editManifest(
            of: bundle,
            replacing: "THISINVALIDSHASHOULDNOTBEREPORTED",
            with: ContentHash.of(Data("mac only\n".utf8), using: .sha1).hex
        )
        let manifestURL = bundle.appendingPathComponent("manifest.json")
        let before = try Data(contentsOf: manifestURL)

        let check = try await BreezeBinary.run(["hash", bundle.path, "--check"])
        #expect(check.status == 0)
        #expect(check.output.contains("3 files hashed; 0 stale; 0 missing."))
        let hash = try await BreezeBinary.run(["hash", bundle.path])
        #expect(hash.status == 0 && hash.output.contains("0 manifests written."))
        #expect(try Data(contentsOf: manifestURL) == before)

        let publish = try await BreezeBinary.run(["publish", bundle.path, work.path("site").path])
        #expect(publish.status == 0, "\(publish.error)")
        #expect(try Data(contentsOf: work.path("site/manifest.json")) == before)

        // A real change: that entry is stale, and the rewritten manifest gains every size.
        try Data("newer app, edited\n".utf8).write(to: bundle.appendingPathComponent("gt_version_1"))
        #expect(try await BreezeBinary.run(["hash", bundle.path, "--check"]).status == 1)
        let rewritten = try await BreezeBinary.run(["hash", bundle.path])
        #expect(rewritten.output.contains("1 updated") && rewritten.output.contains("1 manifest written."))
        let entries = try JSONReader.parse(Data(contentsOf: manifestURL)).array ?? []
        #expect(entries.map { $0["size"]?.integer } == [9, 18, 10])
    }

    @Test(
        "A .gz holding a tar archive (Fresh's own `tar -czf content.gz`) installs its files; a plain .gz stays one file"
    )
    func gzipOfTarIsATarPackage() async throws {
        try await PublishedFolder.with(.nginx) { server in
            try FileManager.default.createDirectory(
                at: server.root.appendingPathComponent("src/data"),
                withIntermediateDirectories: true
            )
            try Data("hello from fresh\n".utf8).write(to: server.root.appendingPathComponent("src/data/message.txt"))
            try Data("{}".utf8).write(to: server.root.appendingPathComponent("src/index.json"))
            _ = try await shell(
                "tar -czf content.gz -C src . && gzip -c src/data/message.txt > note.txt.gz",
                in: server.root
            )

            let local = try TemporaryFolder("gz-tar")
            var configuration = SyncConfiguration()
            configuration.retry = RetryPolicy(maxAttempts: 1)
            let updater = PackageUpdater(
                remote: server.url.appendingPathComponent("content.gz"),
                store: BundleStore(root: local.path("store"), liveLink: local.path("Content")),
                configuration: configuration
            )
            #expect(try await updater.update().outcome == .downloaded)
            #expect(local.path("Content/data/message.txt").text == "hello from fresh\n")
            #expect(local.path("Content/index.json").text == "{}")
            #expect(!FileManager.default.fileExists(atPath: local.path("Content/content").path))

            let single = PackageUpdater(
                remote: server.url.appendingPathComponent("note.txt.gz"),
                store: BundleStore(root: local.path("store2"), liveLink: local.path("Note")),
                configuration: configuration
            )
            try await single.update()
            #expect(try FileManager.default.contentsOfDirectory(atPath: local.path("Note").path) == ["note.txt"])
            #expect(local.path("Note/note.txt").text == "hello from fresh\n")

            // Cut short inside the tar it holds: refused, as a .tgz would be.
            _ = try await shell("head -c $(( $(stat -c %s content.gz) - 40 )) content.gz > cut.gz", in: server.root)
            let cut = PackageUpdater(
                remote: server.url.appendingPathComponent("cut.gz"),
                store: BundleStore(root: local.path("store3"), liveLink: local.path("Cut")),
                configuration: configuration
            )
            await #expect(throws: FreshAirError.self) { try await cut.update() }
            #expect(!FileManager.default.fileExists(atPath: local.path("Cut").path))
        }
    }

    @Test("file:// sources: a local bundle folder, package and repository sync with the same checks and switch")
    func fileSources() async throws {
        let work = try TemporaryFolder("file-sources")
        try ExampleBundle.write(in: work.url)
        let bundleURL = "file://" + work.path(ExampleBundle.name).path + "/"

        let first = try await BreezeBinary.run([
            "sync", bundleURL, work.path("live").path, "--env", "appVersion=0.9", "--env", "platform=iOS", "--env",
            "systemVersion=9.0",
        ])
        #expect(first.status == 0, "\(first.error)")
        #expect(work.path("live/Embed1.freshair/foo.md").text == ExampleBundle.contents["Embed1.freshair/foo.md"])
        let again = try await BreezeBinary.run([
            "sync", bundleURL, work.path("live").path, "--env", "appVersion=0.9", "--env", "platform=iOS", "--env",
            "systemVersion=9.0",
        ])
        #expect(again.output.contains("304 Not Modified") && again.output.contains("1 request"))

        // A new release: hashed, then the file changed again behind the manifest's back. Its digest
        // no longer matches, so the sync is refused and the live version stays.
        let folder = work.path(ExampleBundle.name)
        let foo = folder.appendingPathComponent("Embed1.freshair/foo.md")
        try Data("release two\n".utf8).write(to: foo)
        try await BreezeBinary.run(["hash", folder.path]).expectSuccess()
        try Data("release TWO\n".utf8).write(to: foo)  // same size, other bytes
        let refused = try await BreezeBinary.run([
            "sync", folder.path, work.path("live").path, "--env", "appVersion=0.9", "--env", "platform=iOS", "--env",
            "systemVersion=9.0",
        ])
        #expect(
            refused.status == 65 && refused.error.contains("foo.md: downloaded content does not match its manifest"),
            "\(refused.error)"
        )
        #expect(work.path("live/Embed1.freshair/foo.md").text == ExampleBundle.contents["Embed1.freshair/foo.md"])
        try await BreezeBinary.run(["hash", folder.path]).expectSuccess()
        let updated = try await BreezeBinary.run([
            "sync", folder.path, work.path("live").path, "--env", "appVersion=0.9", "--env", "platform=iOS", "--env",
            "systemVersion=9.0",
        ])
        #expect(updated.status == 0, "\(updated.error)")
        #expect(work.path("live/Embed1.freshair/foo.md").text == "release TWO\n")

        // A package, given as a plain path.
        try FileManager.default.createDirectory(at: work.path("pkg/data"), withIntermediateDirectories: true)
        try Data("packaged\n".utf8).write(to: work.path("pkg/data/message.txt"))
        _ = try await shell("tar -czf content.tgz -C pkg .", in: work.url)
        let package = try await BreezeBinary.run(["sync", work.path("content.tgz").path, work.path("Content").path])
        #expect(package.status == 0, "\(package.error)")
        #expect(work.path("Content/data/message.txt").text == "packaged\n")
        let packageAgain = try await BreezeBinary.run([
            "sync", "file://" + work.path("content.tgz").path, work.path("Content").path,
        ])
        #expect(packageAgain.output.hasPrefix("Package current (304 Not Modified)"))

        // A repository whose index writes versions as strings, as some publishers did.
        try FileManager.default.createDirectory(at: work.path("repo-src/cats-2"), withIntermediateDirectories: true)
        try Data("meow\n".utf8).write(to: work.path("repo-src/cats-2/cat.txt"))
        try FileManager.default.createDirectory(at: work.path("source/animals"), withIntermediateDirectories: true)
        _ = try await shell("tar -czf source/animals/cats-2.tar.gz -C repo-src cats-2", in: work.url)
        try Data(#"{"bundles": {"cats": {"version": "2"}}}"#.utf8).write(to: work.path("source/animals/index.json"))
        let repository = try await BreezeBinary.run([
            "sync", work.path("source").path, work.path("Repo").path, "--repo", "animals",
        ])
        #expect(repository.status == 0, "\(repository.error)")
        #expect(work.path("Repo/cats/cat.txt").text == "meow\n")

        // A missing file is named by its path, as no such file (66: no server answered); so is a
        // FIFO, which must not hang the open.
        let missing = try await BreezeBinary.run([
            "sync", "file://" + work.path("nothing.tgz").path, work.path("None").path,
        ])
        #expect(missing.status == 66 && missing.error.contains("nothing.tgz: no such file"), "\(missing.error)")
        try await shell("mkfifo pipe.tgz", in: work.url)
        let fifo = try await BreezeBinary.run(["sync", "file://" + work.path("pipe.tgz").path, work.path("Pipe").path])
        #expect(fifo.status == 66 && fifo.error.contains("pipe.tgz: no such file"), "\(fifo.error)")
    }

    @Test("Repository versions written as strings load; other strings are refused")
    func repositoryStringVersions() throws {
        let index = try RepositoryIndex(
            data: Data(#"{"bundles": {"art": {"version": "4"}, "sound": {"version": 7}}}"#.utf8),
            source: "index.json"
        )
        #expect(index.bundles["art"]?.version == 4 && index.bundles["sound"]?.version == 7)
        for bad in [#""4.1""#, #""-1""#, #""""#, #""four""#] {
            #expect(throws: ManifestError.self) {
                try RepositoryIndex(
                    data: Data(#"{"bundles": {"art": {"version": \#(bad)}}}"#.utf8),
                    source: "index.json"
                )
            }
        }
    }

    @Test("breeze plan says \"1 file\"")
    func planCountsInTheSingular() async throws {
        let work = try TemporaryFolder("plan")
        try FileManager.default.createDirectory(at: work.path("One.freshair"), withIntermediateDirectories: true)
        try Data(#"[{"filename": "manifest.json"}]"#.utf8).write(to: work.path("One.freshair/manifest.json"))
        let plan = try await BreezeBinary.run(["plan", work.path("One.freshair").path])
        #expect(plan.output.contains("\n1 file, "), "\(plan.output)\(plan.error)")
    }
}

extension BreezeBinary.Run {
    func expectSuccess(sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(status == 0, "\(output)\(error)", sourceLocation: sourceLocation)
    }
}
