import BreezeKit
import Foundation
import FreshAir
import Testing

@Suite("breeze verify: re-hash the live content, and let the next sync repair it")
struct VerifyTests {
    @Test("A bundle: missing, changed and extra files are listed; the next sync fetches just the damaged ones")
    func bundleDamageIsRepairedFileByFile() async throws {
        try await PublishedFolder.with(.nginx) { server in
            try ExampleBundle.write(in: server.root)
            let client = try ExampleClient(published: server)
            try await client.sync.run()
            let directory = client.live.path

            let intact = try await BreezeBinary.run(["verify", directory, "--store", client.local.path("store").path])
            #expect(
                intact.status == 0 && intact.output.hasPrefix("Version 1 is intact: 4 files"),
                "\(intact.output)\(intact.error)"
            )

            // Bit rot (same size), a deleted file and a stray one.
            let foo = client.live.appendingPathComponent("Embed1.freshair/foo.md")
            var bytes = try Data(contentsOf: foo)
            bytes[0] ^= 0x20
            try bytes.write(to: foo)
            try FileManager.default.removeItem(at: client.live.appendingPathComponent("Embed1.freshair/bar.md"))
            try Data("stray".utf8).write(to: client.live.appendingPathComponent("stray.txt"))
            // What Finder leaves in a folder a Mac user opened is not damage.
            try Data("finder".utf8).write(to: client.live.appendingPathComponent("Embed1.freshair/.DS_Store"))
            try Data("finder".utf8).write(to: client.live.appendingPathComponent("._stray.txt"))

            let damaged = try await BreezeBinary.run([
                "verify", directory, "--store", client.local.path("store").path, "--json",
            ])
            #expect(damaged.status == 1)
            let reports = try JSONDecoder().decode([String: VerificationReport].self, from: Data(damaged.output.utf8))
            let report = try #require(reports[""])
            #expect(
                report.changed == ["Embed1.freshair/foo.md"] && report.missing == ["Embed1.freshair/bar.md"]
                    && report.extra == ["stray.txt"]
            )

