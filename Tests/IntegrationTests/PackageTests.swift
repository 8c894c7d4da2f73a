import BreezeKit
import Foundation
import FreshAir
import Synchronization
import TestSupport
import Testing

@Suite("Packages: one archive at a fixed URL, a bundled default, conditional GET")
struct PackageTests {
    /// Publishes `content/` as `content.tgz` (made by GNU tar) and returns its URL.
    func publish(_ server: PublishedFolder, text: String, modified: Date? = nil) async throws -> URL {
        let source = server.root.appendingPathComponent("src")
        try? FileManager.default.removeItem(at: source)
        try FileManager.default.createDirectory(
            at: source.appendingPathComponent("data"),
            withIntermediateDirectories: true
        )
        try Data(text.utf8).write(to: source.appendingPathComponent("data/message.txt"))
        try await shell("tar -czf content.tgz -C src .", in: server.root)
        if let modified {
            try FileManager.default.setAttributes(
                [.modificationDate: modified],
                ofItemAtPath: server.root.appendingPathComponent("content.tgz").path
            )
        }
        return server.url.appendingPathComponent("content.tgz")
    }

    /// A bundled copy with the given text and, optionally, a `.meta` date.
    func bundled(in folder: TemporaryFolder, text: String, meta: Date?) async throws -> URL {
        try FileManager.default.createDirectory(at: folder.path("bundled-src/data"), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: folder.path("bundled-src/data/message.txt"))
        try await shell("tar -czf content.tgz -C bundled-src .", in: folder.url)
        if let meta {
            try Data(#"{"Last-Modified": "\#(HTTPDate.format(meta))"}"#.utf8).write(to: folder.path("content.tgz.meta"))
        }
        return folder.path("content.tgz")
    }

    func updater(
        _ remote: URL,
        in local: TemporaryFolder,
        bundled: URL? = nil,
        installer: (any PackageInstaller)? = nil
    ) -> PackageUpdater {
        var configuration = SyncConfiguration()
        configuration.retry = RetryPolicy(maxAttempts: 1)
        return PackageUpdater(
            remote: remote,
            store: BundleStore(root: local.path("store"), liveLink: local.path("Content")),
            bundledPackage: bundled,
            installer: installer,
            transport: nil,
            configuration: configuration
        )
    }

    @Test("200 installs, then an unchanged check is one request and no body")
    func notModifiedIsOneRequest() async throws {
        try await PublishedFolder.with(.nginx) { server in
            let remote = try await publish(server, text: "v1")
            let local = try TemporaryFolder("package")
            let updater = updater(remote, in: local)
            let first = try await updater.update()
            #expect(first.outcome == .downloaded)
            #expect(local.path("Content/data/message.txt").text == "v1")
            #expect(updater.contentDirectory?.appendingPathComponent("data/message.txt").text == "v1")

            let before = server.nginxRequests().count
            let second = try await updater.run()
            #expect(second.package?.outcome == .notModified)
            #expect(second.requests == 1)
            let seen = server.nginxRequests().dropFirst(before)
            #expect(seen.map(\.status) == [304])
            #expect(seen.first?.bodyBytes == 0)

            _ = try await publish(server, text: "v2", modified: Date().addingTimeInterval(60))
            let third = try await updater.update()
            #expect(third.outcome == .downloaded)
            #expect(local.path("Content/data/message.txt").text == "v2")
        }
    }

    @Test("Offline on first launch: the bundled copy is installed and the error says why")
    func bundledFallbackOffline() async throws {
        let local = try TemporaryFolder("package")
        let bundled = try await bundled(in: local, text: "bundled", meta: nil)
        let offline = try LoopbackSocket(listening: false)
        defer { offline.close() }
        let updater = updater(offline.url("content.tgz"), in: local, bundled: bundled)
        await #expect {
            try await updater.update()
        } throws: { error in
            // The message says the bundled copy is live, and why the server's could not be had.
            guard let failure = error as? FreshAirError, failure.code == .bundledCopyOnly,
                let transport = (failure.underlying as? FreshAirError)?.transportError
            else { return false }
            let message = "\(error)"
            return transport.kind == .connect && message.hasPrefix("the bundled copy is installed and live")
                && message.contains("could not connect to 127.0.0.1: ")
        }
        #expect(local.path("Content/data/message.txt").text == "bundled")
        #expect(try updater.store.liveRecord()?.origin == .bundled)
    }

