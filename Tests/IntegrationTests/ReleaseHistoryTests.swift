import BreezeKit
import Foundation
import FreshAir
import Testing

/// Authors see what is live and step back through it: `breeze history`, `breeze status`,
/// `breeze revert` walking back, `release --renew`, and staged releases that never end one
/// another without a word. Against nginx's folder and Ceph's S3 gateway, with devices syncing.
@Suite("History, status, revert, renewal and rollouts: an author sees what is live and steps back through it")
struct ReleaseHistoryTests {
    typealias Support = ReleaseTransactionTests

    /// `breeze history --json` or `breeze status --json`, decoded.
    static func json(_ run: BreezeBinary.Run) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(run.output.utf8))
    }

    /// Sequences `breeze history DESTINATION` lists, newest first.
    static func sequences(
        _ destination: String,
        _ extra: [String] = [],
        environment: [String: String] = [:]
    )
        async throws -> [Int]
    {
        let run = try await BreezeBinary.run(["history", destination, "--json"] + extra, environment: environment)
        #expect(run.status == 0, "\(run.error)")
        return (try json(run) as? [[String: Any]] ?? []).compactMap { $0["sequence"] as? Int }
    }

    @Test("history lists every release; revert steps back one release at a time, and --to picks any")
    func revertStepsBack() async throws {
        try await PublishedFolder.with(.nginx) { server in
            let work = try TemporaryFolder("history")
            let (keyPath, key) = try await Support.key(in: work)
            let destination = server.root.appendingPathComponent("App").path
            let local = try TemporaryFolder("history-device")
            let device = testDevice(server.url.appendingPathComponent("App/"), in: local) {
                $0.trustedKeys = [key.publicKey]
            }
            for text in ["A", "B", "C"] {
                let source = try Support.bundle("\(text)/App", in: work.url, ["a.txt": text, "b.txt": "shared"])
                let run = try await BreezeBinary.run(["release", source.path, destination, "--key", keyPath])
                #expect(run.status == 0, "\(run.error)")
            }
            let listed =
                try Self.json(try await BreezeBinary.run(["history", destination, "--json"])) as? [[String: Any]]
            #expect(listed?.compactMap { $0["sequence"] as? Int } == [3, 2, 1])
            #expect(listed?.first?["live"] as? Bool == true && listed?.last?["live"] as? Bool == false)
            #expect(listed?.allSatisfy { ($0["signers"] as? [String]) == [key.publicKey.base64] } == true)
            #expect(listed?.allSatisfy { $0["files"] as? Int == 2 && $0["published"] is String } == true)
            _ = try await device.run()
            #expect(local.path("live/a.txt").text == "C")

            // Each revert goes one further back, never to the release it just undid.
            for (expected, sequence) in [("B", 4), ("A", 5)] {
                let run = try await BreezeBinary.run(["revert", destination, "--key", keyPath])
                #expect(run.status == 0 && run.output.contains("as sequence \(sequence)"), "\(run.output)\(run.error)")
                _ = try await device.run()
                #expect(local.path("live/a.txt").text == expected, "after the revert to \(expected)")
            }
            let end = try await BreezeBinary.run(["revert", destination, "--key", keyPath])
            #expect(end.status == 65 && end.error.contains("--to SEQUENCE"), "\(end.error)")
            let to = try await BreezeBinary.run(["revert", destination, "--to", "3", "--key", keyPath])
            #expect(to.status == 0, "\(to.error)")
            _ = try await device.run()
            #expect(local.path("live/a.txt").text == "C")
            let after =
                try Self.json(try await BreezeBinary.run(["history", destination, "--json"])) as? [[String: Any]]
            #expect(after?.compactMap { $0["sequence"] as? Int } == [6, 5, 4, 3, 2, 1])
            #expect(after?.compactMap { $0["restores"] as? Int } == [3, 1, 2])
            let table = try await BreezeBinary.run(["history", destination])
            #expect(
                table.output.contains("* 6") && table.output.contains("the content of sequence 3"),
                "\(table.output)"
            )
        }
    }

    @Test("A release for another channel refuses to end a running rollout without --replace-rollout; status names both")
    func rolloutsCompose() async throws {
        let work = try TemporaryFolder("rollouts")
        let (keyPath, _) = try await Support.key(in: work)
        let destination = work.path("site/App").path
        func release(_ text: String, _ extra: [String]) async throws -> BreezeBinary.Run {
            let source = try Support.bundle("\(text)/App", in: work.url, ["a.txt": text])
            return try await BreezeBinary.run(["release", source.path, destination, "--key", keyPath] + extra)
        }
        #expect(try await release("one", []).status == 0)
        #expect(try await release("two", ["--rollout", "10"]).status == 0)
        let refused = try await release("three", ["--channel", "beta"])
        #expect(refused.status == 78 && refused.error.contains("--replace-rollout"), "\(refused.error)")
        #expect(refused.error.contains("10% of installs"))
        // The same audience is the rollout edited in place: widened.
        let widened = try await release("two", ["--rollout", "50"])
        #expect(widened.status == 0, "\(widened.error)")
        let status = try Self.json(try await BreezeBinary.run(["status", destination, "--json"])) as? [String: Any]
        let audiences = status?["audiences"] as? [[String: Any]]
        #expect(audiences?.map { $0["who"] as? String } == ["50% of installs", "every other install"])
        #expect(audiences?.map { $0["sequence"] as? Int } == [3, 1], "\(String(describing: audiences))")
        let replaced = try await release("three", ["--channel", "beta", "--replace-rollout"])
        #expect(replaced.status == 0, "\(replaced.error)")
        let text = try await BreezeBinary.run(["status", destination])
        #expect(text.output.contains("Installs on the channel beta get sequence 4"), "\(text.output)")
        #expect(text.output.contains("Every other install gets sequence 1"), "\(text.output)")
    }

    /// Renewal in one destination: an expiring release warned about, renewed at the next
    /// sequence with the same files, and a device that had it syncs on without a refusal.
    static func renewal(
        into destination: String,
        extra: [String] = [],
        environment: [String: String] = [:],
        device url: URL,
        layout: String
    ) async throws {
        let work = try TemporaryFolder("renew")
        let (keyPath, key) = try await Support.key(in: work)
        let source = try Support.bundle("App", in: work.url, ["a.txt": "kept"])
        let first = try await BreezeBinary.run(
            ["release", source.path, destination, "--key", keyPath, "--expires", "3", "--layout", layout] + extra,
            environment: environment
        )
        #expect(first.status == 0, "\(first.error)")
        #expect(first.output.contains("release --renew"), "\(first.output)")
        let local = try TemporaryFolder("renew-device")
        let device = testDevice(url, in: local) { $0.trustedKeys = [key.publicKey] }
        _ = try await device.run()
        let warned = try await BreezeBinary.run(["status", destination] + extra, environment: environment)
        #expect(warned.status == 0 && warned.error.contains("expires in 2 days"), "\(warned.error)")

        let otherFolder = try TemporaryFolder("renew-other")
        let other = try await Support.key(in: otherFolder)
        let foreign = try await BreezeBinary.run(
            ["release", "--renew", destination, "--key", other.path] + extra,
            environment: environment
        )
        #expect(foreign.status == 69 && foreign.error.contains("not signed by the given key"), "\(foreign.error)")
        let renewed = try await BreezeBinary.run(
            ["release", "--renew", destination, "--key", keyPath, "--json"] + extra,
            environment: environment
        )
        #expect(renewed.status == 0, "\(renewed.error)")
        let report = try Self.json(renewed) as? [String: Any]
        #expect(report?["sequence"] as? Int == 2 && report?["renewed"] as? Bool == true)
        let status =
            try Self.json(
                try await BreezeBinary.run(["status", destination, "--json"] + extra, environment: environment)
            ) as? [String: Any]
        #expect((status?["daysUntilExpiry"] as? Int ?? 0) >= 29, "\(String(describing: status))")
        #expect((status?["warnings"] as? [String])?.contains { $0.contains("expires") } == false)
        _ = try await device.run()  // throws if the device refused the renewed release
        #expect(local.path("live/a.txt").text == "kept")
    }

    @Test("release --renew signs the live release again at the next sequence: a folder in both layouts")
    func renewalInAFolder() async throws {
        for layout in ["objects", "paths"] {
            try await PublishedFolder.with(.nginx) { server in
                try await Self.renewal(
                    into: server.root.appendingPathComponent("App").path,
                    device: server.url.appendingPathComponent("App/"),
                    layout: layout
                )
            }
        }
    }

    @Test("release --renew, status and history against Ceph's S3 gateway")
    func renewalInCeph() async throws {
        let (ceph, bucket) = try await Support.newBucket("renew")
        try await Self.renewal(
            into: "s3://\(bucket)/App",
            extra: ["--endpoint", ceph.endpoint, "--acl", "public-read"],
            environment: ceph.credentials,
            device: ceph.url(bucket, "App/"),
            layout: "objects"
        )
        let listed = try await Self.sequences(
            "s3://\(bucket)/App",
            ["--endpoint", ceph.endpoint],
            environment: ceph.credentials
        )
        #expect(listed == [2, 1])
    }

    @Test("status of a repository: its bundles counted from the index, an unsigned release named as such")
    func repositoryStatus() async throws {
        let work = try TemporaryFolder("repo-status")
        let level = try Support.bundle("forest", in: work.url, ["map.txt": "trees"])
        let repository = work.path("repo/com.example.levels").path
        #expect(try await BreezeBinary.run(["repo", "add", level.path, repository]).status == 0)
        let status = try await BreezeBinary.run(["status", repository])
        #expect(status.status == 0, "\(status.error)")
        #expect(status.output.contains("an unsigned release, 1 bundle ("), "\(status.output)")
        #expect(status.output.contains("Everyone gets this release."), "\(status.output)")
        let json = try Self.json(try await BreezeBinary.run(["status", repository, "--json"])) as? [String: Any]
        #expect((json?["live"] as? [String: Any])?["files"] as? Int == 1 && json?["root"] as? String == "index.json")
    }

    @Test("Hints to revert carry the options the command was given: key, endpoint, profile, quoted for a shell")
    func revertHintCarriesOptions() async throws {
        let work = try TemporaryFolder("hint")
        let (keyPath, _) = try await Support.key(in: work)
        let destination = work.path("my site/App").path
        let old = try Support.bundle("old/App", in: work.url, ["a.txt": "old"])
        #expect(try await BreezeBinary.run(["release", old.path, destination, "--key", keyPath]).status == 0)
        let stale = work.path("stale")
        try FileManager.default.copyItem(at: old, to: stale)
        let new = try Support.bundle("new/App", in: work.url, ["a.txt": "new"])
        #expect(try await BreezeBinary.run(["release", new.path, destination, "--key", keyPath]).status == 0)
        // A copy of the first release, published as it is: older than what is live.
        let run = try await BreezeBinary.run(["publish", stale.path, destination])
        #expect(run.status == 65, "\(run.error)")
        #expect(
            run.error.contains("hint: in the object layout, `breeze revert '\(destination)' --key KEY_FILE`"),
            "\(run.error)"
        )
    }
}

