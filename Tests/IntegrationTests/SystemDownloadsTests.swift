import Foundation
import FreshAir
import Testing

/// The system moves the bytes, FreshAir verifies and installs them: a signed release served by
/// nginx, downloaded by curl in processes of its own (the stand-in for a background
/// `URLSession` or a Background Assets extension), accepted and installed by the library.
@Suite("System downloads: the system moves the bytes, FreshAir verifies and installs")
struct SystemDownloadsTests {
    let work: TemporaryFolder
    let nginx: Nginx
    let key: String

    init() async throws {
        work = try TemporaryFolder("system-downloads")
        try FileManager.default.createDirectory(at: work.path("site"), withIntermediateDirectories: true)
        nginx = try Nginx(serving: work.path("site"))
        #expect(try await BreezeBinary.run(["init", work.path("App.freshair").path]).status == 0)
        let keygen = try await BreezeBinary.run(["keygen", work.path("k.key").path, "--json"])
        let object = try JSONSerialization.jsonObject(with: Data(keygen.output.utf8)) as? [String: String]
        key = try #require(object?["publicKey"], "\(keygen.output)")
    }

    /// Writes `files` into the author's bundle and releases it, signed, to the served folder.
    func release(_ files: [String: Data]) async throws {
        for (path, data) in files { try data.write(to: work.path("App.freshair/\(path)")) }
        let run = try await BreezeBinary.run([
            "release", work.path("App.freshair").path, work.path("site/App.freshair").path, "--key",
            work.path("k.key").path,
        ])
        #expect(run.status == 0, "\(run.error)")
    }

    func content() throws -> FreshAirContent {
        var configuration = SyncConfiguration()
        configuration.trustedKeys = [try TrustedKey(base64: key)]
        configuration.retry = RetryPolicy(maxAttempts: 1)
        var environment = ConditionEnvironment.current(appVersion: "1.0")
        environment["displayScale"] = 3
        return FreshAirContent(
            remote: nginx.url.appendingPathComponent("App.freshair/"),
            folder: work.path("store"),
            bundledIn: nil,
            environment: environment,
            configuration: configuration
        )
    }