    @Test("A 403 names the likely cause; the bundled copy is installed")
    func forbiddenInstallsBundled() async throws {
        try await PublishedFolder.with(.nginx) { server in
            let remote = try await publish(server, text: "v1")
            try FileManager.default.setAttributes(
                [.posixPermissions: getuid() == 0 ? 0o600 : 0o000],
                ofItemAtPath: server.root.appendingPathComponent("content.tgz").path
            )
            let local = try TemporaryFolder("package")
            let updater = updater(remote, in: local, bundled: try await bundled(in: local, text: "bundled", meta: nil))
            await #expect {
                try await updater.update()
            } throws: { error in
                guard let failure = error as? FreshAirError, failure.code == .bundledCopyOnly,
                    (failure.underlying as? FreshAirError)?.status == 403
                else { return false }
                return "\(error)".contains("not readable by the web server's account, or not public on S3")
            }
            #expect(local.path("Content/data/message.txt").text == "bundled")
        }
    }

    @Test(".meta newer than what is installed: the bundled copy wins and nothing is downloaded")
    func newerMetaInstallsBundled() async throws {
        try await PublishedFolder.with(.nginx) { server in
            let published = Date(timeIntervalSince1970: 1_700_000_000)
            let remote = try await publish(server, text: "server", modified: published)
            let local = try TemporaryFolder("package")
            try await updater(remote, in: local).update()
            #expect(local.path("Content/data/message.txt").text == "server")

            // An app update ships newer content than the server has.
            let bundled = try await bundled(
                in: local,
                text: "shipped in the app",
                meta: published.addingTimeInterval(86_400)
            )
            let before = server.nginxRequests().count
            let summary = try await updater(remote, in: local, bundled: bundled).run()
            let result = try #require(summary.package)
            #expect(result.installedBundled)
            #expect(result.outcome == .serverCopyNotNewer)
            #expect(result.serverLastModified == HTTPDate.format(published))
            #expect(
                summary.oneLine.hasPrefix(
                    "Package current: the server's copy (Last-Modified \(HTTPDate.format(published))) is not newer"
                )
            )
            #expect(local.path("Content/data/message.txt").text == "shipped in the app")
            // One request, carrying the bundled date. nginx matches If-Modified-Since exactly by
            // default and answers 200; the client sees Last-Modified is not newer and skips the body.
            #expect(server.nginxRequests().dropFirst(before).count == 1)
            #expect(summary.requests == 1)
            #expect(result.bytesDownloaded == 0)
        }
    }

    @Test(".meta older than what is installed: the bundled copy is ignored")
    func olderMetaIsIgnored() async throws {
        try await PublishedFolder.with(.nginx) { server in
            let published = Date(timeIntervalSince1970: 1_700_000_000)
            let remote = try await publish(server, text: "server", modified: published)
            let local = try TemporaryFolder("package")
            try await updater(remote, in: local).update()
            let bundled = try await bundled(in: local, text: "old bundled", meta: published.addingTimeInterval(-86_400))
            let result = try await updater(remote, in: local, bundled: bundled).update()
            #expect(!result.installedBundled)
            #expect(result.outcome == .notModified)
            #expect(local.path("Content/data/message.txt").text == "server")
        }
    }

    @Test("A hostile package is refused and the installed content stays")
    func hostilePackageKeepsContent() async throws {
        try await PublishedFolder.with(.nginx) { server in
            let remote = try await publish(server, text: "good")
            let local = try TemporaryFolder("package")
            let updater = updater(remote, in: local)
            try await updater.update()
            try
                "import io, tarfile\nwith tarfile.open('content.tgz', 'w:gz') as t:\n    i = tarfile.TarInfo('../../escape.txt'); i.size = 1\n    t.addfile(i, io.BytesIO(b'x'))\n"
                .write(to: server.root.appendingPathComponent("make.py"), atomically: true, encoding: .utf8)
            try await shell("/usr/bin/python3 make.py && touch -d '+1 hour' content.tgz", in: server.root)
            await #expect {
                try await updater.update()
            } throws: { error in
                guard let archiveError = (error as? FreshAirError)?.archiveError else { return false }
                return archiveError.kind == .unsafeEntry
            }
            #expect(local.path("Content/data/message.txt").text == "good")
        }
    }

    @Test("A damaged package on this machine (file://) is named as the file to make again, not the server's")
    func damagedLocalPackage() async throws {
        let local = try TemporaryFolder("package-local")
        let package = try await bundled(in: local, text: "whole", meta: nil)
        let whole = try Data(contentsOf: package)
        try whole.prefix(whole.count / 2).write(to: package)
        func namesTheFile(_ error: any Error) -> Bool {
            "\(error)".contains("the file itself is damaged") && !"\(error)".contains("on the server")
        }
        // As the app's bundled copy, and as a file:// source.
        let unreachable = URL(string: "http://127.0.0.1:9/content.tgz")!
        await #expect(
            performing: {
                try await updater(unreachable, in: local, bundled: package).installBundledCopy()
            },
            throws: namesTheFile
        )
        await #expect(performing: { try await updater(package, in: local).update() }, throws: namesTheFile)
    }

    @Test("A custom installer replaces extract-to-folder")
    func customInstaller() async throws {
        /// Loads the package's message into a "database" file instead of unpacking a folder.
        struct DatabaseLoader: PackageInstaller {
            let database: URL
            func install(package: URL, format: ArchiveFormat, into folder: URL) async throws -> [String: FileRecord] {
                let scratch = folder.appendingPathComponent(".unpack")
                try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
                _ = try await ExtractingInstaller().install(package: package, format: format, into: scratch)
                let message = try String(
                    contentsOf: scratch.appendingPathComponent("data/message.txt"),
                    encoding: .utf8
                )
                try FileManager.default.removeItem(at: scratch)
                try Data("row: \(message)".utf8).write(to: database)
                return [:]
            }
            func packageExists(liveFolder: URL?) -> Bool { FileManager.default.fileExists(atPath: database.path) }
        }
        try await PublishedFolder.with(.nginx) { server in
            let remote = try await publish(server, text: "for the database")
            let local = try TemporaryFolder("package")
            let loader = DatabaseLoader(database: local.path("app.db"))
            let result = try await updater(remote, in: local, installer: loader).update()
            #expect(result.outcome == .downloaded)
            #expect(local.path("app.db").text == "row: for the database")
            // The database going missing means "not installed": the next update downloads again.
            try FileManager.default.removeItem(at: local.path("app.db"))
            #expect(try await updater(remote, in: local, installer: loader).update().outcome == .downloaded)
        }
    }

    @Test("A package the app never confirms is rolled back, and the server is asked whether it still has only that one")
    func confirmOrRollBack() async throws {
        try await PublishedFolder.with(.nginx) { server in
            let remote = try await publish(server, text: "v1", modified: Date().addingTimeInterval(10))
            let local = try TemporaryFolder("package")
            let updater = updater(remote, in: local)
            let message = { local.path("Content/data/message.txt").text }
            try await updater.update()
            try await updater.store.confirmLive()

            _ = try await publish(server, text: "v2, crashes", modified: Date().addingTimeInterval(20))
            #expect(try await updater.update().outcome == .downloaded)
            #expect(try await updater.store.rollBackIfUnconfirmed() == nil)
            #expect(try await updater.store.rollBackIfUnconfirmed() != nil)
            #expect(message() == "v1")

            // The check sends the rejected package's validators: a 304, no body, nothing installed.
            let before = server.nginxRequests().count
            let kept = try await updater.run()
            #expect(kept.package?.outcome == .keptAfterRollback && kept.requests == 1 && kept.bytesDownloaded == 0)
            #expect(server.nginxRequests().dropFirst(before).map(\.status) == [304])
            #expect(message() == "v1")

            _ = try await publish(server, text: "v3", modified: Date().addingTimeInterval(30))
            #expect(try await updater.update().outcome == .downloaded)
            #expect(message() == "v3")
            // Installed and forgotten: the next check is an ordinary 304 on v3.
            #expect(try await updater.update().outcome == .notModified)
        }
    }
}

