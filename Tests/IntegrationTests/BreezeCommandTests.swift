import BreezeKit
import Foundation
import FreshAir
import FreshAirAsyncHTTPClient
import TestSupport
import Testing

@Suite("The breeze command, run as a user runs it")
struct BreezeCommandTests {
    @Test("breeze sync: files at DIR/<path>, a summary, JSON, and exit codes")
    func syncCommand() async throws {
        try await PublishedFolder.with(.nginx) { server in
            try ExampleBundle.write(in: server.root)
            let local = try TemporaryFolder("cli")
            let directory = local.path("Content").path
            let url = server.url.appendingPathComponent(ExampleBundle.name).absoluteString
            let env = ["--env", "platform=iOS", "--env", "systemVersion=9.0", "--env", "appVersion=0.9"]

            let first = try await BreezeBinary.run(["sync", url, directory] + env)
            #expect(first.status == 0, "\(first.error)")
            #expect(first.output.hasPrefix("Updated to version 1: 4 downloaded"))
            #expect(
                local.path("Content/Embed1.freshair/bar.md").text == ExampleBundle.contents["Embed1.freshair/bar.md"]
            )
            #expect(local.path("Content/manifest.json").text != nil)
            #expect(!FileManager.default.fileExists(atPath: local.path("Content/Embed2.freshair").path))

            let again = try await BreezeBinary.run(["sync", url, directory, "--json"] + env)
            #expect(again.status == 0)
            let summary = try JSONDecoder().decode(SyncSummary.self, from: Data(again.output.utf8))
            #expect(summary.outcome == .alreadyCurrent)
            #expect(summary.notModified)
            #expect(summary.requests == 1)

            let upgraded = try await BreezeBinary.run([
                "sync", url, directory, "--env", "platform=iOS", "--env", "systemVersion=9.0", "--env",
                "appVersion=1.1",
            ])
            #expect(upgraded.status == 0, "\(upgraded.error)")
            #expect(
                local.path("Content/Embed2.freshair/zab.md").text == ExampleBundle.contents["Embed2.freshair/zab.md"]
            )
            #expect(!FileManager.default.fileExists(atPath: local.path("Content/Embed1.freshair/bar.md").path))

            let missing = try await BreezeBinary.run([
                "sync", server.url.appendingPathComponent("Nope.freshair").absoluteString, directory, "--attempts", "1",
            ])
            #expect(missing.status == 69)
            #expect(missing.error.contains("HTTP 404"))
            #expect(missing.error.contains("Check the URL"))
            #expect(local.path("Content/Embed2.freshair/zab.md").text != nil, "the live version survives a failed sync")

            let rollback = try await BreezeBinary.run(["rollback", directory])
            #expect(rollback.status == 0)
            #expect(local.path("Content/Embed1.freshair/bar.md").text != nil)

