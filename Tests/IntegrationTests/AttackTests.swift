import BreezeKit
import Foundation
import FreshAir
import FreshAirAsyncHTTPClient
import Testing

/// What a hostile server, CDN or network in between tries, each against a real server
/// (nginx, or breeze's own): every attack is refused with a clear error, nothing is written
/// outside the content folder, and the live version stays.
@Suite("Attacks: a hostile server is refused and the live version stays")
struct AttackTests {
    /// The archive from the report: a folder `x؀`, a link `d؀` whose target climbs out
    /// through `x؀/../` (a `/` that Character-based checks did not see), and a file written
    /// through that link.
    static func writeGluedSlashArchive(
        named name: String,
        in folder: URL,
        escapingTo outside: URL,
        topFolder: String? = nil
    ) async throws {
        let script = """
            import io, sys, tarfile
            name, outside, top = sys.argv[1], sys.argv[2], sys.argv[3]
            prefix = top + "/" if top else ""
            with tarfile.open(name, "w:gz", format=tarfile.PAX_FORMAT) as archive:
                def add(path, kind, data=b"", target=""):
                    info = tarfile.TarInfo(prefix + path)
                    if kind == "dir": info.type = tarfile.DIRTYPE; info.mode = 0o755
                    elif kind == "link": info.type = tarfile.SYMTYPE; info.linkname = target
                    else: info.size = len(data)
                    archive.addfile(info, io.BytesIO(data) if data else None)
                if top: add("", "dir")
                add("fine.txt", "file", b"fine")
                add("x\\u0600", "dir")
                add("d\\u0600", "link", target="x\\u0600/../" * 24 + "../" * 24 + outside.lstrip("/"))
                add("d\\u0600/victim.txt", "file", b"pwned")
                add("d\\u0600/pwned.txt", "file", b"pwned")
            """
        try script.write(to: folder.appendingPathComponent("make-glued.py"), atomically: true, encoding: .utf8)
        try await shell("/usr/bin/python3 make-glued.py '\(name)' '\(outside.path)' '\(topFolder ?? "")'", in: folder)
    }

    /// A folder outside every store, holding a file an attacker would like to overwrite.
    static func victimFolder() throws -> TemporaryFolder {
        let outside = try TemporaryFolder("victim")
        try Data("precious".utf8).write(to: outside.path("victim.txt"))
        return outside
    }

