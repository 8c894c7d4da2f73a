import BreezeKit
import Foundation
import FreshAir
import Synchronization
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
import TestSupport
#endif

/// `breeze publish` against a real distributed store: Ceph's S3 gateway (radosgw), which
/// enforces Signature Version 4 and refuses what a mock would accept. Devices read what was
/// published over plain HTTP, as they would through a CDN.
@Suite("Ceph: publish to a real S3 gateway, devices sync from it", .serialized)
struct CephTests {
    /// Makes `bucket` and returns `s3://bucket/prefix` for `breeze publish`.
    func bucket(_ name: String, on ceph: CephGateway, prefix: String = "app") async throws -> String {
        try await PublishDestinations.with("s3://\(name)", endpoint: ceph.endpoint, environment: ceph.credentials) {
            try await ($0 as! S3Destination).createBucket()
        }
        return "s3://\(name)/\(prefix)"
    }

    func publish(
        _ source: URL,
        to target: String,
        on ceph: CephGateway,
        _ extra: [String] = []
    ) async throws
        -> (status: Int32, report: [String: Any], error: String)
    {
        let run = try await BreezeBinary.run(
            // The path layout: these tests read each file by its name in the bucket.
            ["publish", source.path, target, "--endpoint", ceph.endpoint, "--acl", "public-read", "--json"]
                + (extra.contains("--layout") ? [] : ["--layout", "paths"]) + extra,
            environment: ceph.credentials
        )
        let report = (try? JSONSerialization.jsonObject(with: Data(run.output.utf8))) as? [String: Any] ?? [:]
        return (run.status, report, run.error)
    }

    /// An anonymous request's status and headers, as a device or CDN sees the object.
    func head(_ url: URL) async throws -> (status: Int, headers: [String: String]) {
        var request = URLRequest(url: url)
        request.httpMethod = "HEAD"
        let (_, response) = try await URLSession.shared.data(for: request)
        let http = response as! HTTPURLResponse
        var headers: [String: String] = [:]
        for (name, value) in http.allHeaderFields { headers["\(name)".lowercased()] = "\(value)" }
        return (http.statusCode, headers)
    }

    func device(_ url: URL, in local: TemporaryFolder) -> BundleSync { testDevice(url, in: local) }

    @Test(
        "A bundle: published, synced over plain HTTP, one 304 after; incremental; --delete; cache headers; a wrong secret"
    )
    func bundle() async throws {
        let ceph = try await CephGateway.shared()
        let target = try await bucket("bundles", on: ceph)
        let author = try TemporaryFolder("ceph-author")
        let bundle = try ExampleBundle.write(in: author.url)
        _ = try await BundleHasher.run(bundle: bundle)

        let first = try await publish(bundle, to: target, on: ceph)
        #expect(first.status == 0, "\(first.error)")
        #expect((first.report["uploaded"] as? [String])?.last == "manifest.json")

        let local = try TemporaryFolder("ceph-device")
        let sync = device(ceph.url("bundles", "app/"), in: local)
        let cold = try await sync.run()
        #expect(cold.outcome == .updated && cold.filesDownloaded > 0, "\(cold.oneLine)")
        #expect(
            try Data(contentsOf: local.path("live/manifest.json"))
                == Data(contentsOf: bundle.appendingPathComponent("manifest.json"))
        )
        let again = try await sync.run()
        #expect(again.notModified && again.requests == 1, "\(again.oneLine)")

        // What a CDN in front of the gateway is told.
        let manifest = try await head(ceph.url("bundles", "app/manifest.json"))
        #expect(manifest.status == 200)
        #expect(manifest.headers["cache-control"] == CachePolicy.defaultDocuments)
        #expect(manifest.headers["content-type"] == "application/json")
        let content = try await head(ceph.url("bundles", "app/Embed1.freshair/bar.md"))
        #expect(content.headers["cache-control"] == CachePolicy.defaultContent)
        #expect(content.headers["content-type"] == "text/markdown; charset=utf-8")