            // The server has not changed: without the damage marks this would be one 304. The
            // root manifest is fetched whole (the stored copy is not trusted), then the two files.
            let before = server.nginxRequests().count
            let repair = try await client.sync.run()
            #expect(repair.outcome == .updated)
            #expect(Set(repair.downloaded) == ["Embed1.freshair/foo.md", "Embed1.freshair/bar.md"])
            #expect(repair.filesRepaired == 2)
            #expect(
                repair.oneLine.hasPrefix("Repaired 2 damaged files as version 2: 2 downloaded"),
                "\(repair.oneLine)"
            )
            let fetched = server.nginxRequests().dropFirst(before).map(\.path)
            #expect(
                Set(fetched)
                    == Set(
                        ["manifest.json", "Embed1.freshair/foo.md", "Embed1.freshair/bar.md"].map {
                            "/\(ExampleBundle.name)/\($0)"
                        }
                    )
            )
            #expect(
                client.liveFiles() == [
                    "Embed1.freshair/bar.md", "Embed1.freshair/foo.md", "Embed1.freshair/manifest.json",
                    "manifest.json",
                ]
            )
            #expect(try client.sync.store.verify()?.isIntact == true)
            // Repaired and remembered: the next check is one 304 again.
            let check = try await client.sync.run()
            #expect(check.requests == 1 && check.notModified)

            // Damage found while a new release is out: the update says it repaired as well.
            try FileManager.default.removeItem(at: client.live.appendingPathComponent("Embed1.freshair/bar.md"))
            #expect(try client.sync.store.verify()?.isIntact == false)
            try ExampleBundle.write(in: server.root, overrides: ["Embed1.freshair/foo.md": "# Foo, edited\n"])
            let both = try await client.sync.run()
            // The two manifests, the edited file and the repaired one.
            #expect(both.filesRepaired == 1 && both.filesDownloaded == 4, "\(both.downloaded)")
            #expect(
                both.oneLine.hasPrefix("Updated to version 3, repairing 1 damaged file: 4 downloaded"),
                "\(both.oneLine)"
            )
        }
    }

    @Test("A package: damage is reported and the next update downloads the package whole")
    func packageDamageIsRepaired() async throws {
        try await PublishedFolder.with(.nginx) { server in
            try FileManager.default.createDirectory(
                at: server.root.appendingPathComponent("src/data"),
                withIntermediateDirectories: true
            )
            try Data("packaged\n".utf8).write(to: server.root.appendingPathComponent("src/data/message.txt"))
            _ = try await shell("tar -czf content.tgz -C src .", in: server.root)
            let local = try TemporaryFolder("verify-package")
            let remote = server.url.appendingPathComponent("content.tgz").absoluteString
            try await BreezeBinary.run(["sync", remote, local.path("Content").path]).expectSuccess()
            try Data("tampered\n".utf8).write(to: local.path("Content/data/message.txt"))

            let verify = try await BreezeBinary.run(["verify", local.path("Content").path])
            #expect(verify.status == 1 && verify.output.contains("changed: data/message.txt"), "\(verify.output)")
            let before = server.nginxRequests().count
            let repair = try await BreezeBinary.run(["sync", remote, local.path("Content").path])
            #expect(
                repair.output.hasPrefix("Installed package version 2 in place of the damaged one"),
                "\(repair.output)\(repair.error)"
            )
            #expect(server.nginxRequests().dropFirst(before).map(\.status) == [200])
            #expect(local.path("Content/data/message.txt").text == "packaged\n")
            #expect(try await BreezeBinary.run(["verify", local.path("Content").path]).status == 0)
        }
    }

    @Test("A repository: each bundle is verified, and a damaged one is installed again at the same version")
    func repositoryDamageIsRepaired() async throws {
        try await PublishedFolder.with(.nginx) { server in
            let sources = try TemporaryFolder("verify-repo-src")
            for name in ["cats", "dogs"] {
                try FileManager.default.createDirectory(at: sources.path(name), withIntermediateDirectories: true)
                try Data("\(name)\n".utf8).write(to: sources.path("\(name)/item.txt"))
                try RepositoryPublisher.add(
                    folder: sources.path(name),
                    as: name,
                    to: server.root.appendingPathComponent("zoo")
                )
            }
            let local = try TemporaryFolder("verify-repo")
            let directory = local.path("Zoo").path
            try await BreezeBinary.run(["sync", server.url.absoluteString, directory, "--repo", "zoo"]).expectSuccess()
            try FileManager.default.removeItem(at: local.path("Zoo/dogs/item.txt"))

            let verify = try await BreezeBinary.run(["verify", directory])
            #expect(verify.status == 1)
            #expect(
                verify.output.contains("cats: Version 1 is intact: 1 file, 5 B re-hashed.")
                    && verify.output.contains("dogs: Version 1 is damaged: 1 missing of 1 file;"),
                "\(verify.output)"
            )
            let repair = try await BreezeBinary.run(["sync", server.url.absoluteString, directory, "--repo", "zoo"])
            #expect(repair.output.contains("1 updated (dogs → 1)"), "\(repair.output)\(repair.error)")
            #expect(local.path("Zoo/dogs/item.txt").text == "dogs\n")
            #expect(try await BreezeBinary.run(["verify", directory]).status == 0)
        }
    }

    @Test("Nothing installed: a clear error")
    func nothingInstalled() async throws {
        let empty = try TemporaryFolder("verify-empty")
        let run = try await BreezeBinary.run(["verify", empty.url.path])
        #expect(run.status != 0 && run.error.contains("holds no content installed by `breeze sync`"), "\(run.error)")
        let missing = try await BreezeBinary.run(["verify", empty.path("nothing").path])
        #expect(missing.status == 66 && missing.error.contains("nothing: no such file or folder"), "\(missing.error)")
    }
}