    static func expectUntouched(_ outside: TemporaryFolder) throws {
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside.url.path) == ["victim.txt"])
        #expect(outside.path("victim.txt").text == "precious")
    }

    static func packageUpdater(
        _ url: URL,
        in local: TemporaryFolder,
        links: ExtractionLimits.SymbolicLinks = .refuse
    ) -> PackageUpdater {
        var configuration = SyncConfiguration()
        configuration.retry = RetryPolicy(maxAttempts: 1)
        configuration.extraction.symbolicLinks = links
        return PackageUpdater(
            remote: url,
            store: BundleStore(root: local.path("store"), liveLink: local.path("live")),
            configuration: configuration
        )
    }

    @Test(
        "Arbitrary installation: a link through a glued '/' writes nothing outside, as a package or a repository bundle"
    )
    func gluedSlashArchive() async throws {
        try await PublishedFolder.with(.nginx) { server in
            let outside = try Self.victimFolder()
            let local = try TemporaryFolder("glued")
            // A good version goes live first; the attack must leave it so.
            try Data("good".utf8).write(to: server.root.appendingPathComponent("good.txt"))
            try await shell("tar -czf content.tgz good.txt", in: server.root)
            let url = server.url.appendingPathComponent("content.tgz")
            try await Self.packageUpdater(url, in: local).update()

            try await Self.writeGluedSlashArchive(named: "content.tgz", in: server.root, escapingTo: outside.url)
            // A new second for nginx's ETag and Last-Modified, whatever the sizes.
            try FileManager.default.setAttributes(
                [.modificationDate: Date().addingTimeInterval(2)],
                ofItemAtPath: server.root.appendingPathComponent("content.tgz").path
            )
            for links in [ExtractionLimits.SymbolicLinks.refuse, .allowInside] {
                await #expect {
                    try await Self.packageUpdater(url, in: local, links: links).update()
                } throws: { error in
                    guard let archiveError = (error as? FreshAirError)?.archiveError else { return false }
                    let expected = links == .refuse ? "symbolic links are refused" : "points outside the package"
                    return archiveError.kind == .unsafeEntry && archiveError.entry == "d\u{600}"
                        && "\(error)".contains(expected)
                }
                try Self.expectUntouched(outside)
                #expect(local.path("live/good.txt").text == "good", "the live version stays")
            }

            // The same archive as version 2 of a repository bundle.
            let repository = server.root.appendingPathComponent("repo")
            try FileManager.default.createDirectory(at: repository, withIntermediateDirectories: true)
            try await Self.writeGluedSlashArchive(
                named: "evil-2.tar.gz",
                in: repository,
                escapingTo: outside.url,
                topFolder: "evil-2"
            )
            try Data(#"{"bundles": {"evil": {"version": 2}}}"#.utf8).write(
                to: repository.appendingPathComponent("index.json")
            )
            var configuration = SyncConfiguration()
            configuration.retry = RetryPolicy(maxAttempts: 1)
            configuration.extraction.symbolicLinks = .allowInside
            let repo = Repository(
                source: server.url,
                id: "repo",
                directory: local.path("bundles"),
                configuration: configuration
            )
            await #expect {
                try await repo.update()
            } throws: { error in
                guard let archiveError = (error as? FreshAirError)?.archiveError else { return false }
                return archiveError.kind == .unsafeEntry
            }
            try Self.expectUntouched(outside)
        }
    }

    @Test("Arbitrary installation: a manifest entry '../\\u{200D}x.txt' is refused and nothing lands above the version")
    func gluedSlashManifest() async throws {
        try await PublishedFolder.with(.breezeServe) { server in
            let bundle = server.root.appendingPathComponent("Evil.freshair")
            try FileManager.default.createDirectory(at: bundle, withIntermediateDirectories: true)
            try Data("x".utf8).write(to: server.root.appendingPathComponent("\u{200D}x.txt"))
            try Data(#"[{"filename": "../\u200Dx.txt"}]"#.utf8).write(
                to: bundle.appendingPathComponent("manifest.json")
            )
            let client = try ExampleClient(published: server, path: "Evil.freshair")
            await #expect {
                try await client.sync.run()
            } throws: { error in
                guard let manifestError = (error as? FreshAirError)?.manifestError else { return false }
                return "\(manifestError)".contains("would step outside the bundle")
            }
            let written = FileManager.default.enumerator(atPath: client.local.url.path)?.allObjects as? [String] ?? []
            #expect(!written.contains { $0.hasSuffix("x.txt") }, "\(written)")
            #expect(!FileManager.default.fileExists(atPath: client.live.path))
        }
    }

    @Test(
        "Slow retrieval: a body dribbled at 100 bytes/s is abandoned (throughput floor, then deadline) and the lock is free again"
    )
    func slowRetrieval() async throws {
        try await PublishedFolder.with(.nginx) { server in
            try Data((0..<64_000).map { UInt8($0 % 251) }).write(to: server.root.appendingPathComponent("blob.bin"))
            try await shell("tar -czf content.tgz blob.bin", in: server.root)
            let local = try TemporaryFolder("dribble")
            var updater = Self.packageUpdater(server.url.appendingPathComponent("dribble/content.tgz"), in: local)
            updater.configuration.minimumThroughput = ThroughputFloor(bytesPerSecond: 1024, window: .seconds(1))
            let started = ContinuousClock.now
            await #expect {
                try await updater.update()
            } throws: { error in
                guard let transportError = (error as? FreshAirError)?.transportError else { return false }
                return transportError.kind == .timeout
                    && transportError.detail.contains("below the floor of 1024 bytes/s")
            }
            // The whole body would take over 10 minutes; the margin is for a loaded machine.
            #expect(ContinuousClock.now - started < .seconds(30))
            // With no floor at all, the overall deadline still ends it.
            updater.configuration.minimumThroughput = ThroughputFloor(bytesPerSecond: 0, window: .seconds(3600))
            updater.configuration.deadline = .seconds(2)
            let patient = ContinuousClock.now
            await #expect {
                try await updater.update()
            } throws: { error in
                guard let transportError = (error as? FreshAirError)?.transportError else { return false }
                return transportError.kind == .timeout && transportError.detail.contains("2 s deadline")
            }
            #expect(ContinuousClock.now - patient < .seconds(20))
            // The store is not held: the same store updates at once from the full-speed URL.
            let fast = Self.packageUpdater(server.url.appendingPathComponent("content.tgz"), in: local)
            #expect(try await fast.update().outcome == .downloaded)
        }
    }

    @Test("Indefinite freeze: a package once served with Last-Modified in 2100 does not pin itself")
    func futureLastModified() async throws {
        try await PublishedFolder.with(.nginx) { server in
            let source = server.root.appendingPathComponent("src")
            try FileManager.default.createDirectory(at: source, withIntermediateDirectories: true)
            try Data("hostile".utf8).write(to: source.appendingPathComponent("message.txt"))
            try await shell(
                "tar -czf content.tgz -C src . && touch -d '2100-01-01 00:00:00' content.tgz",
                in: server.root
            )
            let local = try TemporaryFolder("future")
            // The app ships a bundled copy, dated by its .meta.
            try FileManager.default.createDirectory(at: local.path("bundled-src"), withIntermediateDirectories: true)
            try Data("bundled".utf8).write(to: local.path("bundled-src/message.txt"))
            try await shell("tar -czf content.tgz -C bundled-src .", in: local.url)
            try Data(#"{"Last-Modified": "\#(HTTPDate.format(Date().addingTimeInterval(-86_400)))"}"#.utf8).write(
                to: local.path("content.tgz.meta")
            )
            var updater = Self.packageUpdater(server.url.appendingPathComponent("no-etag/content.tgz"), in: local)
            updater.bundledPackage = local.path("content.tgz")
            let first = try await updater.update()
            #expect(local.path("live/message.txt").text == "hostile")
            #expect(first.lastModified == nil, "a date in the future is not remembered")
            // Checked again: the undated version stays; the bundled copy is not reinstalled each time.
            let repeated = try await updater.update()
            #expect(!repeated.installedBundled)

            // The real server is back, with a real date.
            try Data("real".utf8).write(to: source.appendingPathComponent("message.txt"))
            try await shell("tar -czf content.tgz -C src .", in: server.root)
            let second = try await updater.update()
            #expect(second.outcome == .downloaded)
            #expect(local.path("live/message.txt").text == "real")
        }
    }

    @Test("Wrong installation: with keys pinned, an unsigned package or repository is refused, never installed")
    func pinnedKeysAreNeverIgnored() async throws {
        try await PublishedFolder.with(.nginx) { server in
            try Data("unsigned".utf8).write(to: server.root.appendingPathComponent("message.txt"))
            try await shell("tar -czf content.tgz message.txt", in: server.root)
            let local = try TemporaryFolder("pinned")
            var updater = Self.packageUpdater(server.url.appendingPathComponent("content.tgz"), in: local)
            updater.configuration.trustedKeys = [
                try TrustedKey(base64: Data(repeating: 7, count: 32).base64EncodedString())
            ]
            await #expect {
                try await updater.update()
            } throws: { error in
                guard let manifestError = (error as? FreshAirError)?.manifestError else { return false }
                return manifestError.problem == .unsigned && manifestError.source.hasSuffix("content.tgz.sig")
            }
            #expect(!FileManager.default.fileExists(atPath: local.path("live").path))
            #expect(server.nginxRequests().map(\.path) == ["/content.tgz.sig"], "the package itself is never fetched")

            let cli = try await BreezeBinary.run([
                "sync", server.url.appendingPathComponent("content.tgz").absoluteString, local.path("cli").path,
                "--trusted-key", Data(repeating: 7, count: 32).base64EncodedString(),
            ])
            #expect(cli.status == 65)
            #expect(cli.error.contains("not signed"), "\(cli.error)")
            #expect(!FileManager.default.fileExists(atPath: local.path("cli").path))
        }
    }

    @Test("breeze serve: a NUL in the path and a link out of the folder are refused")
    func serveRefusesNulAndOutsideLinks() async throws {
        let folder = try TemporaryFolder("serve-attack")
        try Data("a".utf8).write(to: folder.path("a.txt"))
        try FileManager.default.createSymbolicLink(
            atPath: folder.path("passwd").path,
            withDestinationPath: "/etc/passwd"
        )
        try FileManager.default.createSymbolicLink(atPath: folder.path("inside.txt").path, withDestinationPath: "a.txt")
        let transport = AsyncHTTPClientTransport()
        defer { Task { try await transport.shutdown() } }
        func status(_ server: RunningServer, _ path: String) async throws -> Int {
            try await transport.get(HTTPGetRequest(url: URL(string: server.url.absoluteString + path)!)) { head, _ in
                head.status
            }
        }
        let strict = try await StaticFileServer(root: folder.url).start()
        #expect(try await status(strict, "a.txt") == 200)
        #expect(try await status(strict, "a.txt%00.png") == 400)
        #expect(try await status(strict, "a.txt%0A") == 400)
        #expect(try await status(strict, "passwd") == 404)
        #expect(try await status(strict, "inside.txt") == 200, "a link that stays inside is served")
        await strict.stop()

        let lenient = try await StaticFileServer(root: folder.url, followsLinksOutside: true).start()
        #expect(try await status(lenient, "passwd") == 200)
        #expect(try await status(lenient, "a.txt%00.png") == 400)
        await lenient.stop()
    }
}

@Suite("What a killed update leaves behind")
struct LeftoverTests {
    @Test("A record's temporary file left by a killed write is removed by the next update")
    func leftoverRecordTemporaryFile() async throws {
        try await PublishedFolder.with(.breezeServe) { server in
            _ = try ExampleBundle.write(in: server.root)
            let client = try ExampleClient(published: server)
            try await client.sync.run()
            let leftover = client.local.path("store/versions/.dat.nosync3f2a.Xk9")
            try Data("half a record".utf8).write(to: leftover)
            _ = try ExampleBundle.write(in: server.root, overrides: ["Embed1.freshair/bar.md": "# changed\n"])
            #expect(try await client.sync.run().outcome == .updated)
            #expect(!FileManager.default.fileExists(atPath: leftover.path))
        }
    }
}