/// What a killed release leaves: its scratch copy, removed by the next release on the host.
@Suite("A killed release's scratch copy is removed by the next one; a live one's and another host's stay")
struct ScratchCopyTests {
    @Test("Copies of gone processes on this host are removed; this process's and another host's stay")
    func reapsOnlyAbandonedCopies() throws {
        let folder = try TemporaryFolder("scratch")
        // A process id that was in use a moment ago and is gone now.
        let gone = Process()
        gone.executableURL = URL(fileURLWithPath: "/bin/true")
        try gone.run()
        gone.waitUntilExit()
        let host = ScratchCopy.host
        let names = [
            "abandoned": "\(ScratchCopy.prefix)\(gone.processIdentifier)-\(host)-\(UUID().uuidString)",
            "mine": "\(ScratchCopy.prefix)\(getpid())-\(host)-\(UUID().uuidString)",
            "elsewhere": "\(ScratchCopy.prefix)\(gone.processIdentifier)-0badc0de-\(UUID().uuidString)",
            "unrelated": "breeze-release-notes",
        ]
        for name in names.values {
            try FileManager.default.createDirectory(at: folder.path("\(name)/App"), withIntermediateDirectories: true)
        }
        ScratchCopy.reapAbandoned(in: folder.url)
        let left = Set(try FileManager.default.contentsOfDirectory(atPath: folder.url.path))
        #expect(left == Set([names["mine"]!, names["elsewhere"]!, names["unrelated"]!]))
    }
}