        // One file changed: it and the manifests that name it go up, nothing else.
        try Data("# Bar on Ceph\n".utf8).write(to: bundle.appendingPathComponent("Embed1.freshair/bar.md"))
        try Data("extra".utf8).write(to: bundle.appendingPathComponent("extra.txt"))
        _ = try await BundleHasher.run(bundle: bundle)
        let second = try await publish(bundle, to: target, on: ceph)
        let uploaded = second.report["uploaded"] as? [String] ?? []
        #expect(Set(uploaded.prefix(2)) == ["Embed1.freshair/bar.md", "extra.txt"], "\(uploaded)")
        #expect(uploaded.suffix(2) == ["Embed1.freshair/manifest.json", "manifest.json"], "\(uploaded)")
        let update = try await sync.run()
        #expect(update.outcome == .updated && update.downloaded.contains("Embed1.freshair/bar.md"), "\(update.oneLine)")
        #expect(local.path("live/Embed1.freshair/bar.md").text == "# Bar on Ceph\n")

        try FileManager.default.removeItem(at: bundle.appendingPathComponent("extra.txt"))
        let pruned = try await publish(bundle, to: target, on: ceph, ["--delete"])
        #expect(pruned.status == 0 && pruned.report["deleted"] as? [String] == ["extra.txt"], "\(pruned.report)")
        // Gone: a missing key reads as 403 to an anonymous reader that may not list the bucket.
        #expect([403, 404].contains(try await head(ceph.url("bundles", "app/extra.txt")).status))