            let occupied = local.path("Occupied")
            try FileManager.default.createDirectory(at: occupied, withIntermediateDirectories: true)
            try Data("mine".utf8).write(to: occupied.appendingPathComponent("notes.txt"))
            let refused = try await BreezeBinary.run(["sync", url, occupied.path] + env)
            #expect(refused.status == 73)
            #expect(refused.error.contains("was not made by FreshAir"))
            #expect(occupied.appendingPathComponent("notes.txt").text == "mine")
        }
    }

    @Test("breeze serve: ETag, Last-Modified, 304 and Range")
    func serveCommand() async throws {
        let folder = try TemporaryFolder("serve")
        let payload = Data((0..<5000).map { UInt8($0 % 251) })
        try payload.write(to: folder.path("data.bin"))
        let server = try BreezeBinary.start(["serve", folder.url.path, "--port", "0"])
        defer { kill(server.processIdentifier, SIGKILL) }
        let firstLine = (server.standardOutput as! Pipe).fileHandleForReading.availableData
        let announced = String(decoding: firstLine, as: UTF8.self).prefix { $0 != "\n" }
        let base = try #require(
            announced.split(separator: " ").last.flatMap {
                URL(string: $0.trimmingCharacters(in: .whitespacesAndNewlines))
            }
        )
        let url = base.appendingPathComponent("data.bin")
        let transport = testTransport

        let (status, etag, lastModified, body) = try await transport.get(HTTPGetRequest(url: url)) { head, body in
            (head.status, head["ETag"], head["Last-Modified"], try await body.collect(upTo: 1 << 20))
        }
        #expect(status == 200)
        #expect(body == payload)
        let validator = try #require(etag)
        #expect(lastModified != nil)

        let notModified = try await transport.get(HTTPGetRequest(url: url, headers: [("If-None-Match", validator)])) {
            head,
            _ in head.status
        }
        #expect(notModified == 304)
        let sinceDate = try await transport.get(
            HTTPGetRequest(url: url, headers: [("If-Modified-Since", lastModified!)])
        ) { head, _ in head.status }
        #expect(sinceDate == 304)

        let (rangeStatus, contentRange, tail) = try await transport.get(
            HTTPGetRequest(url: url, headers: [("Range", "bytes=4000-"), ("If-Range", validator)])
        ) { head, body in
            (head.status, head["Content-Range"], try await body.collect(upTo: 1 << 20))
        }
        #expect(rangeStatus == 206)
        #expect(contentRange == "bytes 4000-4999/5000")
        #expect(tail == payload.suffix(1000))

        let missing = try await transport.get(HTTPGetRequest(url: base.appendingPathComponent("nope"))) { head, _ in
            head.status
        }
        #expect(missing == 404)
    }

    @Test("A sync killed mid-download resumes with Range and completes; the old version stays live meanwhile")
    func killedSyncResumes() async throws {
        try await PublishedFolder.with(.nginx) { server in
            let bundle = server.root.appendingPathComponent("Big.freshair")
            try FileManager.default.createDirectory(at: bundle, withIntermediateDirectories: true)
            try Data("v1\n".utf8).write(to: bundle.appendingPathComponent("readme.md"))
            try PublishedText.write(
                #"[{"filename": "readme.md", "sha": "\#(ContentHash.of(Data("v1\n".utf8), using: .sha256).hex)"}]"#,
                to: bundle.appendingPathComponent("manifest.json")
            )
            let local = try TemporaryFolder("resume")
            let directory = local.path("Big").path
            // /slow/ is throttled to 512 KB/s unless the request carries Range.
            let url = server.url.appendingPathComponent("slow/Big.freshair/").absoluteString
            #expect(try await BreezeBinary.run(["sync", url, directory]).status == 0)

            let big = SeededBytes.random(6 << 20)
            try big.write(to: bundle.appendingPathComponent("big.bin"))
            let digest = ContentHash.of(big, using: .sha256)
            try PublishedText.write(
                #"[{"filename": "readme.md", "sha": "\#(ContentHash.of(Data("v1\n".utf8), using: .sha256).hex)"}, {"filename": "big.bin", "sha": "\#(digest.hex)"}]"#,
                to: bundle.appendingPathComponent("manifest.json")
            )

            let sync = try BreezeBinary.start(["sync", url, directory])
            let partial = local.path(".Big.freshair-store/partials/\(digest.hex)").path
            let pid = sync.processIdentifier
            await pollOffThePool(
                until: Date().addingTimeInterval(20),
                { (try? FileManager.default.attributesOfItem(atPath: partial)[.size] as? Int) ?? 0 >= 1 << 20 },
                then: { kill(pid, SIGKILL) }
            )
            sync.waitUntilExit()
            let kept = try #require(try FileManager.default.attributesOfItem(atPath: partial)[.size] as? Int)
            #expect(kept >= 1 << 20 && kept < big.count)
            #expect(local.path("Big/readme.md").text == "v1\n", "the old version is still live")
            #expect(!FileManager.default.fileExists(atPath: local.path("Big/big.bin").path))

            let resumed = try await BreezeBinary.run(["sync", url, directory, "--json"])
            #expect(resumed.status == 0, "\(resumed.error)")
            #expect(try Data(contentsOf: local.path("Big/big.bin")) == big)
            let last = try #require(server.nginxRequests().last { $0.path == "/slow/Big.freshair/big.bin" })
            #expect(last.status == 206)
            #expect(last.range.hasPrefix("bytes="))
            let resumedFrom = try #require(Int(last.range.dropFirst(6).prefix { $0.isNumber }))
            #expect(resumedFrom >= kept - 1 && resumedFrom <= kept, "resumed where the killed run stopped")
            #expect(last.bodyBytes == big.count - resumedFrom, "only the missing bytes crossed the wire")
        }
    }

    @Test("breeze package, breeze repo add and breeze sync for packages and repositories")
    func packagesAndRepositories() async throws {
        try await PublishedFolder.with(.nginx) { server in
            let work = try TemporaryFolder("cli-packages")
            try writeSampleContent(in: work.path("content"))
            let longName = String(repeating: "x", count: 150) + ".txt"
            try Data("long".utf8).write(to: work.path("content/\(longName)"))

            let packed = try await BreezeBinary.run([
                "package", work.path("content").path, "-o", server.root.appendingPathComponent("content.tgz").path,
                "--meta",
            ])
            #expect(packed.status == 0, "\(packed.error)")
            // GNU tar reads what breeze writes, long names included.
            let listing = try await shell("tar -tzf content.tgz", in: server.root)
            #expect(listing.contains("art/cats/cat1.txt"))
            #expect(listing.contains(longName))
            #expect(FileManager.default.fileExists(atPath: server.root.appendingPathComponent("content.tgz.meta").path))

            let packageURL = server.url.appendingPathComponent("content.tgz").absoluteString
            let synced = try await BreezeBinary.run(["sync", packageURL, work.path("Installed").path])
            #expect(synced.status == 0, "\(synced.error)")
            #expect(synced.output.hasPrefix("Installed package version 1"))
            #expect(work.path("Installed/art/cats/cat1.txt").text == "meow\n")
            #expect(work.path("Installed/\(longName)").text == "long")
            let again = try await BreezeBinary.run(["sync", packageURL, work.path("Installed").path])
            #expect(again.output.hasPrefix("Package current (304 Not Modified)"))

            let refusing = try LoopbackSocket(listening: false)
            defer { refusing.close() }
            let offline = try await BreezeBinary.run([
                "sync", refusing.url("content.tgz").absoluteString, work.path("Offline").path,
                "--bundled", server.root.appendingPathComponent("content.tgz").path, "--attempts", "1",
            ])
            #expect(offline.status == 75)
            #expect(
                work.path("Offline/art/cats/cat1.txt").text == "meow\n",
                "the bundled copy is installed when offline"
            )

            let repository = server.root.appendingPathComponent("com.example.level1").path
            let added = try await BreezeBinary.run([
                "repo", "add", work.path("content").path, repository, "--name", "cats",
            ])
            #expect(added.output.hasPrefix("Published cats version 1"))
            let unchanged = try await BreezeBinary.run([
                "repo", "add", work.path("content").path, repository, "--name", "cats",
            ])
            #expect(unchanged.output.contains("unchanged at version 1"))
            let repo = try await BreezeBinary.run([
                "sync", "--repo", "com.example.level1", server.url.absoluteString, work.path("Bundles").path, "--json",
            ])
            #expect(repo.status == 0, "\(repo.error)")
            let summary = try JSONDecoder().decode(SyncSummary.self, from: Data(repo.output.utf8))
            #expect(summary.repository?.updated == ["cats": 1])
            #expect(summary.outcome == .updated && summary.downloaded == ["cats"])
            #expect(work.path("Bundles/cats/art/cats/cat1.txt").text == "meow\n")
        }
    }

    @Test(
        "A repository's first mistakes: its index.json URL syncs it, its folder given as a bundle's names the command, and a name devices would refuse is refused before anything is written"
    )
    func repositoryFirstMistakes() async throws {
        try await PublishedFolder.with(.nginx) { server in
            let work = try TemporaryFolder("cli-repository-mistakes")
            try writeSampleContent(in: work.path("emoji"))
            let repository = server.root.appendingPathComponent("main")
            let added = try await BreezeBinary.run(["repo", "add", work.path("emoji").path, repository.path])
            #expect(added.status == 0, "\(added.error)")

            // `--name Emoji` beside `emoji` is one folder on a Mac: every device would refuse that index.
            let index = try Data(contentsOf: repository.appendingPathComponent("index.json"))
            let clash = try await BreezeBinary.run([
                "repo", "add", work.path("emoji").path, repository.path, "--name", "Emoji",
            ])
            #expect(clash.status != 0)
            #expect(
                clash.error.contains("'Emoji' and 'emoji'") && clash.error.contains("--name emoji"),
                "\(clash.error)"
            )
            #expect(try Data(contentsOf: repository.appendingPathComponent("index.json")) == index)
            #expect(!FileManager.default.fileExists(atPath: repository.appendingPathComponent("Emoji-1.tar.gz").path))
            let hidden = try await BreezeBinary.run([
                "repo", "add", work.path("emoji").path, repository.path, "--name", ".x",
            ])
            #expect(hidden.status != 0 && hidden.error.contains("not starting with '.'"), "\(hidden.error)")

            // The repository's folder, as if it were a bundle's: the error, then the command that syncs it.
            let folderURL = server.url.appendingPathComponent("main/").absoluteString
            let asBundle = try await BreezeBinary.run(["sync", folderURL, work.path("Live").path])
            #expect(asBundle.status == 69)
            #expect(
                asBundle.error.contains(
                    "hint: \(folderURL) holds a repository's index.json, not a bundle: `breeze sync \(server.url.absoluteString) --repo main"
                ),
                "\(asBundle.error)"
            )
            let localFolder = try await BreezeBinary.run(["sync", repository.path, work.path("Live").path])
            #expect(localFolder.status == 66)
            #expect(localFolder.error.contains("--repo main"), "\(localFolder.error)")
            // A folder that holds neither gets no such hint.
            let nothing = try await BreezeBinary.run([
                "sync", server.url.appendingPathComponent("none/").absoluteString, work.path("Live").path,
            ])
            #expect(nothing.status == 69 && !nothing.error.contains("hint: "), "\(nothing.error)")

            // The index's URL alone is the repository, as a manifest.json URL is its bundle.
            let byIndex = try await BreezeBinary.run([
                "sync", server.url.appendingPathComponent("main/index.json").absoluteString, work.path("Live").path,
            ])
            #expect(byIndex.status == 0, "\(byIndex.error)")
            #expect(work.path("Live/emoji/art/cats/cat1.txt").text == "meow\n")
            let conflicting = try await BreezeBinary.run([
                "sync", server.url.appendingPathComponent("main/index.json").absoluteString, work.path("Live").path,
                "--repo", "other",
            ])
            #expect(
                conflicting.status == 64 && conflicting.error.contains("not of --repo other"),
                "\(conflicting.error)"
            )
        }
    }

    @Test("A package download killed midway resumes with Range, and the file is unpacked in full")
    func killedPackageResumes() async throws {
        try await PublishedFolder.with(.nginx) { server in
            let source = server.root.appendingPathComponent("src")
            try FileManager.default.createDirectory(at: source, withIntermediateDirectories: true)
            try await shell(
                "head -c 8388608 /dev/urandom > src/blob.bin && echo hello > src/small.txt && tar -czf content.tgz -C src .",
                in: server.root
            )
            let local = try TemporaryFolder("package-resume")
            let url = server.url.appendingPathComponent("slow/content.tgz").absoluteString
            let sync = try BreezeBinary.start(["sync", url, local.path("Content").path])
            let partials = local.path(".Content.freshair-store/partials")
            let partialSize: @Sendable () -> Int = {
                let names = (try? FileManager.default.contentsOfDirectory(atPath: partials.path)) ?? []
                return names.filter { !$0.hasSuffix(".resume") }.compactMap {
                    try? FileManager.default.attributesOfItem(atPath: partials.appendingPathComponent($0).path)[.size]
                        as? Int
                }.max() ?? 0
            }
            let pid = sync.processIdentifier
            // Killed from the polling thread the moment enough has arrived (see killedSyncResumes).
            await pollOffThePool(
                until: Date().addingTimeInterval(30),
                { partialSize() >= 256 << 10 || !sync.isRunning },
                then: { kill(pid, SIGKILL) }
            )
            sync.waitUntilExit()
            let killedAt = partialSize()
            try #require(
                sync.terminationReason == .uncaughtSignal,
                "the first sync ended on its own (partial seen: \(killedAt) bytes)"
            )
            #expect(
                !FileManager.default.fileExists(atPath: local.path("Content").path),
                "nothing half-unpacked is live"
            )

            let resumed = try await BreezeBinary.run(["sync", url, local.path("Content").path])
            #expect(resumed.status == 0, "\(resumed.error)")
            #expect(
                try Data(contentsOf: local.path("Content/blob.bin"))
                    == Data(contentsOf: source.appendingPathComponent("blob.bin"))
            )
            #expect(local.path("Content/small.txt").text == "hello\n")
            let last = try #require(server.nginxRequests().last { $0.path == "/slow/content.tgz" })
            #expect(last.status == 206)
        }
    }

    @Test("A publishing mistake: the library's message names no tool; breeze adds the command that fixes it")
    func publisherHint() async throws {
        try await PublishedFolder.with(.nginx) { server in
            let bundle = try ExampleBundle.write(in: server.root)
            try PublishedText.write(
                "# changed, not hashed\n",
                to: bundle.appendingPathComponent("Embed1.freshair/bar.md")
            )
            let local = try TemporaryFolder("hint")
            let run = try await BreezeBinary.run([
                "sync", server.url.appendingPathComponent(ExampleBundle.name + "/").absoluteString,
                local.path("live").path,
                "--env", "platform=iOS", "--env", "systemVersion=9.0", "--env", "appVersion=0.9", "--attempts", "1",
            ])
            #expect(run.status == 65, "\(run.error)")
            let lines = run.error.split(separator: "\n").map(String.init)
            #expect(lines.count == 2, "\(lines)")
            #expect(lines.first?.hasPrefix("breeze: error: Embed1.freshair/bar.md") == true, "\(lines)")
            #expect(lines.first?.contains("recompute the digests") == true && lines.first?.contains("`breeze") == false)
            #expect(lines.last?.hasPrefix("breeze: hint: `breeze hash BUNDLE`") == true, "\(lines)")
        }
    }

    @Test("breeze serve on a port in use says so and exits 78, instead of printing nothing for ever")
    func serveOnABusyPort() async throws {
        let busy = try LoopbackSocket(listening: true)
        defer { busy.close() }
        let folder = try TemporaryFolder("serve-busy")
        let process = try BreezeBinary.start(["serve", folder.url.path, "--port", String(busy.port)])
        let deadline = Date().addingTimeInterval(30)
        while process.isRunning, Date() < deadline { try await Task.sleep(for: .milliseconds(50)) }
        process.stopNow()
        let error = String(
            decoding: (process.standardError as! Pipe).fileHandleForReading.readDataToEndOfFile(),
            as: UTF8.self
        )
        #expect(process.terminationStatus == 78, "\(process.terminationStatus): \(error)")
        #expect(error.contains("could not listen on 127.0.0.1:\(busy.port): the port is in use"), "\(error)")
    }

    @Test(
        "A destination that looks like a mistyped URL is refused (78), and nothing is written",
        arguments: [
            "s3:/bucket/apps", "S3://bucket/apps", "https://cdn.example.com/apps",
        ]
    )
    func mistypedDestination(destination: String) async throws {
        let work = try TemporaryFolder("publish-typo")
        let bundle = try ExampleBundle.write(in: work.url)
        _ = try await BundleHasher.run(bundle: bundle)
        let process = try BreezeBinary.start(["publish", bundle.path, destination], in: work.url)
        process.waitUntilExit()
        let error = String(
            decoding: (process.standardError as! Pipe).fileHandleForReading.readDataToEndOfFile(),
            as: UTF8.self
        )
        #expect(process.terminationStatus == 78, "\(error)")
        #expect(error.contains("looks like a mistyped URL"), "\(error)")
        let first = String(destination.prefix { $0 != ":" }) + ":"
        #expect(!FileManager.default.fileExists(atPath: work.path(first).path), "a folder named \(first) was made")
    }

    @Test(
        "A mistyped subcommand gets the nearest names and exit 64",
        arguments: [
            ("synk", "did you mean 'sync'?"), ("publsh", "did you mean 'publish'?"),
            ("zzzz", "`breeze --help` lists them"),
        ]
    )
    func typoSuggestion(word: String, said: String) async throws {
        let run = try await BreezeBinary.run([word, "a", "b"])
        #expect(run.status == 64)
        #expect(run.error.contains("'\(word)' is not a breeze command") && run.error.contains(said), "\(run.error)")
    }

    @Test(
        "--version with a value after a command is refused (64) with the option meant, not answered with breeze's version and exit 0",
        arguments: [
            (["check-update", "C.freshair", "--version", "0.9"], "--app-version 0.9"),
            (["whatsnew", "C.freshair", "--version=1.0"], "--from VERSION --to VERSION"),
            (["sync", "http://127.0.0.1:1/A.freshair/", "live", "--version", "2.1"], "--env appVersion=2.1"),
        ]
    )
    func versionGivenAValue(arguments: [String], said: String) async throws {
        let run = try await BreezeBinary.run(arguments)
        #expect(run.status == 64)
        #expect(run.output.isEmpty && run.error.contains(said), "\(run.output) \(run.error)")
    }

    @Test("--version alone prints breeze's version, after a command too")
    func versionAlone() async throws {
        for arguments in [["--version"], ["sync", "--version"]] {
            let run = try await BreezeBinary.run(arguments)
            #expect(run.status == 0 && run.output == BreezeVersion.current + "\n", "\(arguments): \(run.output)")
        }
    }

    @Test("Help groups the subcommands by task")
    func helpGroups() async throws {
        let help = try await BreezeBinary.run(["--help"]).output
        let groups = ["AUTHOR CONTENT", "SIGN", "PUBLISH AND SERVE", "PREVIEW WHAT A DEVICE SEES", "ON A DEVICE"]
        let positions = groups.compactMap { help.range(of: $0 + " SUBCOMMANDS")?.lowerBound }
        #expect(positions.count == groups.count && positions == positions.sorted(), "\(help)")
        #expect(help.replacingOccurrences(of: "\n", with: " ").contains("78 configuration"))
    }

    @Test(
        "breeze sync refuses flags that make no sense together (64), before any work",
        arguments: [
            (["--repo", "r", "--store", "/tmp/s"], "--store applies to a bundle or a package"),
            (["--cdn", "http://127.0.0.1:9/"], "--cdn applies with --repo only"),
            (["--atomic"], "--atomic applies with --repo only"),
            (["--bundled", "/tmp/content.tgz"], "--bundled applies to a package URL"),
            (["--key-updates", "http://127.0.0.1:9/keys/"], "--key-updates applies with --keys only"),
        ]
    )
    func syncFlagCombinations(flags: [String], said: String) async throws {
        let work = try TemporaryFolder("sync-flags")
        let run = try await BreezeBinary.run(
            ["sync", "http://127.0.0.1:9/B.freshair/", work.path("live").path] + flags
        )
        #expect(run.status == 64 && run.error.contains(said), "\(run.status): \(run.error)")
        #expect(!FileManager.default.fileExists(atPath: work.path("live").path))
    }

    @Test(
        "An option checked only as the command runs is refused with the usage of that command, not the root's",
        arguments: [
            (["sync", "http://127.0.0.1:9/B.freshair/", "LIVE", "--trusted-key", "K8ghK8xuo"], "breeze sync"),
            (["sign", "IN", "--key", "KEY", "--objects", "../objects"], "breeze sign"),
        ]
    )
    func lateOptionErrorsShowTheirCommand(arguments: [String], command: String) async throws {
        let work = try TemporaryFolder("late-options")
        let folders = ["LIVE": "live", "IN": "in", "KEY": "key"]
        let run = try await BreezeBinary.run(arguments.map { folders[$0].map { work.path($0).path } ?? $0 })
        #expect(run.status == 64, "\(run.status): \(run.error)")
        #expect(run.error.hasPrefix("Error: --"), "\(run.error)")
        #expect(run.error.contains("\nUsage: \(command) "), "\(run.error)")
        #expect(run.error.contains("See '\(command) --help'"), "\(run.error)")
        #expect(!FileManager.default.fileExists(atPath: work.path("live").path))
    }

    @Test(
        "A source that is neither a URL breeze reads nor a folder: a server's address without its scheme, s3://",
        arguments: [
            ("127.0.0.1:8080/C.freshair/", "a server's URL starts with its scheme: http://127.0.0.1:8080/C.freshair/"),
            ("localhost/C.freshair/", "http://localhost/C.freshair/"),
            ("s3://bucket/C.freshair/", "not s3://. A device reads a bucket over https"),
        ]
    )
    func sourceWithoutAScheme(source: String, said: String) async throws {
        let work = try TemporaryFolder("sync-source")
        let run = try await BreezeBinary.run(["sync", source, work.path("live").path])
        #expect(run.status == 64 && run.error.contains(said), "\(run.status): \(run.error)")
        #expect(run.error.contains("Usage: breeze sync"), "\(run.error)")
        // A folder's name with dots is a folder's: missing, it is named as one (66).
        let missing = try await BreezeBinary.run(["sync", work.path("C.freshair").path, work.path("live").path])
        #expect(missing.status == 66 && missing.error.contains("no such file or folder"), "\(missing.error)")
    }

    @Test("Missing folders and files are named in words, with exit 66, never NSCocoaErrorDomain")
    func missingPathsInWords() async throws {
        let work = try TemporaryFolder("missing-paths")
        try FileManager.default.createDirectory(at: work.path("plain"), withIntermediateDirectories: true)
        let cases: [([String], String)] = [
            (["hash", work.path("plain").path], "has no manifest.json: it is not a bundle folder yet"),
            (["validate", work.path("nope").path], "nope: no such file or folder"),
            (["sync", work.path("plain").path, work.path("live").path], "no such file. Check the path"),
        ]
        for (arguments, said) in cases {
            let run = try await BreezeBinary.run(arguments)
            #expect(run.status == 66, "\(arguments): \(run.status) \(run.error)")
            #expect(run.error.contains(said) && !run.error.contains("Domain="), "\(arguments): \(run.error)")
        }
        try ExampleBundle.write(in: work.url)
        try Data("{broken".utf8).write(to: work.path(ExampleBundle.name + "/manifest.json"))
        let broken = try await BreezeBinary.run(["publish", work.path(ExampleBundle.name).path, work.path("out").path])
        #expect(broken.status == 65 && broken.error.contains("invalid JSON"), "\(broken.status): \(broken.error)")
    }

    /// The subcommands `breeze --help` lists.
    static func subcommands() async throws -> Set<String> {
        let help = try await BreezeBinary.run(["--help"]).output
        return Set(
            help.split(separator: "\n").compactMap { line -> String? in
                guard line.hasPrefix("  "), !line.hasPrefix("   ") else { return nil }
                return line.split(separator: " ").first.map(String.init)
            }
        ).subtracting(["-h,", "--version", "--help", "See"])
    }

    @Test("Every subcommand's first mistake: a missing path or an existing file, its exit code, words only")
    func everySubcommandsFirstMistake() async throws {
        let work = try TemporaryFolder("first-mistake")
        let nope = work.path("nope").path
        try FileManager.default.createDirectory(at: work.path("plain"), withIntermediateDirectories: true)
        try Data("x".utf8).write(to: work.path("plain/f.txt"))
        #expect(try await BreezeBinary.run(["init", work.path("B.freshair").path]).status == 0)
        #expect(try await BreezeBinary.run(["keygen", work.path("k.key").path]).status == 0)
        let bundle = work.path("B.freshair").path
        let key = work.path("k.key").path
        let cases: [(arguments: [String], status: Int32, said: String)] = [
            (["init", work.path("plain").path], 73, "is not empty"),
            (["generate", nope], 66, "not a bundle folder yet"),
            (["hash", nope], 66, "not a bundle folder yet"),
            (["validate", nope], 66, "no such file or folder"),
            (["package", nope, "--output", work.path("p.tgz").path], 66, "no such file or folder"),
            (["repo", "add", nope, work.path("r").path], 66, "no such file or folder"),
            (["keygen", key], 73, "a signing key is never overwritten"),
            (["keys", "create", work.path("keys/1.json").path, "--key", nope], 66, "no such signing key file"),
            (["sign", nope, "--key", key], 66, "no such file or folder"),
            (["sign", bundle, "--key", nope], 66, "no such signing key file"),
            (["release", nope, work.path("site").path], 66, "no such file or folder"),
            (["revert", nope], 66, "no such file or folder"),
            (["status", nope], 66, "no such file or folder"),
            (["status", work.path("plain").path], 78, "nothing breeze released is at"),
            (["history", nope], 66, "no such file or folder"),
            (["publish", nope, work.path("site").path], 66, "no such file or folder"),
            (["serve", nope], 66, "no such file or folder"),
            (["plan", nope], 66, "no such file or folder"),
            (["whatsnew", nope, "--from", "1.0", "--to", "2.0"], 66, "no such file or folder"),
            (["check-update", nope, "--app-version", "1.0"], 66, "no such file or folder"),
            (["preview", nope, "--from", "1.0", "--to", "2.0", "-o", work.path("w.html").path], 66, "no such file"),
            (["sync", nope, work.path("live").path], 66, "no such file or folder"),
            (["verify", nope], 66, "no such file or folder"),
            (["rollback", nope], 66, "no such file or folder"),
            (["demo", "--workspace", "/proc/freshair-nope"], 66, "no such file or folder"),
        ]
        // Every subcommand `breeze --help` lists has a case here: a new one needs its own.
        let listed = try await Self.subcommands()
        #expect(listed == Set(cases.map(\.arguments[0])), "subcommands without a case: \(listed)")
        for (arguments, status, said) in cases {
            let run = try await BreezeBinary.run(arguments)
            #expect(run.status == status, "\(arguments): \(run.status) \(run.error)")
            #expect(run.error.hasPrefix("breeze: error: ") && run.error.contains(said), "\(arguments): \(run.error)")
            for leak in ["Domain=", "Code=", "NIO", "BoringSSL", ".build/", "Error("] {
                #expect(!run.error.contains(leak), "\(arguments) leaks \(leak): \(run.error)")
            }
        }
        #expect(!FileManager.default.fileExists(atPath: work.path("p.tgz").path), "no empty package was written")
        #expect(!FileManager.default.fileExists(atPath: work.path("r").path), "no empty bundle was published")
        // `keys/1.json`, as its help suggests, in a folder that does not exist yet.
        let keys = try await BreezeBinary.run(["keys", "create", work.path("keys/1.json").path, "--key", key])
        #expect(
            keys.status == 0 && FileManager.default.fileExists(atPath: work.path("keys/1.json").path),
            "\(keys.error)"
        )
    }

    @Test("--json on every command that reports; with --json an error is an object with code, message and exit status")
    func jsonEverywhere() async throws {
        let work = try TemporaryFolder("json-errors")
        let commands = try await Self.subcommands()
        // serve runs until stopped and demo tells a story: neither reports a result.
        for command in commands.subtracting(["serve", "demo"]) {
            let sub = command == "repo" ? ["repo", "add"] : command == "keys" ? ["keys", "create"] : [command]
            let usage = try await BreezeBinary.run(sub + ["--help"]).output
            #expect(usage.contains("--json"), "breeze \(sub.joined(separator: " ")) has no --json")
        }

        func error(_ arguments: [String]) async throws -> (status: Int32, body: [String: Any]) {
            let run = try await BreezeBinary.run(arguments + ["--json"])
            let object = try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any]
            return (run.status, try #require(object?["error"] as? [String: Any], "\(arguments): \(run.output)"))
        }
        let missing = try await error(["validate", work.path("nope").path])
        #expect(
            missing.status == 66 && missing.body["exitStatus"] as? Int == 66
                && missing.body["code"] as? String == "not-found"
        )
        #expect((missing.body["message"] as? String)?.contains("no such file or folder") == true)
        let offline = try LoopbackSocket(listening: false)
        defer { offline.close() }
        let refused = try await error(["sync", "http://127.0.0.1:\(offline.port)/B.freshair/", work.path("live").path])
        #expect(refused.status == 75 && refused.body["code"] as? String == "transport", "\(refused.body)")
        let usage = try await error(["release"])
        #expect(usage.status == 64 && usage.body["code"] as? String == "usage", "\(usage.body)")
        let typo = try await error(["synk"])
        #expect(typo.status == 64 && (typo.body["message"] as? String)?.contains("did you mean 'sync'?") == true)
    }

    @Test("A sync counts the files its conditions leave to other devices, in its one line and its JSON")
    func filesForOtherDevices() async throws {
        let work = try TemporaryFolder("other-devices")
        let bundle = work.path("C.freshair").path
        #expect(try await BreezeBinary.run(["init", bundle]).status == 0)
        // The starter: a welcome image at 1x, 2x and 3x, strings in English and French.
        let french = try await BreezeBinary.run([
            "sync", bundle, work.path("fr").path, "--env", "displayScale=2", "--env", "language=fr",
        ])
        #expect(french.status == 0 && french.output.contains(", 2 for other devices;"), "\(french.output)")
        #expect(
            work.path("fr/Resources/welcome@2x.png").text != nil && work.path("fr/Resources/welcome.png").text == nil
        )
        let english = try await BreezeBinary.run([
            "sync", bundle, work.path("en").path, "--env", "displayScale=2", "--env", "language=en", "--json",
        ])
        let summary = try JSONDecoder().decode(SyncSummary.self, from: Data(english.output.utf8))
        #expect(summary.filesForOtherDevices == 3 && summary.filesDownloaded == 4, "\(english.output)")
        // Nothing new: the check says nothing of them.
        let again = try await BreezeBinary.run([
            "sync", bundle, work.path("en").path, "--env", "displayScale=2", "--env", "language=en",
        ])
        #expect(again.status == 0 && !again.output.contains("other devices"), "\(again.output)")
    }

    @Test(
        "Signed content synced with no key pinned: breeze says its signatures were not checked, naming only real keys"
    )
    func signedButNotPinned() async throws {
        let work = try TemporaryFolder("unpinned")
        #expect(try await BreezeBinary.run(["init", work.path("C.freshair").path]).status == 0)
        let keygen = try await BreezeBinary.run(["keygen", work.path("release.key").path])
        let publicKey = try #require(keygen.output.split(separator: "\n").last.map(String.init))
        let site = work.path("site/C.freshair").path
        let release = try await BreezeBinary.run([
            "release", work.path("C.freshair").path, site, "--key", work.path("release.key").path,
        ])
        #expect(release.status == 0, "\(release.error)")

        let unpinned = try await BreezeBinary.run(["sync", site, work.path("a").path])
        #expect(unpinned.status == 0 && unpinned.output.hasPrefix("Updated to version 1"), "\(unpinned.error)")
        #expect(unpinned.error.contains("breeze: note: this version is signed (by \(publicKey)), but no key is pinned"))
        #expect(unpinned.error.contains("--trusted-key") && !unpinned.output.contains("no key is pinned"))  // said once
        // Nothing new: nothing said.
        let again = try await BreezeBinary.run(["sync", site, work.path("a").path])
        #expect(again.status == 0 && again.error.isEmpty, "\(again.error)")
        let pinned = try await BreezeBinary.run(["sync", site, work.path("b").path, "--trusted-key", publicKey])
        #expect(pinned.status == 0 && pinned.error.isEmpty, "\(pinned.error)")

        // A signature whose key is an escape sequence: the content is still said to be signed,
        // and the server's text never reaches the terminal.
        let unsigned = try await BreezeBinary.run(["init", work.path("D.freshair").path])
        #expect(unsigned.status == 0)
        let bare = try await BreezeBinary.run(["sync", work.path("D.freshair").path, work.path("c").path])
        #expect(bare.status == 0 && bare.error.isEmpty, "\(bare.error)")
        let manifest = work.path("D.freshair/manifest.json")
        let files = try JSONSerialization.jsonObject(with: Data(contentsOf: manifest))
        let document: [String: Any] = ["files": files, "signatures": [["key": "\u{1B}[2J", "sig": "AAAA"]]]
        try JSONSerialization.data(withJSONObject: document).write(to: manifest)
        let hostile = try await BreezeBinary.run(["sync", work.path("D.freshair").path, work.path("d").path])
        #expect(
            hostile.status == 0 && hostile.error.contains("this version is signed, but no key is pinned"),
            "\(hostile.error)"
        )
        #expect(!hostile.error.contains("\u{1B}"))

        // A repository whose index is signed: the same note, naming the index.
        try FileManager.default.createDirectory(at: work.path("cats"), withIntermediateDirectories: true)
        try Data("meow".utf8).write(to: work.path("cats/cat.txt"))
        let added = try await BreezeBinary.run([
            "repo", "add", work.path("cats").path, work.path("repos/com.example.signed").path,
            "--key", work.path("release.key").path,
        ])
        #expect(added.status == 0, "\(added.error)")
        let repository = ["sync", work.path("repos").path, "--repo", "com.example.signed"]
        let repo = try await BreezeBinary.run(repository + [work.path("r").path])
        #expect(repo.status == 0 && work.path("r/cats/cat.txt").text == "meow", "\(repo.error)")
        #expect(
            repo.error.contains(
                "breeze: note: this repository's index is signed (by \(publicKey)), but no key is pinned"
            ),
            "\(repo.error)"
        )
        let repoAgain = try await BreezeBinary.run(repository + [work.path("r").path])
        #expect(repoAgain.status == 0 && repoAgain.error.isEmpty, "\(repoAgain.error)")
        let repoPinned = try await BreezeBinary.run(repository + [work.path("r2").path, "--trusted-key", publicKey])
        #expect(repoPinned.status == 0 && repoPinned.error.isEmpty, "\(repoPinned.error)")
    }

    @Test("whatsnew and check-update name the releases this environment left out, and why")
    func releasesLeftOutAreNamed() async throws {
        let work = try TemporaryFolder("left-out")
        let bundle = work.path("App.freshair")
        #expect(try await BreezeBinary.run(["init", bundle.path]).status == 0)
        let notes = """
            {"minimumVersion": "1.0", "upgradeURL": "https://apps.example.com/a", "releases": [
              {"version": "1.0", "features": ["welcome"]},
              {"version": "1.1", "features": ["welcome"], "minimumSystemVersion": "99.0"},
              {"version": "1.2", "features": ["welcome"], "condition": "channel == 'beta'"}]}
            """
        try Data(notes.utf8).write(to: bundle.appendingPathComponent("release_notes.json"))
        let whatsNew = try await BreezeBinary.run(["whatsnew", bundle.path, "--from", "1.0", "--to", "1.2"])
        #expect(whatsNew.output.hasPrefix("Nothing new from 1.0 to 1.2."), "\(whatsNew.output)")
        #expect(
            whatsNew.error.contains("1.1: needs systemVersion 99.0 or later; this environment has"),
            "\(whatsNew.error)"
        )
        #expect(whatsNew.error.contains("1.2: its condition reads keys this environment does not set"))
        let check = try await BreezeBinary.run(["check-update", bundle.path, "--app-version", "1.0"])
        #expect(check.output.hasPrefix("up to date") && check.error.contains("1.1: needs systemVersion 99.0"))
        let beta = try await BreezeBinary.run([
            "whatsnew", bundle.path, "--from", "1.0", "--to", "1.2", "--env", "channel=beta", "--env",
            "systemVersion=99.0",
        ])
        #expect(beta.output.contains("1 feature") && beta.error.isEmpty, "\(beta.output) \(beta.error)")
        // The options swapped: a downgrade, where nothing is new, and the line says which way round.
        let swapped = try await BreezeBinary.run(["whatsnew", bundle.path, "--from", "1.2", "--to", "1.0"])
        #expect(
            swapped.output.hasPrefix(
                "Nothing new from 1.2 to 1.0 (--to is older than --from: did you mean --from 1.0 --to 1.2?)"
            ),
            "\(swapped.output)"
        )
    }

    @Test("A signing key can come from standard input or a pipe, so it never has to be a file on disk")
    func keyFromStandardInput() async throws {
        let work = try TemporaryFolder("key-stdin")
        let breeze = try BreezeBinary.path
        #expect(try await BreezeBinary.run(["init", work.path("B.freshair").path]).status == 0)
        #expect(try await BreezeBinary.run(["keygen", work.path("k.key").path]).status == 0)
        let signed = try await shell("'\(breeze)' sign B.freshair --key /dev/stdin < k.key", in: work.url)
        #expect(signed.contains("Signed manifest.json (B.freshair, sequence 1"), "\(signed)")
        let piped = try await shell("cat k.key | '\(breeze)' sign B.freshair --key /dev/stdin", in: work.url)
        #expect(piped.contains("sequence 2"), "\(piped)")
        // As `release` takes it: `--key -` and `--key-env`, for `sign` and `repo add` too.
        let dash = try await shell("'\(breeze)' sign B.freshair --key - < k.key", in: work.url)
        #expect(dash.contains("sequence 3"), "\(dash)")
        let fromEnvironment = try await shell(
            "K=\"$(cat k.key)\" '\(breeze)' sign B.freshair --key-env K",
            in: work.url
        )
        #expect(fromEnvironment.contains("sequence 4"), "\(fromEnvironment)")
        let added = try await shell(
            "K=\"$(cat k.key)\" '\(breeze)' repo add B.freshair repo/main --key-env K --json",
            in: work.url
        )
        #expect(added.contains("\"published\" : true"), "\(added)")
        let index = try Data(contentsOf: work.path("repo/main/index.json"))
        #expect(String(decoding: index, as: UTF8.self).contains("\"signatures\""))
        let none = try await BreezeBinary.run(["sign", work.path("B.freshair").path])
        #expect(none.status == 64 && none.error.contains("--key-env NAME"), "\(none.error)")
    }

    @Test(
        "A public key given where its private key belongs is refused: its 32 bytes would sign with a secret everyone has"
    )
    func publicKeyAsSigningKey() async throws {
        let work = try TemporaryFolder("public-as-private")
        #expect(try await BreezeBinary.run(["init", work.path("B.freshair").path]).status == 0)
        let keygen = try await BreezeBinary.run(["keygen", work.path("k.key").path])
        let publicKey = try #require(keygen.output.split(separator: "\n").last.map(String.init))
        #expect(
            try await BreezeBinary.run(["sign", work.path("B.freshair").path, "--key", work.path("k.key").path]).status
                == 0
        )
        let signed = try Data(contentsOf: work.path("B.freshair/manifest.json"))
        try Data((publicKey + "\n").utf8).write(to: work.path("public.txt"))
        for command in ["sign", "release"] {
            let arguments =
                command == "sign"
                ? ["sign", work.path("B.freshair").path]
                : ["release", work.path("B.freshair").path, work.path("site/B").path]
            let run = try await BreezeBinary.run(arguments + ["--key", work.path("public.txt").path])
            #expect(run.status == 65, "\(command): \(run.status) \(run.error)")
            // A lone line of base64 is not a key file keygen wrote: refused before anything is signed.
            #expect(run.error.contains("looks like the public key keygen prints"), "\(run.error)")
        }
        #expect(try Data(contentsOf: work.path("B.freshair/manifest.json")) == signed, "the release is as it was")
        #expect(!FileManager.default.fileExists(atPath: work.path("site").path))
        // A key file whose private key was pasted over: its '# public:' line no longer matches.
        let lines = try String(contentsOf: work.path("k.key"), encoding: .utf8).split(separator: "\n")
        let other = try await BreezeBinary.run(["keygen", work.path("other.key").path])
        #expect(other.status == 0)
        let otherSecret = try String(contentsOf: work.path("other.key"), encoding: .utf8).split(separator: "\n")[2]
        try Data((lines[0...1] + [otherSecret]).joined(separator: "\n").utf8).write(to: work.path("pasted.key"))
        let pasted = try await BreezeBinary.run([
            "sign", work.path("B.freshair").path, "--key", work.path("pasted.key").path,
        ])
        #expect(pasted.status == 65 && pasted.error.contains("its '# public:' line names"), "\(pasted.error)")
    }
}

