import BreezeKit
import Foundation
import FreshAir
import Testing

/// Mirrors: byte-identical copies of one destination, tried in order. A device ends on the
/// newest valid release, never lower, and a check with nothing new costs one request.
@Suite("Mirrors: failover on a primary that is down, stale or broken; never lower; one request when current")
struct MirrorTests {
    typealias Support = ReleaseTransactionTests

    /// The published folders `primary/App` and `mirror/App` on `server`, and a key.
    struct Site {
        let server: PublishedFolder
        let work: TemporaryFolder
        let keyPath: String
        let key: SigningKey
        var releases = 0

        func folder(_ name: String) -> URL { server.root.appendingPathComponent("\(name)/App") }
        func url(_ name: String) -> URL { server.url.appendingPathComponent("\(name)/App/") }

        /// Releases new content (`text`) into `primary`; returns it.
        mutating func release(_ text: String) async throws {
            releases += 1
            let source = try Support.bundle("r\(releases)/App", in: work.url, ["a.txt": text])
            let run = try await BreezeBinary.run(["release", source.path, folder("primary").path, "--key", keyPath])
            #expect(run.status == 0, "\(run.error)")
        }

        /// Makes `mirror` a byte-identical copy of `primary` as it is now.
        func replicate() throws {
            try? FileManager.default.removeItem(at: folder("mirror"))
            try FileManager.default.createDirectory(
                at: folder("mirror").deletingLastPathComponent(),
                withIntermediateDirectories: true
            )
            try FileManager.default.copyItem(at: folder("primary"), to: folder("mirror"))
            for path in try FileManager.default.subpathsOfDirectory(atPath: folder("mirror").path) {
                try PublishedText.uploaded(folder("mirror").appendingPathComponent(path))
            }
        }

        /// A device's content, pinning the key, reading `primary` then `mirror` (or `sources`).
        func device(_ store: TemporaryFolder, primary: URL? = nil) -> FreshAirContent {
            var configuration = SyncConfiguration()
            configuration.trustedKeys = [key.publicKey]
            configuration.retry = RetryPolicy(maxAttempts: 1)
            var content = FreshAirContent(
                remote: primary ?? url("primary"),
                folder: store.path("store"),
                bundledIn: nil,
                environment: ExampleBundle.environment(appVersion: "1.0"),
                configuration: configuration
            )
            content.mirrors = [url("mirror")]
            return content
        }
    }

    static func site(_ server: PublishedFolder) async throws -> Site {
        let work = try TemporaryFolder("mirrors")
        let (keyPath, key) = try await Support.key(in: work)
        return Site(server: server, work: work, keyPath: keyPath, key: key)
    }

    @Test("The primary down: the mirror serves, is remembered, and a check with nothing new is one request (304)")
    func primaryDown() async throws {
        try await PublishedFolder.with(.nginx) { server in
            var site = try await Self.site(server)
            try await site.release("one")
            try site.replicate()
            let store = try TemporaryFolder("mirror-device")
            // Nothing listens on port 9 of this machine: the primary is down.
            let down = URL(string: "http://127.0.0.1:9/App/")!
            let content = site.device(store, primary: down)
            _ = try await content.run()
            #expect(content.live.url(forResource: "a", withExtension: "txt")?.text == "one")
            let again = try await content.run()
            #expect(again.notModified && again.requests == 1, "\(again)")
        }
    }

    @Test("The primary serving an older signed release, then garbage: the mirror's newer one is installed, never lower")
    func primaryStaleOrBroken() async throws {
        try await PublishedFolder.with(.nginx) { server in
            var site = try await Self.site(server)
            try await site.release("one")
            let old = try TemporaryFolder("mirror-old")
            try FileManager.default.copyItem(at: site.folder("primary"), to: old.path("App"))
            try await site.release("two")
            try site.replicate()
            let store = try TemporaryFolder("mirror-device")
            let content = site.device(store)
            _ = try await content.run()
            #expect(content.live.url(forResource: "a", withExtension: "txt")?.text == "two")

            // The mirror moves on; the primary goes back to release one (a stale copy).
            try await site.release("three")
            try site.replicate()
            try FileManager.default.removeItem(at: site.folder("primary"))
            try FileManager.default.copyItem(at: old.path("App"), to: site.folder("primary"))
            for path in try FileManager.default.subpathsOfDirectory(atPath: site.folder("primary").path) {
                try PublishedText.uploaded(site.folder("primary").appendingPathComponent(path))
            }
            _ = try await content.run()
            #expect(content.live.url(forResource: "a", withExtension: "txt")?.text == "three")

            // Garbage at the primary: the remembered mirror answers first now; forget it, and
            // the primary's garbage still only sends the device to the mirror.
            try? FileManager.default.removeItem(at: store.path("store/source.json"))
            try PublishedText.write("{broken", to: site.folder("primary").appendingPathComponent("manifest.json"))
            let summary = try await content.run()
            #expect(content.live.url(forResource: "a", withExtension: "txt")?.text == "three", "\(summary)")
        }
    }

    @Test("Two sources disagreeing: the device takes what answers, and never goes below what it has")
    func disagreeing() async throws {
        try await PublishedFolder.with(.nginx) { server in
            var site = try await Self.site(server)
            try await site.release("one")
            try site.replicate()  // the mirror stays at one
            try await site.release("two")
            let store = try TemporaryFolder("mirror-device")
            let content = site.device(store)
            _ = try await content.run()
            #expect(content.live.url(forResource: "a", withExtension: "txt")?.text == "two")
            // Only the mirror now, and it is behind: refused, the device keeps two.
            var mirrorOnly = FreshAirContent(
                remote: site.url("mirror"),
                folder: store.path("store"),
                bundledIn: nil,
                environment: ExampleBundle.environment(appVersion: "1.0"),
                configuration: content.configuration
            )
            mirrorOnly.mirrors = []
            await #expect(throws: FreshAirError.self) { try await mirrorOnly.run() }
            #expect(content.live.url(forResource: "a", withExtension: "txt")?.text == "two")
        }
    }

    @Test("breeze sync --mirror: the primary down, the mirror installs")
    func breezeSyncMirror() async throws {
        try await PublishedFolder.with(.nginx) { server in
            var site = try await Self.site(server)
            try await site.release("one")
            try site.replicate()
            let local = try TemporaryFolder("mirror-cli")
            let run = try await BreezeBinary.run([
                "sync", "http://127.0.0.1:9/App/", local.path("live").path, "--mirror",
                site.url("mirror").absoluteString,
                "--trusted-key", site.key.publicKey.base64, "--attempts", "1",
            ])
            #expect(run.status == 0, "\(run.error)")
            #expect(local.path("live/a.txt").text == "one")
        }
    }
}