@Suite("Repositories: versioned bundles side by side")
struct RepositoryTests {
    func repository(_ server: PublishedFolder, id: String, in local: TemporaryFolder) -> Repository {
        var configuration = SyncConfiguration()
        configuration.retry = RetryPolicy(maxAttempts: 1)
        return Repository(source: server.url, id: id, directory: local.path(id), configuration: configuration)
    }

    /// Bundle `name`, one `item.txt` saying `text`, added to the repository at `published` as
    /// its next version, the index signed with `key`.
    func publish(
        _ name: String,
        _ text: String,
        from sources: TemporaryFolder,
        to published: URL,
        signedWith key: SigningKey
    )
        throws
    {
        try RepositoryPublisher.add(
            folder: try content(sources.path(name), text),
            as: name,
            to: published,
            signingWith: [key]
        )
    }

    /// One attempt per request, `key` pinned.
    func pinning(_ key: SigningKey) -> SyncConfiguration {
        var configuration = SyncConfiguration()
        configuration.retry = RetryPolicy(maxAttempts: 1)
        configuration.trustedKeys = [key.publicKey]
        return configuration
    }

    func content(_ folder: URL, _ text: String) throws -> URL {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data(text.utf8).write(to: folder.appendingPathComponent("item.txt"))
        return folder
    }