/// Numbers from the command line out of what breeze can use: a usage error naming the range,
/// never an arithmetic trap.
@Suite("Numbers out of range are usage errors (64) that name the range, never a trap")
struct CheckedNumberTests {
    @Test(
        "Each row: the arguments after the command's own, and what the message names",
        arguments: [
            (
                ["sign", "B.freshair", "--key", "k.key", "--expires", "999999999999999"],
                "--expires takes a number of days from 1 to 36500"
            ),
            (["release", "B.freshair", "site", "--key", "k.key", "--expires", "999999999999999"], "--expires"),
            (["repo", "add", "B.freshair", "REPO", "--key", "k.key", "--expires", "0"], "--expires"),
            (["release", "B.freshair", "site", "--rollout", "0"], "--rollout takes a number of percent from 1 to 100"),
            (["release", "B.freshair", "site", "--concurrency", "0"], "--concurrency"),
            (
                ["publish", "B.freshair", "site", "--part-size", "0"],
                "--part-size takes a number of MiB from 5 to 5120"
            ),
            (["publish", "B.freshair", "site", "--gc-grace-minutes", "99999999999999999"], "--gc-grace-minutes"),
            (["publish", "B.freshair", "site", "--timeout", "0"], "--timeout"),
            (["serve", "site", "--port", "70000"], "--port takes a number of a TCP port"),
            (["sync", "http://127.0.0.1:9/B/", "live", "--concurrency", "100000"], "--concurrency"),
        ]
    )
    func outOfRange(arguments: [String], said: String) async throws {
        let work = try TemporaryFolder("numbers")
        #expect(try await BreezeBinary.run(["init", work.path("B.freshair").path]).status == 0)
        #expect(try await BreezeBinary.run(["keygen", work.path("k.key").path]).status == 0)
        let resolved = arguments.map { word in
            ["B.freshair", "k.key", "site", "REPO", "live"].contains(word) ? work.path(word).path : word
        }
        let run = try await BreezeBinary.run(resolved)
        #expect(run.status == 64, "\(arguments): \(run.status) \(run.error)")
        #expect(run.error.contains(said), "\(arguments): \(run.error)")
        #expect(!FileManager.default.fileExists(atPath: work.path("site").path), "\(arguments) published")
    }
}

