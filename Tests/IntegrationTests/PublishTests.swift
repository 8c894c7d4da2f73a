import Foundation
import FreshAir
import Synchronization
import Testing

@testable import BreezeKit

@Suite("breeze publish: only what changed, the root manifest last, to a served folder or S3")
struct PublishTests {
    /// A hashed copy of the example bundle, as an author has it before publishing.
    func authoredBundle() async throws -> (folder: TemporaryFolder, bundle: URL) {
        let folder = try TemporaryFolder("author")
        let bundle = try ExampleBundle.write(in: folder.url)
        _ = try await BundleHasher.run(bundle: bundle)
        return (folder, bundle)
    }

    /// Every file of the bundle, manifests included.
    func fileCount(_ bundle: URL) throws -> Int { try BundleFolder.files(in: bundle).count }

    @Test("A folder nginx serves: devices follow every publish, unchanged files stay untouched")
    func folderServedByNginx() async throws {
        try await PublishedFolder.with(.nginx) { server in
            let (author, bundle) = try await authoredBundle()
            defer { withExtendedLifetime(author) {} }
            let destination = FolderDestination(root: server.root.appendingPathComponent(ExampleBundle.name))
            let first = try await Publisher.run(source: bundle, to: destination)
            #expect(first.uploaded.count == (try fileCount(bundle)) && first.uploaded.last == "manifest.json")
            let client = try ExampleClient(published: server)
            try await client.sync.run()
            let rootURL = destination.root.appendingPathComponent("manifest.json")
            let rootModified =
                try FileManager.default.attributesOfItem(atPath: rootURL.path)[.modificationDate] as! Date

            // One file changes: it goes up first, then its manifest, then the root; nothing else.
            try Data("# Bar, republished\n".utf8).write(to: bundle.appendingPathComponent("Embed1.freshair/bar.md"))
            _ = try await BundleHasher.run(bundle: bundle)
            let second = try await Publisher.run(source: bundle, to: destination)
            #expect(second.uploaded == ["Embed1.freshair/bar.md", "Embed1.freshair/manifest.json", "manifest.json"])
            #expect(second.unchanged == (try fileCount(bundle)) - 3)
            // Published within the same second, the root keeps its size: only a later mtime
            // gives nginx a new ETag, and devices a 200 instead of a 304.
            let modified = try FileManager.default.attributesOfItem(atPath: rootURL.path)[.modificationDate] as! Date
            #expect(modified > rootModified)
            let update = try await client.sync.run()
            #expect(update.outcome == .updated)
            #expect(client.live.appendingPathComponent("Embed1.freshair/bar.md").text == "# Bar, republished\n")
            #expect(try await Publisher.run(source: bundle, to: destination).uploaded.isEmpty)

            // As a user runs it.
            let cli = try await BreezeBinary.run(["publish", bundle.path, destination.root.path])
            let count = try fileCount(bundle)
            #expect(cli.status == 0 && cli.output.contains("0 uploaded (0 B), \(count) unchanged, 0 removed."))
        }
    }

    @Test("Stale digests, a stale signature or a signing key in the folder stop a publish before anything is written")
    func refusals() async throws {
        let (folder, bundle) = try await authoredBundle()
        let destination = FolderDestination(root: folder.path("www"))
        try Data("# edited after hashing\n".utf8).write(to: bundle.appendingPathComponent("Embed1.freshair/bar.md"))
        await #expect { try await Publisher.run(source: bundle, to: destination) } throws: {
            "\($0)".contains("run `breeze hash`")
        }
        _ = try await BundleHasher.run(bundle: bundle)