        var wrong = ceph.credentials
        wrong["AWS_SECRET_ACCESS_KEY"] = "not-the-secret"
        let refused = try await BreezeBinary.run(
            ["publish", bundle.path, target, "--endpoint", ceph.endpoint],
            environment: wrong
        )
        #expect(refused.status == 78, "\(refused.error)")
        #expect(
            refused.error.contains("403 SignatureDoesNotMatch") && refused.error.contains("AWS_SECRET_ACCESS_KEY"),
            "\(refused.error)"
        )
        // The same wrong secret from a profile: the error names where the credentials came from.
        let home = try TemporaryFolder("ceph-profile")
        try PublishedText.write(
            "[default]\naws_access_key_id = \(ceph.credentials["AWS_ACCESS_KEY_ID"] ?? "")\naws_secret_access_key = not-it\n",
            to: home.path(".aws/credentials")
        )
        var fromProfile = ceph.credentials
        (fromProfile["AWS_ACCESS_KEY_ID"], fromProfile["AWS_SECRET_ACCESS_KEY"], fromProfile["HOME"]) = (
            nil, nil, home.url.path
        )
        let profileRefused = try await BreezeBinary.run(
            ["publish", bundle.path, target, "--endpoint", ceph.endpoint],
            environment: fromProfile.compactMapValues { $0 }
        )
        #expect(
            profileRefused.status == 78
                && profileRefused.error.contains("from the profile default in ~/.aws/credentials"),
            "\(profileRefused.error)"
        )
    }

    @Test("A staged release on the gateway reaches the beta channel only; breeze revert stops it with one new root")
    func stagedReleaseOnS3() async throws {
        let ceph = try await CephGateway.shared()
        let target = try await bucket("staged", on: ceph, prefix: "Content.freshair")
        let author = try TemporaryFolder("ceph-staged")
        let bundle = author.path("Content.freshair")
        let keyPath = author.path("release.key").path
        #expect(try await BreezeBinary.run(["init", bundle.path]).status == 0)
        #expect(try await BreezeBinary.run(["keygen", keyPath]).status == 0)
        let key = try SigningKey(contentsOf: author.path("release.key"))
        let s3 = ["--endpoint", ceph.endpoint, "--acl", "public-read", "--key", keyPath]
        func breeze(_ arguments: [String]) async throws -> BreezeBinary.Run {
            try await BreezeBinary.run(arguments + s3, environment: ceph.credentials)
        }

        let local = try TemporaryFolder("ceph-staged-devices")
        let devices = ["beta", "stable"].map { channel in
            var configuration = SyncConfiguration()
            configuration.trustedKeys = [key.publicKey]
            configuration.retry = RetryPolicy(maxAttempts: 1)
            var environment = ConditionEnvironment()
            environment["language"] = "en"
            environment["channel"] = .string(channel)
            return BundleSync(
                remote: ceph.url("staged", "Content.freshair/"),
                store: BundleStore(root: local.path("\(channel)/store"), liveLink: local.path("\(channel)/live")),
                environment: environment,
                configuration: configuration
            )
        }
        func titles() async throws -> [String?] {
            var titles: [String?] = []
            for device in devices {
                try await device.run()
                titles.append(
                    ContentBundle(root: device.store.liveLink, environment: device.environment)
                        .localizedString(forKey: "welcome.title", table: "Feature")
                )
            }
            return titles
        }

        let first = try await breeze(["release", bundle.path, target, "--layout", "objects"])
        #expect(first.status == 0, "\(first.error)")
        #expect(try await titles() == ["Welcome", "Welcome"])

        let strings = bundle.appendingPathComponent("en.lproj/Feature.strings")
        let text = try String(contentsOf: strings, encoding: .utf8)
        try Data(text.replacingOccurrences(of: "\"Welcome\"", with: "\"Beta\"").utf8).write(to: strings)
        let staged = try await breeze(["release", bundle.path, target, "--channel", "beta"])
        #expect(staged.status == 0, "\(staged.error)")
        #expect(try await titles() == ["Beta", "Welcome"])

        let stopped = try await breeze(["revert", target, "--json"])
        #expect(stopped.status == 0, "\(stopped.error)")
        let report = (try? JSONSerialization.jsonObject(with: Data(stopped.output.utf8))) as? [String: Any] ?? [:]
        #expect(report["stoppedStagedRelease"] as? Bool == true, "\(stopped.output)")
        #expect((report["bytesUploaded"] as? Int ?? .max) < 8_000, "manifest.json only: \(stopped.output)")
        #expect(try await titles() == ["Welcome", "Welcome"])
    }

    @Test("A package and a repository: published to the gateway and installed from it")
    func packageAndRepository() async throws {
        let ceph = try await CephGateway.shared()
        let target = try await bucket("packages", on: ceph, prefix: "")
        let author = try TemporaryFolder("ceph-package")
        _ = try await shell(
            """
            mkdir -p src/data repo-src/cats && head -c 300000 /dev/urandom > src/data/blob.bin \\
            && echo hello > src/data/message.txt && tar -czf content.tgz -C src . \\
            && cp src/data/blob.bin repo-src/cats/blob.bin
            """,
            in: author.url
        )
        let package = try await publish(author.path("content.tgz"), to: target, on: ceph)
        #expect(package.status == 0, "\(package.error)")
        try RepositoryPublisher.add(
            folder: author.path("repo-src/cats"),
            as: "cats",
            to: author.path("com.example.r")
        )
        let repository = try await publish(author.path("com.example.r"), to: target + "com.example.r", on: ceph)
        #expect(repository.status == 0, "\(repository.error)")

        let local = try TemporaryFolder("ceph-package-device")
        var configuration = SyncConfiguration()
        configuration.retry = RetryPolicy(maxAttempts: 2, baseDelay: .milliseconds(10))
        let updater = PackageUpdater(
            remote: ceph.url("packages", "content.tgz"),
            store: BundleStore(root: local.path("package"), liveLink: local.path("package-live")),
            configuration: configuration
        )
        #expect(try await updater.update().outcome == .downloaded)
        #expect(local.path("package-live/data/message.txt").text == "hello\n")
        #expect(try await updater.update().outcome == .notModified)

        let repo = Repository(
            source: ceph.url("packages"),
            id: "com.example.r",
            directory: local.path("repository"),
            configuration: configuration
        )
        let installed = try await repo.update()
        #expect(installed.updated.keys.contains("cats"), "\(installed)")
        #expect(
            try Data(contentsOf: local.path("repository/cats/blob.bin"))
                == Data(contentsOf: author.path("src/data/blob.bin"))
        )
    }

    @Test(
        "200 MB: a multipart upload, killed part-way, resumed by the next publish; no orphaned parts; a device gets it whole"
    )
    func multipartResume() async throws {
        let ceph = try await CephGateway.shared()
        let target = try await bucket("large", on: ceph)
        let author = try TemporaryFolder("ceph-large")
        _ = try await shell(
            "mkdir -p Big.freshair && openssl rand -out Big.freshair/big.bin 209715200 "
                + "&& echo '[{\"filename\": \"big.bin\"}]' > Big.freshair/manifest.json",
            in: author.url
        )
        let bundle = author.path("Big.freshair")
        _ = try await BundleHasher.run(bundle: bundle, check: false, sha256: true)
        let arguments = [
            "publish", bundle.path, target, "--endpoint", ceph.endpoint, "--acl", "public-read", "--json",
            "--part-size", "8", "--concurrency", "4", "--layout", "paths",
        ]

        // Killed once a few parts are stored.
        let killed = try BreezeBinary.start(arguments, environment: ceph.credentials)
        let stored = try await PublishDestinations.with(target, endpoint: ceph.endpoint, environment: ceph.credentials)
        {
            destination in
            let s3 = destination as! S3Destination
            let deadline = ContinuousClock.now + .seconds(120)
            var parts = 0
            while killed.isRunning, ContinuousClock.now < deadline {
                parts = try await s3.partsOfUnfinishedUploads()["big.bin"] ?? 0
                if parts >= 3 { break }
                try await Task.sleep(for: .milliseconds(50))
            }
            kill(killed.processIdentifier, SIGKILL)
            while killed.isRunning { try await Task.sleep(for: .milliseconds(20)) }
            return try await s3.partsOfUnfinishedUploads()["big.bin"] ?? 0
        }
        #expect(stored >= 3 && stored < 25, "parts stored when killed: \(stored)")

        let resumed = try await publish(bundle, to: target, on: ceph, ["--part-size", "8", "--concurrency", "4"])
        #expect(resumed.status == 0, "\(resumed.error)")
        let sent = resumed.report["bytesUploaded"] as? Int ?? 0
        #expect(sent <= 209_715_200 - stored * (8 << 20) + 4096, "the stored parts were not sent again: \(sent)")

        try await PublishDestinations.with(target, endpoint: ceph.endpoint, environment: ceph.credentials) {
            let s3 = $0 as! S3Destination
            #expect(try await s3.partsOfUnfinishedUploads().isEmpty, "no orphaned parts")
            let listed = try await s3.list()
            #expect(listed["big.bin"]?.etag?.hasSuffix("-25") == true, "\(String(describing: listed["big.bin"]))")
        }
        // Published again unchanged: the multipart object is recognised, nothing goes up.
        let unchanged = try await publish(bundle, to: target, on: ceph, ["--part-size", "8"])
        #expect((unchanged.report["uploaded"] as? [String])?.isEmpty == true, "\(unchanged.report)")

        let local = try TemporaryFolder("ceph-large-device")
        let summary = try await device(ceph.url("large", "app/"), in: local).run()
        #expect(summary.outcome == .updated, "\(summary.oneLine)")
        #expect(
            try ContentHash.ofFile(at: local.path("live/big.bin"), using: .sha256)
                == ContentHash.ofFile(at: bundle.appendingPathComponent("big.bin"), using: .sha256)
        )
    }

    @Test(
        "A fresh server's first hour: --create-bucket makes the bucket; objects put without --acl are given it by the publish that first asks, unchanged"
    )
    func freshBucketAndLateACL() async throws {
        let ceph = try await CephGateway.shared()
        let author = try TemporaryFolder("ceph-fresh")
        let bundle = try ExampleBundle.write(in: author.url)
        _ = try await BundleHasher.run(bundle: bundle)
        func publish(_ extra: [String]) async throws -> BreezeBinary.Run {
            try await BreezeBinary.run(
                ["publish", bundle.path, "s3://fresh/app", "--endpoint", ceph.endpoint] + extra,
                environment: ceph.credentials
            )
        }
        let noBucket = try await publish([])
        #expect(noBucket.status == 69 && noBucket.error.contains("--create-bucket"), "\(noBucket.error)")
        // Without --acl: private objects, which a device is refused.
        let created = try await publish(["--create-bucket"])
        #expect(created.status == 0, "\(created.error)")
        #expect(try await head(ceph.url("fresh", "app/manifest.json")).status == 403)
        // The hint's remedy, on a publish that uploads nothing: every object is given the ACL.
        let granted = try await publish(["--acl", "public-read", "--create-bucket"])
        #expect(granted.status == 0, "\(granted.error)")
        #expect(granted.output.contains("0 uploaded"), "\(granted.output)")
        #expect(granted.output.contains("had no public-read access, which devices need: given it"), "\(granted.output)")
        #expect(try await head(ceph.url("fresh", "app/manifest.json")).status == 200)
        let local = try TemporaryFolder("ceph-fresh-device")
        let synced = try await device(ceph.url("fresh", "app/"), in: local).run()
        #expect(synced.outcome == .updated, "\(synced.oneLine)")
        // Readable already: one anonymous request, nothing changed.
        let again = try await publish(["--acl", "public-read"])
        #expect(again.status == 0 && !again.output.contains("given it"), "\(again.output)")
    }

    @Test("Credentials, region and endpoint from an AWS profile in ~/.aws, as the AWS CLI reads them")
    func awsProfile() async throws {
        let ceph = try await CephGateway.shared()
        let target = try await bucket("profiled", on: ceph)
        let home = try TemporaryFolder("aws-home")
        try FileManager.default.createDirectory(at: home.path(".aws"), withIntermediateDirectories: true)
        try Data(
            """
            [default]
            aws_access_key_id = wrong
            aws_secret_access_key = wrong

            # The gateway's user, as `aws configure --profile ceph` writes it.
            [ceph]
            aws_access_key_id = otakey
            aws_secret_access_key = otasecret
            """.utf8
        ).write(to: home.path(".aws/credentials"))
        try Data("[profile ceph]\nregion = us-east-1\nendpoint_url = \(ceph.endpoint)\n".utf8)
            .write(to: home.path(".aws/config"))
        let bundle = try ExampleBundle.write(in: home.url)
        _ = try await BundleHasher.run(bundle: bundle)
        // Nothing from the environment: no keys, no endpoint; only HOME and the profile's name.
        let environment = [
            "HOME": home.url.path, "AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_PROFILE": "ceph",
        ]
        let published = try await BreezeBinary.run(
            ["publish", bundle.path, target, "--json"],
            environment: environment
        )
        #expect(published.status == 0, "\(published.error)")
        let report = try JSONSerialization.jsonObject(with: Data(published.output.utf8)) as? [String: Any]
        #expect((report?["uploaded"] as? [String])?.contains("manifest.json") == true, "\(published.output)")
        // --profile names another; the default profile's keys are refused by the gateway.
        let wrong = try await BreezeBinary.run(
            ["publish", bundle.path, target, "--profile", "default", "--endpoint", ceph.endpoint],
            environment: environment
        )
        #expect(wrong.status == 78 && wrong.error.contains("InvalidAccessKeyId"), "\(wrong.status) \(wrong.error)")
        // A profile that signs in through SSO is named as such, not as missing keys.
        try Data("[profile sso]\nsso_start_url = https://example.awsapps.com/start\n".utf8)
            .write(to: home.path(".aws/config"))
        let sso = try await BreezeBinary.run(
            ["publish", bundle.path, target, "--profile", "sso", "--endpoint", ceph.endpoint],
            environment: environment
        )
        #expect(sso.status == 78 && sso.error.contains("sso_start_url"), "\(sso.error)")
    }

    @Test(
        "503 SlowDown is retried with back-off; S3 that keeps failing, a part it refuses, and a gateway that is down end clearly"
    )
    func throttledAndFailing() async throws {
        let ceph = try await CephGateway.shared()
        let target = try await bucket("throttled", on: ceph)
        let proxy = try FaultProxy(upstream: URL(string: ceph.endpoint)!)
        defer { proxy.stop() }
        let author = try TemporaryFolder("ceph-throttled")
        _ = try await shell(
            "mkdir -p B.freshair && head -c 12582912 /dev/urandom > B.freshair/big.bin && echo hi > B.freshair/a.txt "
                + "&& echo '[{\"filename\": \"big.bin\"}, {\"filename\": \"a.txt\"}]' > B.freshair/manifest.json",
            in: author.url
        )
        let bundle = author.path("B.freshair")
        _ = try await BundleHasher.run(bundle: bundle, check: false, sha256: true)
        let slowDown =
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>"
        let throughProxy = [
            "publish", bundle.path, target, "--endpoint", "http://127.0.0.1:\(proxy.port)", "--json", "--layout",
            "paths",
        ]

        // Two throttled answers to a.txt's PUT, then the gateway's own.
        try proxy.rules([
            [
                "path": "/throttled/app/a.txt", "method": "PUT", "fault": "status", "status": 503, "retry_after": 0,
                "body": slowDown, "times": 2,
            ]
        ])
        let retried = try await BreezeBinary.run(throughProxy, environment: ceph.credentials)
        #expect(retried.status == 0, "\(retried.error)")
        let puts = proxy.answers().filter { $0.path == "/throttled/app/a.txt" && $0.method == "PUT" }
        #expect(puts.map(\.status) == [503, 503, 200], "\(puts.map(\.status))")
        #expect(proxy.answers().allSatisfy { $0.agent == "breeze/\(BreezeVersion.current)" })

        // Throttled for good: four attempts, then exit 69 with S3's words.
        try Data("changed\n".utf8).write(to: bundle.appendingPathComponent("a.txt"))
        _ = try await BundleHasher.run(bundle: bundle, check: false, sha256: true)
        try proxy.rules([
            [
                "path": "/throttled/app/a.txt", "method": "PUT", "fault": "status", "status": 503, "retry_after": 0,
                "body": slowDown,
            ]
        ])
        let throttled = try await BreezeBinary.run(throughProxy, environment: ceph.credentials)
        #expect(throttled.status == 69, "\(throttled.error)")
        #expect(throttled.error.contains("503 SlowDown: Please reduce your request rate."), "\(throttled.error)")

        // A part refused (not worth retrying): the multipart upload is aborted, no parts left.
        try SeededBytes(seed: 3).bytesOnce(12 << 20).write(to: bundle.appendingPathComponent("big.bin"))
        _ = try await BundleHasher.run(bundle: bundle, check: false, sha256: true)
        try proxy.rules([
            [
                "path": "/throttled/app/big.bin", "method": "PUT", "fault": "status", "status": 400,
                "body": "<Error><Code>InvalidPart</Code><Message></Message></Error>", "times": 1,
            ]
        ])
        let refused = try await BreezeBinary.run(throughProxy + ["--part-size", "5"], environment: ceph.credentials)
        #expect(refused.status == 69, "\(refused.error)")
        #expect(refused.error.contains("400 InvalidPart") && !refused.error.contains(": ;"), "\(refused.error)")
        let left = try await PublishDestinations.with(target, endpoint: ceph.endpoint, environment: ceph.credentials) {
            try await ($0 as! S3Destination).partsOfUnfinishedUploads()
        }
        #expect(left.isEmpty, "the refused upload was aborted: \(left)")

        // Nothing listening: a network failure within seconds, exit 75.
        let offline = try LoopbackSocket(listening: false)
        defer { offline.close() }
        let started = ContinuousClock.now
        let down = try await BreezeBinary.run(
            ["publish", bundle.path, target, "--endpoint", "http://127.0.0.1:\(offline.port)"],
            environment: ceph.credentials
        )
        #expect(down.status == 75 && down.error.contains("connection refused"), "\(down.error)")
        #expect(ContinuousClock.now - started < .seconds(15))
    }

    @Test(
        "The object layout on the gateway: objects cached for a year, shared by two bundles, synced, collected with --gc"
    )
    func objectLayout() async throws {
        let ceph = try await CephGateway.shared()
        let target = try await bucket("objects", on: ceph, prefix: "apps/app")
        let author = try TemporaryFolder("ceph-objects")
        let bundle = try ExampleBundle.write(in: author.url)
        _ = try await BundleHasher.run(bundle: bundle)
        let shared = ["--layout", "objects", "--objects", "../objects"]
        let first = try await publish(bundle, to: target, on: ceph, shared)
        #expect(
            first.status == 0 && (first.report["uploaded"] as? [String])?.count == 7,
            "\(first.report) \(first.error)"
        )
        let other = try await publish(bundle, to: "s3://objects/apps/other", on: ceph, shared)
        #expect(other.report["uploaded"] as? [String] == ["manifest.json"], "\(other.report)")

        let bar = try ContentHash.ofFile(at: bundle.appendingPathComponent("Embed1.freshair/bar.md"), using: .sha256)
            .hash.hex
        let object = try await head(ceph.url("objects", "apps/objects/\(bar)"))
        #expect(object.status == 200)
        #expect(object.headers["cache-control"] == CachePolicy.defaultImmutable)
        #expect(object.headers["content-type"] == "text/markdown; charset=utf-8")
        #expect(
            try await head(ceph.url("objects", "apps/app/manifest.json")).headers["cache-control"]
                == CachePolicy.defaultDocuments
        )
        #expect([403, 404].contains(try await head(ceph.url("objects", "apps/app/Embed1.freshair/bar.md")).status))

        let local = try TemporaryFolder("ceph-objects-device")
        let sync = device(ceph.url("objects", "apps/app/"), in: local)
        #expect(try await sync.run().outcome == .updated)
        #expect(local.path("live/Embed1.freshair/bar.md").text == ExampleBundle.contents["Embed1.freshair/bar.md"])

        // v2 and v3 of app; other stays at v1. Keeping one version per bundle, v2's own objects go.
        for text in ["# Bar v2\n", "# Bar v3\n"] {
            try Data(text.utf8).write(to: bundle.appendingPathComponent("Embed1.freshair/bar.md"))
            _ = try await BundleHasher.run(bundle: bundle)
            #expect(try await publish(bundle, to: target, on: ceph, shared).status == 0)
        }
        let collected = try await publish(
            bundle,
            to: target,
            on: ceph,
            shared + ["--gc", "--keep", "1", "--gc-grace-minutes", "0"]
        )
        // v2's bar.md, its Embed1 manifest and its root.
        #expect((collected.report["collected"] as? [String])?.count == 3, "\(collected.report) \(collected.error)")
        #expect(try await head(ceph.url("objects", "apps/objects/\(bar)")).status == 200, "v1 is other's newest")
        #expect(try await sync.run().outcome == .updated)
        #expect(local.path("live/Embed1.freshair/bar.md").text == "# Bar v3\n")
    }

    @Test(
        "Publishing while a device syncs in a loop: never a corrupt or mixed activation, and it ends on the last version; in the object layout no sync fails",
        arguments: ["paths", "objects"]
    )
    func publishWhileDevicesSync(layout: String) async throws {
        let ceph = try await CephGateway.shared()
        let target = try await bucket("live-\(layout)", on: ceph)
        let options = ["--layout", layout]
        let author = try TemporaryFolder("ceph-live")
        let bundle = author.path("Live.freshair")
        try FileManager.default.createDirectory(at: bundle, withIntermediateDirectories: true)
        let names = (1...12).map { "file\($0).txt" }
        /// Every file of version `n` says so, 64 KB of it, so a mixed activation shows.
        func write(version: Int) async throws {
            for name in names {
                let line = "\(name) version \(version)\n"
                try Data(String(repeating: line, count: 65_536 / line.utf8.count).utf8)
                    .write(to: bundle.appendingPathComponent(name))
            }
            try Data(("[" + names.map { #"{"filename": "\#($0)"}"# }.joined(separator: ", ") + "]").utf8)
                .write(to: bundle.appendingPathComponent("manifest.json"))
            _ = try await BundleHasher.run(bundle: bundle, check: false, sha256: true)
        }
        try await write(version: 1)
        #expect(try await publish(bundle, to: target, on: ceph, options).status == 0)

        let local = try TemporaryFolder("ceph-live-device")
        let store = BundleStore(root: local.path("store"), liveLink: local.path("live"))
        var configuration = SyncConfiguration()
        configuration.retry = RetryPolicy(maxAttempts: 1)
        let sync = BundleSync(
            remote: ceph.url("live-\(layout)", "app/"),
            store: store,
            environment: ConditionEnvironment(),
            configuration: configuration
        )
        /// The one version every live file belongs to, or `nil` for a mix.
        func liveVersion() -> Int? {
            let versions = Set(
                names.map { name in
                    (local.path("live/\(name)").text ?? "").split(separator: "\n").first
                        .flatMap { $0.split(separator: " ").last }.flatMap { Int($0) } ?? -1
                }
            )
            return versions.count == 1 ? versions.first : nil
        }
        let publishing = Mutex(true)
        let device = Task {
            var (succeeded, failed, corrupt) = (0, 0, [String]())
            while publishing.withLock({ $0 }) {
                do {
                    _ = try await sync.run()
                    succeeded += 1
                } catch {
                    failed += 1  // the path layout: a file newer or older than its manifest, refused
                }
                if let report = try store.verify(), !report.isIntact { corrupt.append("\(report)") }
                if store.liveVersionID != nil, liveVersion() == nil { corrupt.append("a mix of versions") }
            }
            return (succeeded, failed, corrupt)
        }
        for version in 2...6 {
            try await write(version: version)
            let published = try await publish(bundle, to: target, on: ceph, options)
            #expect(published.status == 0, "\(published.error)")
        }
        publishing.withLock { $0 = false }
        let (succeeded, failed, corrupt) = try await device.value
        #expect(corrupt.isEmpty, "\(corrupt)")
        #expect(succeeded > 0, "\(succeeded) syncs succeeded, \(failed) failed")
        if layout == "objects" { #expect(failed == 0, "every object a manifest names is there before the manifest") }
        print(
            "publishing while syncing (\(layout) layout): \(succeeded) syncs completed, \(failed) refused, \(corrupt.count) corrupt"
        )
        _ = try await sync.run()
        #expect(liveVersion() == 6)
    }
}