/// What a hostile server puts in names and dates reaches the terminal as text, never as an
/// escape sequence a terminal would act on.
@Suite("Terminal escapes from a server are shown as \\u{…}, never sent raw to standard error")
struct TerminalEscapeTests {
    @Test(
        "A file name and an expires text holding ESC ]0; … BEL, ESC [2J, CR and a right-to-left override",
        arguments: [
            #"[{"filename": "a\u001b]0;pwned\u0007\r\u202e.txt"}]"#,
            #"{"format": 2, "expires": "\u001b[2J\u001b]0;pwned\u0007", "files": []}"#,
        ]
    )
    func escapedOnStandardError(manifest: String) async throws {
        try await PublishedFolder.with(.nginx) { server in
            let bundle = server.root.appendingPathComponent("Hostile")
            try FileManager.default.createDirectory(at: bundle, withIntermediateDirectories: true)
            try Data(manifest.utf8).write(to: bundle.appendingPathComponent("manifest.json"))
            let local = try TemporaryFolder("escapes")
            let run = try await BreezeBinary.run([
                "sync", server.url.appendingPathComponent("Hostile/").absoluteString, local.path("live").path,
            ])
            #expect(run.status != 0, "\(run.output)")
            for raw in ["\u{1B}", "\u{07}", "\r", "\u{202E}"] {
                #expect(!run.error.contains(raw), "raw \(raw.unicodeScalars.first!.value) on stderr: \(run.error)")
            }
            #expect(run.error.contains("\\u{1B}"), "\(run.error)")
        }
    }
}