        let key = SigningKey.generate()
        _ = try await ManifestSigner.sign(bundle: bundle, with: key)
        let rootURL = bundle.appendingPathComponent("manifest.json")
        let signed = try String(contentsOf: rootURL, encoding: .utf8)
        try signed.replacingOccurrences(of: "\"sequence\": 1", with: "\"sequence\": 5").write(
            to: rootURL,
            atomically: true,
            encoding: .utf8
        )
        await #expect { try await Publisher.run(source: bundle, to: destination) } throws: {
            "\($0)".contains("run `breeze sign` again")
        }
        try signed.write(to: rootURL, atomically: true, encoding: .utf8)

        try key.write(to: bundle.appendingPathComponent("release.key"))
        await #expect { try await Publisher.run(source: bundle, to: destination) } throws: {
            "\($0)".contains("signing key")
        }
        #expect(!FileManager.default.fileExists(atPath: destination.root.path))
        try FileManager.default.removeItem(at: bundle.appendingPathComponent("release.key"))
        #expect(try await Publisher.run(source: bundle, to: destination).uploaded.last == "manifest.json")
    }

    @Test("A failed upload stops the publish before any manifest moves; a killed one leaves nothing behind")
    func failureKeepsTheOldManifests() async throws {
        let (folder, bundle) = try await authoredBundle()
        let destination = FolderDestination(root: folder.path("www"))
        _ = try await Publisher.run(source: bundle, to: destination)
        let rootBefore = try Data(contentsOf: destination.root.appendingPathComponent("manifest.json"))

        // bar.md changes, but its place at the destination is taken by a folder: it cannot be written.
        try Data("# Bar, unpublishable\n".utf8).write(to: bundle.appendingPathComponent("Embed1.freshair/bar.md"))
        _ = try await BundleHasher.run(bundle: bundle)
        let blocked = destination.root.appendingPathComponent("Embed1.freshair/bar.md")
        try FileManager.default.removeItem(at: blocked)
        try FileManager.default.createDirectory(
            at: blocked.appendingPathComponent("in-the-way"),
            withIntermediateDirectories: true
        )
        await #expect { try await Publisher.run(source: bundle, to: destination) } throws: {
            "\($0)".contains("Embed1.freshair/bar.md")
        }
        #expect(try Data(contentsOf: destination.root.appendingPathComponent("manifest.json")) == rootBefore)

        // What a killed publish leaves (a half-copied file beside its place) is cleared by the next one.
        try FileManager.default.removeItem(at: blocked)
        let leftover = destination.root.appendingPathComponent(
            "Embed1.freshair/.bar.md\(FolderDestination.temporaryMarker)123"
        )
        try Data("half".utf8).write(to: leftover)
        let report = try await Publisher.run(source: bundle, to: destination)
        #expect(report.uploaded.last == "manifest.json")
        #expect(!FileManager.default.fileExists(atPath: leftover.path))
    }

    @Test("--delete removes what the source no longer has, after the root, and prunes empty folders")
    func deleteAfterTheRoot() async throws {
        let (folder, bundle) = try await authoredBundle()
        let destination = FolderDestination(root: folder.path("www"))
        try FileManager.default.createDirectory(
            at: bundle.appendingPathComponent("old"),
            withIntermediateDirectories: true
        )
        try Data("gone soon".utf8).write(to: bundle.appendingPathComponent("old/notes.txt"))
        _ = try await Publisher.run(source: bundle, to: destination)
        try FileManager.default.removeItem(at: bundle.appendingPathComponent("old"))

        let kept = try await Publisher.run(source: bundle, to: destination)
        #expect(
            kept.deleted.isEmpty
                && FileManager.default.fileExists(atPath: destination.root.appendingPathComponent("old/notes.txt").path)
        )
        let preview = try await Publisher.run(source: bundle, to: destination, delete: true, dryRun: true)
        #expect(
            preview.deleted == ["old/notes.txt"]
                && FileManager.default.fileExists(atPath: destination.root.appendingPathComponent("old/notes.txt").path)
        )
        let pruned = try await Publisher.run(source: bundle, to: destination, delete: true)
        #expect(pruned.deleted == ["old/notes.txt"])
        #expect(!FileManager.default.fileExists(atPath: destination.root.appendingPathComponent("old").path))
    }

    @Test(
        "A gateway that takes a PUT and never answers: each try ends at the timeout, is reported, and the publish fails"
    )
    func s3GatewayThatNeverAnswers() async throws {
        try await MotoS3.with { s3 in
            let (author, bundle) = try await authoredBundle()
            defer { withExtendedLifetime(author) {} }
            let proxy = try FaultProxy(upstream: URL(string: s3.endpoint)!)
            defer { proxy.stop() }
            try proxy.rules([["path": "*", "method": "PUT", "fault": "hang", "seconds": 120]])
            let notes = Mutex<[String]>([])
            var options = S3Options()
            options.idleTimeout = .seconds(1)
            options.attempts = 2
            options.retryDelay = .milliseconds(10)
            options.onRetry = { note in notes.withLock { $0.append(note) } }
            let started = ContinuousClock.now
            await #expect {
                try await PublishDestinations.with(
                    "s3://\(s3.bucket)/apps",
                    endpoint: proxy.url.absoluteString,
                    options: options,
                    environment: s3.credentials
                ) { destination in
                    try await Publisher.run(source: bundle, to: destination, concurrency: 1)
                }
            } throws: { error in
                guard let error = error as? PublishError, error.kind == .network else { return false }
                return "\(error)".contains("no answer within 1 s (2 attempts)")
            }
            // Two tries of a second each, not the 120 s the gateway would keep the request.
            #expect(ContinuousClock.now - started < .seconds(60))
            let said = notes.withLock { $0 }
            #expect(said.first?.contains("no answer within 1 s; trying again (2 of 2)") == true, "\(said)")
            #expect(proxy.answers().contains { $0.fault == "hang" && $0.method == "PUT" })
        }
    }

    @Test(
        "An endpoint that never answers: said within the note's time, given up within a minute by default; a web server is named as not S3"
    )
    func hungOrWrongEndpoint() async throws {
        // The defaults: 4 tries of 14 s and their back-off stay under a minute; the note comes first.
        let defaults = S3Options()
        let backOff = (2...defaults.attempts).reduce(Duration.zero) { total, attempt in
            total + defaults.retryDelay * (1 << (attempt - 2))
        }
        #expect(defaults.idleTimeout * defaults.attempts + backOff < .seconds(60))
        #expect(defaults.noteWaitingAfter <= .seconds(10) && defaults.noteWaitingAfter < defaults.idleTimeout)

        let hung = try LoopbackSocket(listening: true)
        defer { hung.close() }
        let (author, bundle) = try await authoredBundle()
        defer { withExtendedLifetime(author) {} }
        let notes = Mutex<[String]>([])
        var options = S3Options()
        options.idleTimeout = .seconds(2)
        options.noteWaitingAfter = .seconds(1)
        options.attempts = 2
        options.onRetry = { note in notes.withLock { $0.append(note) } }
        let credentials = ["AWS_ACCESS_KEY_ID": "a", "AWS_SECRET_ACCESS_KEY": "b", "HOME": author.url.path]
        await #expect(throws: PublishError.self) {
            try await PublishDestinations.with(
                "s3://bucket/apps",
                endpoint: hung.url("").absoluteString,
                options: options,
                environment: credentials
            ) { destination in try await Publisher.run(source: bundle, to: destination, concurrency: 1) }
        }
        let said = notes.withLock { $0 }
        // Said while waiting; on a loaded machine the first retry's note may come first.
        #expect(said.contains { $0.contains("no answer after 1 s; each try waits up to 2 s, 2 tries") }, "\(said)")

        // nginx, not S3: its 404 page names no S3 error.
        try await PublishedFolder.with(.nginx) { server in
            await #expect {
                try await PublishDestinations.with(
                    "s3://bucket/apps",
                    endpoint: server.url.absoluteString,
                    options: S3Options(),
                    environment: credentials
                ) { destination in try await Publisher.run(source: bundle, to: destination, concurrency: 1) }
            } throws: { error in
                let text = "\(error)"
                return text.contains("failed with HTTP 404;")
                    && text.contains("is an S3-compatible API, not a web server")
            }
        }
    }

    @Test("A package given as a link goes up under the link's name, as the bytes it points to")
    func packageThroughALink() async throws {
        let work = try TemporaryFolder("package-link")
        try FileManager.default.createDirectory(at: work.path("content"), withIntermediateDirectories: true)
        try Data("hello".utf8).write(to: work.path("content/message.txt"))
        let package = work.path("content-1.2.tgz")
        #expect(try await BreezeBinary.run(["package", work.path("content").path, "-o", package.path]).status == 0)
        // Relative, as `ln -s content-1.2.tgz latest.tgz` makes it: copied as a link, it would
        // point nowhere in the site.
        try FileManager.default.createSymbolicLink(
            atPath: work.path("latest.tgz").path,
            withDestinationPath: "content-1.2.tgz"
        )
        let run = try await BreezeBinary.run(["publish", work.path("latest.tgz").path, work.path("site").path])
        #expect(run.status == 0, "\(run.error)")
        let published = work.path("site/latest.tgz").path
        #expect(
            try FileManager.default.attributesOfItem(atPath: published)[.type] as? FileAttributeType == .typeRegular
        )
        #expect(FileManager.default.contents(atPath: published) == FileManager.default.contents(atPath: package.path))
    }

    @Test(
        "A package's destination may name the package, as a bundle's names its folder; one naming another archive is refused"
    )
    func destinationNamingThePackage() async throws {
        let work = try TemporaryFolder("package-destination")
        try FileManager.default.createDirectory(at: work.path("content"), withIntermediateDirectories: true)
        try Data("hello".utf8).write(to: work.path("content/message.txt"))
        let package = work.path("content.tgz").path
        let key = work.path("k.key").path
        for arguments in [["package", work.path("content").path, "-o", package], ["keygen", key]] {
            #expect(try await BreezeBinary.run(arguments).status == 0, "\(arguments)")
        }
        // It went to site/content.tgz/content.tgz, a URL nobody expected.
        let released = try await BreezeBinary.run([
            "release", package, work.path("site/content.tgz").path, "--key", key,
        ])
        #expect(released.status == 0, "\(released.error)")
        let published = work.path("site/content.tgz").path
        #expect(
            try FileManager.default.attributesOfItem(atPath: published)[.type] as? FileAttributeType == .typeRegular
        )
        #expect(FileManager.default.contents(atPath: published) == FileManager.default.contents(atPath: package))
        #expect(FileManager.default.fileExists(atPath: published + ".sig"))
        let again = try await BreezeBinary.run(["publish", package, work.path("site/content.tgz").path + "/"])
        #expect(again.status == 0 && again.output.contains("0 uploaded"), "\(again.output) \(again.error)")
        // Another archive's name: the package keeps its own, with its signed document beside it.
        let renamed = try await BreezeBinary.run(["publish", package, work.path("other/latest.tgz").path])
        #expect(renamed.status == 78)
        #expect(renamed.error.contains("ln -s content.tgz latest.tgz"), "\(renamed.error)")
        #expect(!FileManager.default.fileExists(atPath: work.path("other").path))
    }

    @Test("A destination inside the folder being published is refused: each release would publish the one before it")
    func destinationInsideTheSource() async throws {
        let work = try TemporaryFolder("inside-source")
        let bundle = work.path("In.freshair")
        #expect(try await BreezeBinary.run(["init", bundle.path]).status == 0)
        let before = try FileManager.default.contentsOfDirectory(atPath: bundle.path).sorted()
        for command in ["release", "publish"] {
            let run = try await BreezeBinary.run([
                command, bundle.path, bundle.appendingPathComponent("site/In.freshair").path,
            ])
            #expect(run.status == 78, "\(command): \(run.status) \(run.error)")
            #expect(run.error.contains("is inside \(bundle.path), the folder being published"), "\(run.error)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: bundle.path).sorted() == before)
        }
        // Beside it is fine.
        #expect(try await BreezeBinary.run(["release", bundle.path, work.path("site/In.freshair").path]).status == 0)
    }

    @Test("A destination that is a file (a package published there) is refused before the source is touched")
    func destinationThatIsAFile() async throws {
        let work = try TemporaryFolder("destination-file")
        try FileManager.default.createDirectory(at: work.path("folder/en.lproj"), withIntermediateDirectories: true)
        try Data("\"a\" = \"b\";\n".utf8).write(to: work.path("folder/en.lproj/Feature.strings"))
        try FileManager.default.createDirectory(at: work.path("site"), withIntermediateDirectories: true)
        try Data("a package".utf8).write(to: work.path("site/content.tgz"))
        for (command, destination) in [("release", "site/content.tgz"), ("publish", "site/content.tgz/sub")] {
            let run = try await BreezeBinary.run([command, work.path("folder").path, work.path(destination).path])
            #expect(run.status == 78, "\(command): \(run.status) \(run.error)")
            #expect(
                run.error.contains("\(work.path("site/content.tgz").path) is a file, not a folder")
                    && run.error.contains("such as \(work.path("site/folder").path)"),
                "\(run.error)"
            )
            #expect(
                !FileManager.default.fileExists(atPath: work.path("folder/manifest.json").path),
                "nothing generated"
            )
        }
    }

    @Test("A bundle published signed is never replaced by an unsigned one (breeze generate drops signatures)")
    func droppedSignaturesRefused() async throws {
        let work = try TemporaryFolder("dropped-signatures")
        let bundle = work.path("B.freshair").path
        let site = work.path("site/B.freshair").path
        let key = work.path("k.key").path
        for arguments in [
            ["init", bundle], ["keygen", key], ["sign", bundle, "--key", key], ["publish", bundle, site],
        ] {
            let run = try await BreezeBinary.run(arguments)
            #expect(run.status == 0, "\(arguments): \(run.error)")
        }
        let signed = try Data(contentsOf: work.path("site/B.freshair/manifest.json"))
        try Data("new\n".utf8).write(to: work.path("B.freshair/new.txt"))
        #expect(try await BreezeBinary.run(["generate", bundle]).status == 0)
        let refused = try await BreezeBinary.run(["publish", bundle, site])
        #expect(refused.status == 65, "\(refused.status)")
        #expect(
            refused.error.contains("is unsigned, but the published manifest.json is signed")
                && refused.error.contains("breeze sign")
        )
        #expect(try Data(contentsOf: work.path("site/B.freshair/manifest.json")) == signed, "the signed release stays")
        #expect(!FileManager.default.fileExists(atPath: work.path("site/B.freshair/new.txt").path))
        // Signed again, it goes up.
        #expect(try await BreezeBinary.run(["sign", bundle, "--key", key]).status == 0)
        #expect(try await BreezeBinary.run(["publish", bundle, site]).status == 0)
    }

    @Test("S3 (moto's server, checking every signature): uploads, compares by ETag, deletes, and names a bad key")
    func s3() async throws {
        try await MotoS3.with { s3 in
            let (author, bundle) = try await authoredBundle()
            defer { withExtendedLifetime(author) {} }
            // One folder level: moto's server mis-verifies a signed query value containing `/`
            // (boto3's own listings fail there too), and listing sends the prefix as a query value.
            let target = "s3://\(s3.bucket)/apps"
            try await PublishDestinations.with(target, endpoint: s3.endpoint, environment: s3.credentials) {
                destination in

                let first = try await Publisher.run(source: bundle, to: destination)
                #expect(first.uploaded.count == (try fileCount(bundle)) && first.uploaded.last == "manifest.json")
                // What S3 now holds: every file, under the prefix, with the MD5 of our bytes as its ETag.
                let listed = try await destination.list()
                #expect(Set(listed.keys) == Set(try BundleFolder.files(in: bundle).map(\.path)))
                let local = try LocalFile(
                    path: "manifest.json",
                    url: bundle.appendingPathComponent("manifest.json"),
                    size: Int64(Data(contentsOf: bundle.appendingPathComponent("manifest.json")).count)
                )
                #expect(listed["manifest.json"]?.etag == (try local.digests().md5))

                #expect(try await Publisher.run(source: bundle, to: destination).uploaded.isEmpty)
                try Data("# Bar on S3\n".utf8).write(to: bundle.appendingPathComponent("Embed1.freshair/bar.md"))
                try Data("extra".utf8).write(to: bundle.appendingPathComponent("extra.txt"))
                _ = try await BundleHasher.run(bundle: bundle)
                let second = try await Publisher.run(source: bundle, to: destination)
                #expect(second.uploaded.suffix(2) == ["Embed1.freshair/manifest.json", "manifest.json"])
                #expect(Set(second.uploaded.dropLast(2)) == ["Embed1.freshair/bar.md", "extra.txt"])

                try FileManager.default.removeItem(at: bundle.appendingPathComponent("extra.txt"))
                let third = try await Publisher.run(source: bundle, to: destination, delete: true)
                #expect(third.uploaded.isEmpty && third.deleted == ["extra.txt"])
                #expect(try await destination.list()["extra.txt"] == nil)

                // The same through the command line, credentials from the environment as the AWS tools take them.
                try Data("# Bar from the command line\n".utf8).write(
                    to: bundle.appendingPathComponent("Embed1.freshair/bar.md")
                )
                #expect(try await BreezeBinary.run(["hash", bundle.path]).status == 0)
                let cli = try await BreezeBinary.run(
                    ["publish", bundle.path, target, "--endpoint", s3.endpoint, "--json"],
                    environment: s3.credentials
                )
                #expect(cli.status == 0, "\(cli.error)")
                let uploaded = try JSONSerialization.jsonObject(with: Data(cli.output.utf8)) as? [String: Any]
                #expect(
                    uploaded?["uploaded"] as? [String] == [
                        "Embed1.freshair/bar.md", "Embed1.freshair/manifest.json", "manifest.json",
                    ]
                )

            }

            var wrong = s3.credentials
            wrong["AWS_SECRET_ACCESS_KEY"] = "not-the-secret"
            await #expect {
                try await PublishDestinations.with(target, endpoint: s3.endpoint, environment: wrong) { refused in
                    try await Publisher.run(source: bundle, to: refused)
                }
            } throws: { error in
                guard let error = error as? PublishError else { return false }
                return error.kind == .configuration && "\(error)".contains("SignatureDoesNotMatch")
                    && "\(error)".contains("AWS_SECRET_ACCESS_KEY")
            }
            let missing = try await BreezeBinary.run(
                ["publish", bundle.path, target],
                environment: ["AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": ""]
            )
            #expect(missing.status == 78 && missing.error.contains("set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"))
        }
    }

    @Test("Signature Version 4 matches Amazon's worked example (GET /test.txt, 2013-05-24)")
    func signatureVersion4() throws {
        let signer = S3RequestSigner(
            credentials: S3Credentials(
                accessKeyID: "AKIAIOSFODNN7EXAMPLE",
                secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
            ),
            region: "us-east-1"
        )
        let headers = signer.sign(
            method: "GET",
            path: "/test.txt",
            query: [],
            headers: [("Host", "examplebucket.s3.amazonaws.com"), ("Range", "bytes=0-9")],
            payloadHash: S3RequestSigner.emptyPayloadHash,
            date: Date(timeIntervalSince1970: 1_369_353_600)
        )
        #expect(
            headers.first { $0.0 == "authorization" }?.1
                == "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,"
                + "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"
        )
        #expect(
            S3RequestSigner.canonicalQuery([("prefix", "a b/c"), ("list-type", "2")]) == "list-type=2&prefix=a%20b%2Fc"
        )
        #expect(S3XML.values(of: "Key", in: "<Contents><Key>a &amp; b&#x2F;c</Key></Contents>") == ["a & b/c"])
    }
}
