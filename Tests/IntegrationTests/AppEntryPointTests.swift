import BreezeKit
import Foundation
import FreshAir
import TestSupport
import Testing

/// What an app writes: one `FreshAirContent`, a `ContentModel` for SwiftUI, images by scale.
@Suite("An app's entry point: the bundled copy first, observable state, images at every scale")
struct AppEntryPointTests {
    /// A bundle folder at `folder` with a strings table saying `title`, a two-scale image, a
    /// 1 MB file and `notes` as its release notes, generated as `breeze generate` would.
    static func makeBundle(at folder: URL, title: String, notes: String? = nil, blob: Data) async throws {
        let files: [String: Data] = [
            "en.lproj/Feature.strings": Data("\"welcome.title\" = \"\(title)\";\n".utf8),
            "Resources/welcome.png": Data("1x".utf8),
            "Resources/welcome@2x.png": Data("2x".utf8),
            "blob.bin": blob,
        ].merging(notes.map { ["release_notes.json": Data($0.utf8)] } ?? [:]) { $1 }
        try? FileManager.default.removeItem(at: folder)
        for (path, data) in files {
            let url = folder.appendingPathComponent(path)
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(),
                withIntermediateDirectories: true
            )
            try data.write(to: url)
        }
        _ = try await ManifestGenerator.run(bundle: folder)
    }

    static func configuration() -> SyncConfiguration {
        var configuration = SyncConfiguration()
        configuration.retry = RetryPolicy(maxAttempts: 1)
        return configuration
    }

    static func environment(appVersion: String, scale: Int = 3) -> ConditionEnvironment {
        var environment = ConditionEnvironment.current(appVersion: appVersion)
        environment["displayScale"] = .number(String(scale))
        environment["language"] = "en"
        return environment
    }

    /// An app 1.0's content from `remote`, its store in `app`'s `Store`, its bundled copy in
    /// `app`'s `resources` folder.
    static func content(from remote: URL, app: TemporaryFolder, resources: String) -> FreshAirContent {
        FreshAirContent(
            remote: remote,
            folder: app.path("Store"),
            bundledIn: Bundle(url: app.path(resources)),
            environment: environment(appVersion: "1.0"),
            configuration: configuration()
        )
    }

    @Test("the bundled copy goes live without the network; the server's reuses what they share; then one request")
    func bundledCopyThenServer() async throws {
        try await PublishedFolder.with(.nginx) { server in
            let app = try TemporaryFolder("app")
            let blob = SeededBytes(seed: 7919).bytesOnce(1 << 20)
            try await Self.makeBundle(at: app.path("AppResources/App.freshair"), title: "Bundled", blob: blob)
            let content = Self.content(
                from: server.url.appendingPathComponent("App.freshair/"),
                app: app,
                resources: "AppResources"
            )
            #expect(content.bundled?.lastPathComponent == "App.freshair")

            // Nothing published yet: the app still has content, and is told the server's state.
            await #expect(throws: FreshAirError.self) { try await content.run() }
            do {
                try await content.run()
                Issue.record("a 404 cannot be a success")
            } catch let error as FreshAirError {
                #expect(
                    error.code == .httpStatus,
                    "with the bundled copy live already, only the server's error: \(error)"
                )
            }
            #expect(content.live.localizedString(forKey: "welcome.title", table: "Feature") == "Bundled")
            #expect(
                content.live.imageURL(named: "welcome", subdirectory: "Resources")?.lastPathComponent
                    == "welcome@2x.png"
            )

            try await Self.makeBundle(
                at: server.root.appendingPathComponent("App.freshair"),
                title: "Fresh",
                blob: blob
            )
            let upgrade = try await content.run()
            #expect(upgrade.outcome == .updated)
            #expect(upgrade.bytesDownloaded < 4096, "the 1 MB file both copies share is reused: \(upgrade.oneLine)")
            #expect(content.live.localizedString(forKey: "welcome.title", table: "Feature") == "Fresh")

            let again = try await content.run()
            #expect(again.notModified && again.requests == 1, "\(again.oneLine)")
            #expect(try content.store.verify()?.isIntact == true)
        }
    }

    @Test("a first launch with the bundled copy only: bundledCopyOnly, with the server's error inside")
    func bundledCopyOnly() async throws {
        let app = try TemporaryFolder("app-offline")
        try await Self.makeBundle(at: app.path("Res/Offline.freshair"), title: "Offline", blob: Data(count: 10))
        let socket = try LoopbackSocket(listening: false)
        defer { socket.close() }
        let content = Self.content(
            from: URL(string: "http://127.0.0.1:\(socket.port)/Offline.freshair/")!,
            app: app,
            resources: "Res"
        )
        do {
            try await content.run()
            Issue.record("an unreachable server cannot be a success")
        } catch let error as FreshAirError {
            #expect(error.code == .bundledCopyOnly)
            #expect((error.underlying as? FreshAirError)?.code == .transport)
        }
        #expect(content.store.liveVersionID == 1)
        #expect(content.live.localizedString(forKey: "welcome.title", table: "Feature") == "Offline")
    }

    /// `content.tgz` in `folder`, made by GNU tar from a strings table saying `title` and an
    /// image at 2x.
    static func makePackage(in folder: URL, title: String) async throws {
        let source = folder.appendingPathComponent("package-source")
        try? FileManager.default.removeItem(at: source)
        try FileManager.default.createDirectory(
            at: source.appendingPathComponent("en.lproj"),
            withIntermediateDirectories: true
        )
        try Data("\"welcome.title\" = \"\(title)\";\n".utf8)
            .write(to: source.appendingPathComponent("en.lproj/Feature.strings"))
        try Data("2x".utf8).write(to: source.appendingPathComponent("welcome@2x.png"))
        try await shell("tar -czf content.tgz -C package-source . && rm -r package-source", in: folder)
    }

    @Test("a package's URL: its bundled copy first, then the server's, then one request; a damaged copy passed over")
    func packageContent() async throws {
        try await PublishedFolder.with(.nginx) { server in
            let app = try TemporaryFolder("app-package")
            try FileManager.default.createDirectory(at: app.path("Res"), withIntermediateDirectories: true)
            try await Self.makePackage(in: app.path("Res"), title: "Bundled")
            let remote = server.url.appendingPathComponent("content.tgz")
            let content = Self.content(from: remote, app: app, resources: "Res")
            #expect(content.bundled?.lastPathComponent == "content.tgz")

            // Nothing published yet: the bundled package is live, and the server's 404 inside.
            do {
                try await content.run()
                Issue.record("a 404 cannot be a success")
            } catch let error as FreshAirError {
                #expect(error.code == .bundledCopyOnly, "\(error)")
                #expect((error.underlying as? FreshAirError)?.status == 404)
            }
            #expect(content.live.localizedString(forKey: "welcome.title", table: "Feature") == "Bundled")
            #expect(content.live.imageURL(named: "welcome")?.lastPathComponent == "welcome@2x.png")

            try await Self.makePackage(in: server.root, title: "Fresh")
            let upgrade = try await content.run()
            #expect(upgrade.outcome == .updated, "\(upgrade.oneLine)")
            #expect(content.live.localizedString(forKey: "welcome.title", table: "Feature") == "Fresh")
            let again = try await content.run()
            #expect(again.notModified && again.requests == 1, "\(again.oneLine)")

            // Another app whose bundled package is cut short: it says why when asked, and is
            // passed over for the server's package rather than keeping it out.
            let damaged = try TemporaryFolder("app-package-damaged")
            try FileManager.default.createDirectory(at: damaged.path("Res"), withIntermediateDirectories: true)
            try await Self.makePackage(in: damaged.path("Res"), title: "Bundled")
            let whole = try Data(contentsOf: damaged.path("Res/content.tgz"))
            try whole.prefix(whole.count / 2).write(to: damaged.path("Res/content.tgz"))
            let fresh = Self.content(from: remote, app: damaged, resources: "Res")
            await #expect {
                try await fresh.installBundledCopy()
            } throws: { error in
                "\(error)".contains("Res/content.tgz: the gzip data ends early")
                    && "\(error)".contains("the file itself is damaged")
            }
            #expect(fresh.store.liveVersionID == nil)
            let synced = try await fresh.run()
            #expect(synced.outcome == .updated, "\(synced.oneLine)")
            #expect(fresh.live.localizedString(forKey: "welcome.title", table: "Feature") == "Fresh")
        }
    }

    @Test("a package's URL given to BundleSync: the 404 says it is a package, and what syncs one")
    func packageURLAsBundle() async throws {
        try await PublishedFolder.with(.nginx) { server in
            let app = try TemporaryFolder("app-package-url")
            let sync = BundleSync(
                remote: server.url.appendingPathComponent("content.tgz"),
                store: BundleStore(root: app.path("Store")),
                configuration: Self.configuration()
            )
            do {
                try await sync.run()
                Issue.record("a package's URL cannot sync as a bundle")
            } catch let error as FreshAirError {
                #expect(error.status == 404)
                #expect("\(error)".contains("content.tgz is a package, not a bundle folder"), "\(error)")
                #expect("\(error)".contains("FreshAirContent"))
            }
        }
    }

    @Test("a damaged bundled copy is passed over for the server's content; installBundledCopy() says what is wrong")
    func damagedBundledCopy() async throws {
        try await PublishedFolder.with(.nginx) { server in
            let app = try TemporaryFolder("app-damaged")
            try await Self.makeBundle(at: app.path("Res/App.freshair"), title: "Bundled", blob: Data(count: 10))
            try Data("changed after the manifest was made".utf8).write(to: app.path("Res/App.freshair/blob.bin"))
            try await Self.makeBundle(
                at: server.root.appendingPathComponent("App.freshair"),
                title: "Server",
                blob: Data(count: 10)
            )
            let content = Self.content(
                from: server.url.appendingPathComponent("App.freshair/"),
                app: app,
                resources: "Res"
            )
            await #expect {
                try await content.installBundledCopy()
            } throws: { error in
                "\(error)".contains("blob.bin")
            }
            #expect(content.store.liveVersionID == nil)
            let summary = try await content.run()
            #expect(summary.outcome == .updated)
            #expect(content.live.localizedString(forKey: "welcome.title", table: "Feature") == "Server")
        }
    }

    @Test("the model: idle, current, what's new after an app upgrade, downloading, failed with the live version kept")
    @MainActor
    func model() async throws {
        let server = try await PublishedFolder.start(.nginx)
        do { try await modelScenario(server) } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    @MainActor
    func modelScenario(_ server: PublishedFolder) async throws {
        do {
            let local = try TemporaryFolder("model")
            let notes = #"""
                {"minimumVersion": "1.0", "releases": [
                  {"version": "1.0", "features": ["welcome"]},
                  {"version": "2.0", "features": ["sharing"]}]}
                """#
            let bundle = server.root.appendingPathComponent("App.freshair")
            try await Self.makeBundle(at: bundle, title: "One", notes: notes, blob: Data(count: 100))
            @MainActor func model(appVersion: String, remote: URL = server.url) -> ContentModel {
                ContentModel(
                    FreshAirContent(
                        remote: remote.appendingPathComponent("App.freshair/"),
                        folder: local.path("Store"),
                        bundledIn: nil,
                        environment: Self.environment(appVersion: appVersion),
                        configuration: Self.configuration()
                    )
                )
            }

            let first = model(appVersion: "1.0")
            guard case .idle = first.phase else { throw TestSetupError("a new model is idle: \(first.phase)") }
            await first.refresh()
            guard case .current(let version) = first.phase else { throw TestSetupError("\(first.phase)") }
            #expect(version == 1)
            #expect(first.lastSummary?.outcome == .updated)
            #expect(first.live.localizedString(forKey: "welcome.title", table: "Feature") == "One")
            #expect(first.whatsNew.isEmpty, "a first launch shows no what's new")
            #expect(first.updateStatus == .available(Version("2.0")!, url: nil))

            // The app was upgraded to 2.0: what's new is 2.0's feature, once.
            let upgraded = model(appVersion: "2.0")
            #expect(upgraded.whatsNew.map(\.key) == ["sharing"])
            #expect(upgraded.updateStatus == .upToDate)
            #expect(
                model(appVersion: "2.0").whatsNew.map(\.key) == ["sharing"],
                "a launch that showed nothing (a background one) leaves it new"
            )
            upgraded.dismissWhatsNew()
            #expect(upgraded.whatsNew.isEmpty)
            #expect(model(appVersion: "2.0").whatsNew.isEmpty, "seen once, not shown again")

            // v2 arrives through a proxy that stalls mid-file: downloading with bytes, then failed.
            try await Self.makeBundle(
                at: bundle,
                title: "Two",
                notes: notes.replacingOccurrences(of: #""minimumVersion": "1.0""#, with: #""minimumVersion": "3.0""#),
                blob: Data(repeating: 1, count: 2 << 20)
            )
            let proxy = try FaultProxy(upstream: server.url)
            defer { proxy.stop() }
            try proxy.rules([["path": "/App.freshair/blob.bin", "fault": "stall", "offset": 300_000, "seconds": 2]])
            let stalled = model(appVersion: "2.0", remote: proxy.url)
            let refresh = Task { await stalled.refresh() }
            var sawBytes: Int64 = 0
            for _ in 0..<500 where sawBytes == 0 {
                if case .downloading(let done, let total) = stalled.phase, done > 0 {
                    sawBytes = done
                    #expect(
                        total.map { $0 >= 2 << 20 } == true,
                        "the plan declared the bytes to come: \(String(describing: total))"
                    )
                }
                try await Task.sleep(for: .milliseconds(10))
            }
            await refresh.value
            #expect(sawBytes > 0, "the model reported bytes while the file arrived")
            guard case .failed(_, let kept) = stalled.phase else { throw TestSetupError("\(stalled.phase)") }
            #expect(kept == 1)
            #expect(stalled.live.localizedString(forKey: "welcome.title", table: "Feature") == "One")

            try proxy.rules([])
            await stalled.refresh()
            guard case .current(let two) = stalled.phase else { throw TestSetupError("\(stalled.phase)") }
            #expect(two == 2)
            #expect(stalled.live.localizedString(forKey: "welcome.title", table: "Feature") == "Two")
            #expect(stalled.updateStatus == .required(minimum: Version("3.0")!, url: nil))
        }
    }

    @Test("a repository's model: idle, current with its bundles, a new version, failed with the bundles kept")
    @MainActor
    func repositoryModel() async throws {
        let server = try await PublishedFolder.start(.nginx)
        do { try await repositoryModelScenario(server) } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    @MainActor
    func repositoryModelScenario(_ server: PublishedFolder) async throws {
        do {
            let id = "com.example.levels"
            let published = server.root.appendingPathComponent(id)
            let sources = try TemporaryFolder("levels-sources")
            func level(_ name: String, _ text: String) throws -> URL {
                let folder = sources.path(name)
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                try Data(text.utf8).write(to: folder.appendingPathComponent("map.txt"))
                return folder
            }
            for (name, text) in [("forest", "trees"), ("desert", "sand")] {
                try RepositoryPublisher.add(folder: try level(name, text), as: name, to: published)
            }
            let container = try TemporaryFolder("levels-container")
            @MainActor func model() -> RepositoryModel {
                RepositoryModel(
                    Repository(
                        source: server.url,
                        id: id,
                        transport: nil,
                        configuration: Self.configuration(),
                        base: { container.path($0 == .caches ? "Caches" : "Application Support") }
                    )
                )
            }

            let levels = model()
            guard case .idle = levels.phase else { throw TestSetupError("a new model is idle: \(levels.phase)") }
            #expect(levels.bundles.isEmpty && levels.folder(ofBundle: "forest") == nil)
            await levels.refresh()
            guard case .current(let version) = levels.phase else { throw TestSetupError("\(levels.phase)") }
            #expect(version == nil, "a repository has no version of its own")
            #expect(levels.bundles == ["forest": 1, "desert": 1])
            #expect(levels.lastSummary?.filesDownloaded == 2)
            #expect(levels.folder(ofBundle: "forest")?.appendingPathComponent("map.txt").text == "trees")

            // A new version of one level: the model says so, and a model made later sees it at once.
            try RepositoryPublisher.add(folder: try level("forest", "more trees"), as: "forest", to: published)
            try PublishedText.uploaded(published.appendingPathComponent("index.json"))
            await levels.refresh()
            #expect(levels.bundles == ["forest": 2, "desert": 1])
            #expect(levels.folder(ofBundle: "forest")?.appendingPathComponent("map.txt").text == "more trees")
            #expect(model().bundles == ["forest": 2, "desert": 1])

            // A damaged index: failed, and every level still installed and readable.
            try PublishedText.write("{\"bundles\": ", to: published.appendingPathComponent("index.json"))
            await levels.refresh()
            guard case .failed(let error, nil) = levels.phase else { throw TestSetupError("\(levels.phase)") }
            #expect("\(error)".contains("index.json"), "\(error)")
            #expect(levels.bundles == ["forest": 2, "desert": 1])
            #expect(levels.folder(ofBundle: "desert")?.appendingPathComponent("map.txt").text == "sand")
        }
    }

    @Test(
        "breeze generate gives every scale and device one variant, and a 3x device an image in every case",
        arguments: [
            ["a.png"], ["a.png", "a@2x.png"], ["a@2x.png"], ["a.png", "a@2x.png", "a@3x.png"],
            ["a.png", "a@2x.png", "a~ipad.png", "a~ipad@2x.png"], ["a@2x.png", "a~ipad@2x.png"], ["a@3x.png"],
        ]
    )
    func everyScaleGetsOneImage(_ variants: [String]) async throws {
        let work = try TemporaryFolder("scales")
        let bundle = work.path("Images.freshair")
        for name in variants {
            try FileManager.default.createDirectory(at: bundle, withIntermediateDirectories: true)
            try Data(name.utf8).write(to: bundle.appendingPathComponent(name))
        }
        _ = try await ManifestGenerator.run(bundle: bundle)
        for device in ["iphone", "ipad"] {
            for scale in 1...3 {
                var environment = ConditionEnvironment()
                environment["device"] = .string(device)
                environment["displayScale"] = .number(String(scale))
                let local = try TemporaryFolder("scales-device")
                let sync = BundleSync(
                    remote: bundle,
                    store: BundleStore(root: local.path("store"), liveLink: local.path("live")),
                    environment: environment
                )
                try await sync.run()
                let installed = try FileManager.default.contentsOfDirectory(atPath: local.path("live").path)
                    .filter { $0.hasSuffix(".png") }
                #expect(installed.count == 1, "\(device) @\(scale)x from \(variants): \(installed)")
                let image = ContentBundle(root: local.path("live"), environment: environment).imageURL(named: "a")
                #expect(image?.lastPathComponent == installed.first, "\(device) @\(scale)x from \(variants)")
                if scale == 3, device == "iphone", variants.contains("a@2x.png"), !variants.contains("a@3x.png") {
                    #expect(installed == ["a@2x.png"], "a 3x iPhone takes @2x when there is no @3x")
                }
            }
        }
    }
}