/// `breeze serve` under a flood of silent connections: it keeps answering, and does not spin.
@Suite("breeze serve closes idle connections and caps them below its descriptor limit")
struct ServeUnderLoadTests {
    /// The CPU seconds process `pid` has used, from /proc.
    static func cpuSeconds(_ pid: Int32) -> Double {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let end = stat.lastIndex(of: ")")
        else { return 0 }
        let fields = stat[stat.index(after: end)...].split(separator: " ")
        return Double((Int(fields[11]) ?? 0) + (Int(fields[12]) ?? 0)) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    @Test("200 silent connections under a 128-descriptor limit: a client is still answered, and the server idles")
    func silentFlood() async throws {
        let folder = try TemporaryFolder("serve-flood")
        try Data("hello".utf8).write(to: folder.path("a.txt"))
        let server = Process()
        server.executableURL = URL(fileURLWithPath: "/bin/sh")
        let command =
            "ulimit -n 128 && exec '\(try BreezeBinary.path)' serve '\(folder.url.path)' --port 0 --quiet --idle-timeout 1"
        server.arguments = ["-c", command]
        let output = Pipe()
        server.standardOutput = output
        try server.run()
        defer { kill(server.processIdentifier, SIGKILL) }
        let announced = String(decoding: output.fileHandleForReading.availableData, as: UTF8.self)
        let base = try #require(
            announced.prefix { $0 != "\n" }.split(separator: " ").last.flatMap { URL(string: String($0)) }
        )
        let port = try #require(base.port)
        // Connections that never send a byte, more than the server has descriptors for.
        var silent: [Int32] = []
        defer { for socket in silent { close(socket) } }
        for _ in 0..<200 {
            let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            _ = fcntl(socket, F_SETFL, fcntl(socket, F_GETFL) | O_NONBLOCK)
            _ = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            silent.append(socket)
        }
        let before = Self.cpuSeconds(server.processIdentifier)
        let started = ContinuousClock.now
        let (status, body) = try await testTransport.get(HTTPGetRequest(url: base.appendingPathComponent("a.txt"))) {
            head,
            body in (head.status, try await body.collect(upTo: 1 << 10))
        }
        let waited = ContinuousClock.now - started
        #expect(status == 200 && body == Data("hello".utf8))
        #expect(waited < .seconds(30), "answered after \(waited)")
        let used = Self.cpuSeconds(server.processIdentifier) - before
        #expect(used < 0.5 * Double(waited.components.seconds + 1), "the server used \(used) s of CPU in \(waited)")
    }
}