    /// Repository `id` published on `server` with one bundle per pair (its name, the text of its
    /// `item.txt`), and a device's `Repository` for it in a folder of its own.
    func published(
        _ bundles: [(name: String, text: String)],
        as id: String,
        on server: PublishedFolder
    ) throws -> (folder: URL, sources: TemporaryFolder, local: TemporaryFolder, repo: Repository) {
        let folder = server.root.appendingPathComponent(id)
        let sources = try TemporaryFolder("sources")
        for (name, text) in bundles {
            try RepositoryPublisher.add(folder: try content(sources.path(name), text), as: name, to: folder)
        }
        let local = try TemporaryFolder("repo")
        return (folder, sources, local, repository(server, id: id, in: local))
    }

    @Test("A repository with the device's defaults: content in FreshAir/<id>, its state apart, both kept across runs")
    func repositoryDefaults() async throws {
        try await PublishedFolder.with(.nginx) { server in
            let id = "com.example.defaults"
            let key = SigningKey.generate()
            let sources = try TemporaryFolder("defaults-sources")
            let published = server.root.appendingPathComponent(id)
            for (name, text) in [("cats", "meow"), ("dogs", "woof")] {
                try publish(name, text, from: sources, to: published, signedWith: key)
            }
            // The system's folders, as the app's container would give them.
            let container = try TemporaryFolder("defaults-container")
            let configuration = pinning(key)
            let repository = Repository(
                source: server.url,
                id: id,
                transport: nil,
                configuration: configuration,
                base: { container.path($0 == .caches ? "Caches" : "Application Support") }
            )
            let content = container.path("Application Support/FreshAir/\(id)")
            let state = container.path("Application Support/FreshAir/\(id).state")
            #expect(repository.directory == content)
            try await repository.run()
            #expect(content.appendingPathComponent("cats/item.txt").text == "meow")
            #expect(Repository.bundle(descriptor: "\(id).dogs", in: [repository])?.lastPathComponent != nil)
            // The anti-rollback floor of the signed index is in the state folder, not the content's.
            #expect(FileManager.default.fileExists(atPath: state.appendingPathComponent("high-water.json").path))
            let everything = try FileManager.default.subpathsOfDirectory(atPath: content.path)
            #expect(!everything.contains { $0.hasSuffix("high-water.json") }, "\(everything)")

            // Content lost (tvOS empties Caches), the state kept: installed again, its floor still there.
            try FileManager.default.removeItem(at: content)
            let again = try await repository.update()
            #expect(again.updated == ["cats": 1, "dogs": 1])
            #expect(content.appendingPathComponent("dogs/item.txt").text == "woof")
            #expect(try await repository.update().indexNotModified)

            // A bundle dropped from the index goes, with its state.
            let indexURL = published.appendingPathComponent("index.json")
            var index = try #require(
                try JSONSerialization.jsonObject(with: Data(contentsOf: indexURL)) as? [String: Any]
            )
            var listed = try #require(index["bundles"] as? [String: Any])
            listed["dogs"] = nil
            index["bundles"] = listed
            try JSONSerialization.data(withJSONObject: index).write(to: indexURL)
            _ = try RepositoryPublisher.sign(repository: published, with: [key])
            try PublishedText.uploaded(indexURL)
            let dropped = try await repository.update()
            #expect(dropped.removed == ["dogs"])
            #expect(!FileManager.default.fileExists(atPath: state.appendingPathComponent("bundles/dogs").path))
        }
    }

    @Test("A repository in a folder the app chose, its state in another: a purge of the folder keeps the floor")
    func repositoryStateFolder() async throws {
        try await PublishedFolder.with(.nginx) { server in
            let id = "com.example.shared"
            let key = SigningKey.generate()
            let sources = try TemporaryFolder("state-sources")
            let published = server.root.appendingPathComponent(id)
            let indexURL = published.appendingPathComponent("index.json")
            try publish("maps", "v1", from: sources, to: published, signedWith: key)
            let firstIndex = try Data(contentsOf: indexURL)
            try publish("maps", "v2", from: sources, to: published, signedWith: key)
            try PublishedText.uploaded(indexURL)
            // As an app with an App Group might: the bundles where its extension reads them, the
            // state in a folder of its own.
            let container = try TemporaryFolder("state-container")
            let configuration = pinning(key)
            let repository = Repository(
                source: server.url,
                id: id,
                directory: container.path("Shared/maps"),
                stateFolder: container.path("State/maps"),
                configuration: configuration
            )
            try await repository.run()
            #expect(repository.bundle(named: "maps")?.appendingPathComponent("item.txt").text == "v2")
            #expect(FileManager.default.fileExists(atPath: container.path("State/maps/high-water.json").path))
            let shared = try FileManager.default.subpathsOfDirectory(atPath: container.path("Shared/maps").path)
            #expect(!shared.contains { $0.hasSuffix("high-water.json") }, "\(shared)")

            // The shared folder emptied, and the older signed index served again: refused, since
            // the floor outlived the purge (kept inside, it would have gone with it).
            try FileManager.default.removeItem(at: container.path("Shared"))
            try firstIndex.write(to: indexURL)
            try PublishedText.uploaded(indexURL)
            await #expect {
                try await repository.run()
            } throws: { error in
                guard case .olderSequence = (error as? FreshAirError)?.manifestError?.problem else { return false }
                return true
            }
            #expect(repository.installedBundles.isEmpty, "nothing from the stale index was installed")
        }
    }

    @Test("Only the bundle whose version changed is fetched; an unchanged index is one 304")
    func onlyChangedBundlesMove() async throws {
        try await PublishedFolder.with(.nginx) { server in
            let id = "com.example.level1"
            let (repoFolder, sources, local, repo) = try published(
                [("cats", "cat v1"), ("dogs", "dog v1")],
                as: id,
                on: server
            )

            let events = Mutex<[SyncEvent]>([])
            let first = try #require(try await repo.run { event in events.withLock { $0.append(event) } }.repository)
            #expect(first.updated == ["cats": 1, "dogs": 1])
            let reported = events.withLock { $0 }
            let downloaded = reported.compactMap { if case .downloaded(let path, _) = $0 { path } else { nil } }
            #expect(downloaded.sorted() == ["cats", "dogs"], "one event per bundle installed")
            let progress = reported.compactMap { if case .progress(let progress) = $0 { progress } else { nil } }
            #expect(progress.last?.filesCompleted == 2 && progress.last?.filesTotal == 2)
            guard case .finished(let summary) = reported.last else {
                Issue.record("finished is not last")
                return
            }
            #expect(summary.filesDownloaded == 2)
            #expect(
                local.path("\(id)/cats/item.txt").text == "cat v1",
                "the cats-1/ folder inside the archive is stripped"
            )
            #expect(
                Repository.bundle(descriptor: "\(id).dogs", in: [repo])?.appendingPathComponent("item.txt").text
                    == "dog v1"
            )

            let republished = try RepositoryPublisher.add(
                folder: try content(sources.path("cats"), "cat v1"),
                as: "cats",
                to: repoFolder
            )
            #expect(!republished.published, "unchanged content keeps its version")
            try RepositoryPublisher.add(folder: try content(sources.path("dogs"), "dog v2"), as: "dogs", to: repoFolder)

            let before = server.nginxRequests().count
            let second = try await repo.update()
            let seen = server.nginxRequests().dropFirst(before)
            #expect(second.updated == ["dogs": 2])
            #expect(second.unchanged == ["cats"])
            #expect(seen.filter { $0.path.hasSuffix(".tar.gz") }.map(\.path) == ["/\(id)/dogs-2.tar.gz"])
            #expect(local.path("\(id)/dogs/item.txt").text == "dog v2")

            let third = try await repo.run()
            #expect(third.repository?.indexNotModified == true)
            #expect(third.requests == 1)
        }
    }

    @Test(
        "The index is kept as a version of the repository's index store; a damaged copy is fetched whole, not trusted"
    )
    func indexKeptInAStore() async throws {
        try await PublishedFolder.with(.nginx) { server in
            let id = "com.example.kept"
            let sources = try TemporaryFolder("sources")
            try RepositoryPublisher.add(
                folder: try content(sources.path("cats"), "cat v1"),
                as: "cats",
                to: server.root.appendingPathComponent(id)
            )
            let local = try TemporaryFolder("repo")
            let repo = repository(server, id: id, in: local)
            let state = local.path("\(id)/.freshair-repository")
            // What FreshAir 0.1.0 left: its own record of the index, and its lock.
            try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
            for legacy in ["state.json", "lock"] { try Data("{}".utf8).write(to: state.appendingPathComponent(legacy)) }
            try await repo.update()
            let kept = state.appendingPathComponent("index/live/index.json")
            #expect(kept.text == server.root.appendingPathComponent("\(id)/index.json").text)
            for legacy in ["state.json", "lock"] {
                #expect(!FileManager.default.fileExists(atPath: state.appendingPathComponent(legacy).path))
            }
            #expect(try await repo.update().indexNotModified)

            // A saved index that no longer matches its record is not answered from: asked afresh.
            try Data(#"{"bundles": {}}"#.utf8).write(to: kept)
            let again = try await repo.update()
            #expect(!again.indexNotModified, "no validators sent for an index that fails its digest")
            #expect(again.unchanged == ["cats"] && again.removed.isEmpty)
            #expect(local.path("\(id)/cats/item.txt").text == "cat v1")
            #expect(try await repo.update().indexNotModified)
        }
    }

    @Test(
        "A bundle archive cut short, unpacked as it arrives: a clear error, the live bundle stays, the next update installs"
    )
    func truncatedBundleArchive() async throws {
        try await PublishedFolder.with(.nginx) { server in
            let id = "com.example.cut"
            let (repoFolder, sources, local, repo) = try published([("dogs", "dog v1")], as: id, on: server)
            try await repo.update()
            // Random bytes, which gzip cannot shrink: half the archive is half the content.
            let big = sources.path("dogs")
            try SeededBytes.random(200_000).write(
                to: big.appendingPathComponent("noise.bin")
            )
            try Data("dog v2".utf8).write(to: big.appendingPathComponent("item.txt"))
            try RepositoryPublisher.add(folder: big, as: "dogs", to: repoFolder)
            let archive = repoFolder.appendingPathComponent("dogs-2.tar.gz")
            let whole = try Data(contentsOf: archive)
            try whole.prefix(whole.count / 2).write(to: archive)

            await #expect {
                try await repo.update()
            } throws: { error in
                guard let failure = error as? FreshAirError else { return false }
                return failure.archiveError != nil && "\(failure)".contains("dogs-2.tar.gz")
            }
            #expect(local.path("\(id)/dogs/item.txt").text == "dog v1", "the live bundle stays")

            try whole.write(to: archive)
            let fixed = try await repo.update()
            #expect(fixed.updated == ["dogs": 2])
            #expect(local.path("\(id)/dogs/item.txt").text == "dog v2")
        }
    }

    @Test(
        "Two repositories coexist; a bundle dropped from the index is removed; .tar works too; a source misplaced or given as the index"
    )
    func severalRepositories() async throws {
        try await PublishedFolder.with(.nginx) { server in
            let sources = try TemporaryFolder("sources")
            try RepositoryPublisher.add(
                folder: try content(sources.path("a"), "level 1"),
                as: "art",
                to: server.root.appendingPathComponent("game.level1")
            )
            // A hand-made repository publishing a plain .tar, as ADM's users did with `tar -cf`.
            let level2 = server.root.appendingPathComponent("game.level2")
            try FileManager.default.createDirectory(
                at: level2.appendingPathComponent("art-7"),
                withIntermediateDirectories: true
            )
            try Data("level 2".utf8).write(to: level2.appendingPathComponent("art-7/item.txt"))
            try await shell("tar -cf art-7.tar art-7 && rm -r art-7", in: level2)
            try Data(#"{"bundles": {"art": {"version": 7}}}"#.utf8).write(
                to: level2.appendingPathComponent("index.json")
            )

            let local = try TemporaryFolder("repo")
            // The repository's own folder given as its source: the 404 names the source to give.
            let misplaced = Repository(
                source: server.url.appendingPathComponent("game.level1/"),
                id: "game.level1",
                directory: local.path("misplaced"),
                configuration: repository(server, id: "game.level1", in: local).configuration
            )
            await #expect {
                try await misplaced.update()
            } throws: { error in
                "\(error)".contains(
                    "a repository's source is the folder that holds game.level1/, not game.level1/ itself. Give \(server.url.absoluteString)"
                )
            }
            // The index's own URL, as `breeze serve` prints it, stands for its source.
            let byIndex = Repository(
                source: server.url.appendingPathComponent("game.level1/index.json"),
                id: "game.level1",
                directory: local.path("by-index"),
                configuration: misplaced.configuration
            )
            #expect(byIndex.source.absoluteString == server.url.absoluteString)
            #expect(try await byIndex.update().updated == ["art": 1])
            let one = repository(server, id: "game.level1", in: local)
            let two = repository(server, id: "game.level2", in: local)
            try await one.update()
            try await two.update()
            #expect(
                Repository.bundle(descriptor: "game.level1.art", in: [one, two])?.appendingPathComponent("item.txt")
                    .text == "level 1"
            )
            #expect(
                Repository.bundle(descriptor: "game.level2.art", in: [one, two])?.appendingPathComponent("item.txt")
                    .text == "level 2"
            )

            try PublishedText.write(#"{"bundles": {}}"#, to: level2.appendingPathComponent("index.json"))
            let emptied = try await two.update()
            #expect(emptied.removed == ["art"])
            #expect(Repository.bundle(descriptor: "game.level2.art", in: [one, two]) == nil)
            #expect(!FileManager.default.fileExists(atPath: local.path("game.level2/art").path))
        }
    }

    @Test("A bundle version rolled back from is not installed again; the next version is")
    func rollbackIsRemembered() async throws {
        try await PublishedFolder.with(.nginx) { server in
            let id = "com.example.rollback"
            let (repoFolder, sources, local, repo) = try published([("cats", "cat v1")], as: id, on: server)
            try await repo.update()
            try await repo.store(forBundle: "cats").confirmLive()

            try RepositoryPublisher.add(
                folder: try content(sources.path("cats"), "cat v2, broken"),
                as: "cats",
                to: repoFolder
            )
            #expect(try await repo.update().updated == ["cats": 2])
            let store = repo.store(forBundle: "cats")
            #expect(try await store.rollBackIfUnconfirmed() == nil)
            #expect(try await store.rollBackIfUnconfirmed() != nil)
            #expect(local.path("\(id)/cats/item.txt").text == "cat v1")

            let before = server.nginxRequests().count
            let kept = try await repo.update()
            #expect(kept.keptAfterRollback == ["cats"] && kept.updated.isEmpty)
            #expect(server.nginxRequests().dropFirst(before).filter { $0.path.hasSuffix(".tar.gz") }.isEmpty)
            #expect(local.path("\(id)/cats/item.txt").text == "cat v1")

            try RepositoryPublisher.add(folder: try content(sources.path("cats"), "cat v3"), as: "cats", to: repoFolder)
            #expect(try await repo.update().updated == ["cats": 3])
            #expect(local.path("\(id)/cats/item.txt").text == "cat v3")
        }
    }

    @Test("A whole-repository switch: bundles that must match are all old or all new, even when one fails")
    func wholeRepositorySwitch() async throws {
        try await PublishedFolder.with(.nginx) { server in
            let id = "com.example.atomic"
            let repoFolder = server.root.appendingPathComponent(id)
            let sources = try TemporaryFolder("sources")
            for name in ["cats", "dogs"] {
                try RepositoryPublisher.add(
                    folder: try content(sources.path(name), "\(name) v1"),
                    as: name,
                    to: repoFolder
                )
            }
            let local = try TemporaryFolder("atomic")
            var configuration = SyncConfiguration()
            configuration.retry = RetryPolicy(maxAttempts: 1)
            let repo = Repository(
                source: server.url,
                id: id,
                directory: local.path(id),
                switching: .wholeRepository,
                configuration: configuration
            )
            let texts = { ["cats", "dogs"].map { local.path("\(id)/\($0)/item.txt").text ?? "missing" } }
            try await repo.update()
            #expect(texts() == ["cats v1", "dogs v1"])
            #expect(isSymbolicLink(local.path(id).path), "the repository folder is one link, switched in one step")

            // v2 of both, but the dogs archive is missing on the server: cats v2 installs, and
            // still nobody sees it until dogs v2 can go live with it.
            for name in ["cats", "dogs"] {
                try RepositoryPublisher.add(
                    folder: try content(sources.path(name), "\(name) v2"),
                    as: name,
                    to: repoFolder
                )
            }
            try FileManager.default.moveItem(
                at: repoFolder.appendingPathComponent("dogs-2.tar.gz"),
                to: sources.path("dogs-2.tar.gz")
            )
            await #expect(throws: FreshAirError.self) { try await repo.update() }
            #expect(texts() == ["cats v1", "dogs v1"])
            #expect(repo.bundle(named: "cats").map { $0.appendingPathComponent("item.txt").text } == "cats v1")

            try FileManager.default.moveItem(
                at: sources.path("dogs-2.tar.gz"),
                to: repoFolder.appendingPathComponent("dogs-2.tar.gz")
            )
            let result = try await repo.update()
            #expect(result.updated == ["dogs": 2], "cats v2 was already installed: only dogs is fetched")
            #expect(texts() == ["cats v2", "dogs v2"])
            let verify = try await BreezeBinary.run(["verify", local.path(id).path])
            #expect(
                verify.status == 0 && verify.output.contains("cats: Version 2 is intact"),
                "\(verify.output)\(verify.error)"
            )
        }
    }
}

/// Whether `path` is a symbolic link.
func isSymbolicLink(_ path: String) -> Bool {
    (try? FileManager.default.destinationOfSymbolicLink(atPath: path)) != nil
}