    /// The system's part: curl, a process of its own, writes the bytes at the download's URL
    /// to a file the app is then handed.
    func systemDownload(_ download: SystemDownloads.Download) async throws -> URL {
        let file = work.path("system/\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: work.path("system"), withIntermediateDirectories: true)
        _ = try await shell("curl -sSf -o '\(file.path)' '\(download.url.absoluteString)'", in: work.url)
        return file
    }

    func live(_ path: String) throws -> Data {
        try Data(contentsOf: try content().store.liveLink.appendingPathComponent(path))
    }

    static func bytes(_ count: Int, seed: UInt8) -> Data {
        Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ Int(seed)) })
    }

    @Test("Planned, downloaded by another process, verified, installed: nothing fetched twice")
    func deliverAndInstall() async throws {
        try await release([:])
        try await content().run()  // version 1, installed as usual

        let big = Self.bytes(300_000, seed: 1)
        try await release([
            "big.bin": big,
            "en.lproj/Feature.strings": Data(
                "\"welcome.title\" = \"Two\";\n\"welcome.description\" = \"New.\";\n".utf8
            ),
        ])
        let downloads = SystemDownloads(try content())
        let plan = try await downloads.plan()
        #expect(Set(plan.flatMap(\.paths)) == ["big.bin", "en.lproj/Feature.strings"], "\(plan)")
        #expect(plan.allSatisfy { $0.url.path.contains("/objects/") }, "the release's object layout")
        let bigDownload = try #require(plan.first { $0.paths == ["big.bin"] })
        #expect(bigDownload.size == 300_000 && bigDownload.identifier == ContentHash.of(big, using: .sha256).hex)

        // A truncated delivery and another file's bytes are refused; the download stays pending.
        let fetched = try await systemDownload(bigDownload)
        let truncated = work.path("system/truncated")
        try Data(try Data(contentsOf: fetched).prefix(100_000)).write(to: truncated)
        await #expect(throws: FreshAirError.self) {
            try downloads.accept(identifier: bigDownload.identifier, file: truncated)
        }
        let other = work.path("system/other")
        try Self.bytes(300_000, seed: 9).write(to: other)
        do {
            try downloads.accept(identifier: bigDownload.identifier, file: other)
            Issue.record("another file's bytes were accepted")
        } catch let error as FreshAirError {
            #expect(error.code == .hashMismatch && "\(error)".contains("big.bin"), "\(error)")
        }
        #expect(FileManager.default.fileExists(atPath: other.path), "a refused file is left to its owner")
        #expect(try downloads.pending().count == 2)

        // Accepted out of order, the app "killed" between the two (a new value, state from disk).
        #expect(try downloads.accept(identifier: bigDownload.identifier, file: fetched))
        #expect(!FileManager.default.fileExists(atPath: fetched.path), "moved, not copied")
        #expect(try downloads.accept(identifier: bigDownload.identifier, file: other) == false, "delivered twice")
        #expect(try await downloads.installIfComplete() == nil, "one is still pending")
        let relaunched = SystemDownloads(try content())
        let rest = try relaunched.pending()
        #expect(rest.map(\.paths) == [["en.lproj/Feature.strings"]])
        #expect(try relaunched.accept(identifier: "not-in-the-plan", file: other) == false)
        for download in rest {
            try relaunched.accept(identifier: download.identifier, file: try await systemDownload(download))
        }

        let summary = try #require(try await relaunched.installIfComplete())
        #expect(summary.outcome == .updated)
        #expect(summary.bytesDownloaded < 20_000, "the manifests only: \(summary.oneLine)")
        #expect(try live("big.bin") == big)
        #expect(String(decoding: try live("en.lproj/Feature.strings"), as: UTF8.self).contains("Two"))
        #expect(!FileManager.default.fileExists(atPath: work.path("store/interrupted/delivered").path))
        #expect(try relaunched.pending().isEmpty)
        #expect(try await relaunched.plan().isEmpty, "nothing left to do")
    }

    @Test("A newer release published midway: what still matches is used, the rest planned again")
    func newerReleaseMidway() async throws {
        try await release([:])
        try await content().run()
        let (kept, dropped, newer) = (
            Self.bytes(200_000, seed: 2), Self.bytes(200_000, seed: 3), Self.bytes(200_000, seed: 4)
        )
        try await release(["kept.bin": kept, "other.bin": dropped])
        let downloads = SystemDownloads(try content())
        let first = try await downloads.plan()
        let keptDownload = try #require(first.first { $0.paths == ["kept.bin"] })
        try downloads.accept(identifier: keptDownload.identifier, file: try await systemDownload(keptDownload))

        // The author replaces other.bin before the system delivered it.
        try await release(["other.bin": newer])
        let stale = try #require(first.first { $0.paths == ["other.bin"] })
        let late = try await systemDownload(stale)
        let second = try await downloads.plan()
        #expect(second.map(\.paths) == [["other.bin"]], "kept.bin was delivered and is still wanted")
        #expect(second.first?.identifier == ContentHash.of(newer, using: .sha256).hex)
        #expect(try downloads.accept(identifier: stale.identifier, file: late) == false, "a replaced plan's file")
        for download in second {
            try downloads.accept(identifier: download.identifier, file: try await systemDownload(download))
        }
        let summary = try #require(try await downloads.installIfComplete())
        #expect(summary.outcome == .updated && summary.bytesDownloaded < 20_000, "\(summary.oneLine)")
        #expect(try live("kept.bin") == kept && live("other.bin") == newer)
    }

    @Test("The app's own sync got there first: late deliveries are not kept, the install finds it current")
    func appSyncedFirst() async throws {
        try await release([:])
        try await content().run()
        try await release(["big.bin": Self.bytes(150_000, seed: 5)])
        let downloads = SystemDownloads(try content())
        let plan = try await downloads.plan()
        let file = try await systemDownload(try #require(plan.first))
        try await content().run()  // in the foreground, before the system finished
        #expect(try downloads.accept(identifier: plan[0].identifier, file: file) == false)
        #expect(try await downloads.installIfComplete()?.outcome == .alreadyCurrent)
        #expect(!FileManager.default.fileExists(atPath: work.path("store/interrupted/delivered").path))
    }

    @Test("Another process syncs the same store while deliveries are accepted: one lock, nothing lost")
    func anotherProcessSyncs() async throws {
        try await release([:])
        try await content().run()
        let files = (0..<4).reduce(into: [String: Data]()) {
            $0["g\($1).bin"] = Self.bytes(120_000 + $1, seed: UInt8(20 + $1))
        }
        try await release(files)
        let downloads = SystemDownloads(try content())
        let plan = try await downloads.plan()
        var delivered: [(String, URL)] = []
        for download in plan { delivered.append((download.identifier, try await systemDownload(download))) }
        // `breeze sync` in a process of its own, on the same store (its --store), as an app
        // extension's sync would be beside the app's accepts.
        let other = Task {
            try await BreezeBinary.run([
                "sync", nginx.url.appendingPathComponent("App.freshair/").absoluteString, work.path("other-live").path,
                "--store", work.path("store").path, "--trusted-key", key,
            ])
        }
        for (identifier, file) in delivered { _ = try downloads.accept(identifier: identifier, file: file) }
        let synced = try await other.value
        #expect(synced.status == 0, "\(synced.error)")
        _ = try await downloads.installIfComplete()
        for (path, data) in files { #expect(try live(path) == data, "\(path)") }
        #expect(!FileManager.default.fileExists(atPath: work.path("store/interrupted/delivered").path))
    }

    @Test("Callers of their own on one store, all at once: every delivery kept, one install")
    func concurrentCallers() async throws {
        try await release([:])
        try await content().run()
        let files = (0..<6).reduce(into: [String: Data]()) {
            $0["f\($1).bin"] = Self.bytes(80_000 + $1, seed: UInt8($1))
        }
        try await release(files)
        let plan = try await SystemDownloads(try content()).plan()
        #expect(plan.count == 6)
        var delivered: [(String, URL)] = []
        for download in plan { delivered.append((download.identifier, try await systemDownload(download))) }
        // Each as if from the app or its extension: a value of its own, the same folder.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (identifier, file) in delivered {
                group.addTask { _ = try SystemDownloads(try content()).accept(identifier: identifier, file: file) }
            }
            try await group.waitForAll()
        }
        let summary = try #require(try await SystemDownloads(try content()).installIfComplete())
        #expect(summary.outcome == .updated && summary.bytesDownloaded < 20_000, "\(summary.oneLine)")
        for (path, data) in files { #expect(try live(path) == data, "\(path)") }
    }
}
