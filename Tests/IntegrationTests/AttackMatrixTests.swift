import BreezeKit
import Foundation
import FreshAir
import TestSupport
import Testing

/// One delivery mode, published and signed as a publisher would and updated as a device would,
/// so that every attack below runs the same way against bundles, packages and repositories.
struct SignedDeployment {
    enum Mode: String, CaseIterable, CustomStringConvertible, Sendable {
        case bundle, package, repository
        var description: String { rawValue }
    }

    let mode: Mode
    let server: PublishedFolder
    let key: SigningKey
    let device: TemporaryFolder
    let source: TemporaryFolder

    init(_ mode: Mode, on server: PublishedFolder, key: SigningKey) throws {
        self.mode = mode
        self.server = server
        self.key = key
        device = try TemporaryFolder("device-\(mode)")
        source = try TemporaryFolder("source-\(mode)")
    }

    /// What is published for this mode, below the server's root.
    var publishedFolder: URL {
        switch mode {
        case .bundle: server.root.appendingPathComponent("App.freshair")
        case .package: server.root.appendingPathComponent("pkg")
        case .repository: server.root.appendingPathComponent("repo")
        }
    }

    /// Publishes `text` (in `message.txt`, with a 64 KB `blob.bin`) as a signed release.
    func publish(_ text: String, options: SigningOptions = SigningOptions()) async throws {
        let content = source.path("content")
        try? FileManager.default.removeItem(at: content)
        try FileManager.default.createDirectory(at: content, withIntermediateDirectories: true)
        try Data(text.utf8).write(to: content.appendingPathComponent("message.txt"))
        try Data((0..<65_536).map { UInt8(truncatingIfNeeded: $0 &* 31) }).write(
            to: content.appendingPathComponent("blob.bin")
        )
        try FileManager.default.createDirectory(at: publishedFolder, withIntermediateDirectories: true)
        switch mode {
        case .bundle:
            let bundle = publishedFolder
            for name in ["message.txt", "blob.bin"] {
                try? FileManager.default.removeItem(at: bundle.appendingPathComponent(name))
                try FileManager.default.copyItem(
                    at: content.appendingPathComponent(name),
                    to: bundle.appendingPathComponent(name)
                )
            }
            if !FileManager.default.fileExists(atPath: bundle.appendingPathComponent("manifest.json").path) {
                try Data(#"[{"filename": "message.txt"}, {"filename": "blob.bin"}]"#.utf8).write(
                    to: bundle.appendingPathComponent("manifest.json")
                )
            }
            _ = try await BundleHasher.run(bundle: bundle)
            _ = try await ManifestSigner.sign(bundle: bundle, with: key, options: options)
        case .package:
            let package = publishedFolder.appendingPathComponent("content.tgz")
            _ = try PackageWriter.write(folder: content, to: package)
            _ = try PackageSigner.sign(package: package, with: [key], options: options)
        case .repository:
            _ = try RepositoryPublisher.add(
                folder: content,
                as: "msg",
                to: publishedFolder,
                signingWith: [key],
                options: options
            )
        }
        try touchAll(publishedFolder)
    }

    /// Gives every published file a new, later second: nginx's validators follow it.
    func touchAll(_ folder: URL) throws {
        let later = Date().addingTimeInterval(Double(Self.clock.next()))
        for name in try FileManager.default.subpathsOfDirectory(atPath: folder.path) {
            try FileManager.default.setAttributes(
                [.modificationDate: later],
                ofItemAtPath: folder.appendingPathComponent(name).path
            )
        }
    }

    /// Seconds ahead of now, one more at each publish of the run.
    private static let clock = Counter()

    /// The device's update, with `configure` applied to a configuration that pins `key`.
    func update(through prefix: String = "", _ configure: (inout SyncConfiguration) -> Void = { _ in }) async throws {
        var configuration = SyncConfiguration()
        configuration.retry = RetryPolicy(maxAttempts: 1)
        configuration.trustedKeys = [key.publicKey]
        configure(&configuration)
        let base = server.url.appendingPathComponent(prefix)
        let store = BundleStore(root: device.path("store"), liveLink: device.path("live"))
        switch mode {
        case .bundle:
            configuration.expectedIdentity = "App.freshair"
            try await BundleSync(
                remote: base.appendingPathComponent("App.freshair/"),
                store: store,
                configuration: configuration
            ).run()
        case .package:
            try await PackageUpdater(
                remote: base.appendingPathComponent("pkg/content.tgz"),
                store: store,
                configuration: configuration
            ).update()
        case .repository:
            try await Repository(
                source: base,
                id: "repo",
                directory: device.path("bundles"),
                configuration: configuration
            ).update()
        }
    }

    /// What the device shows of `message.txt`, or `nil` before anything is installed.
    var live: String? {
        (mode == .repository ? device.path("bundles/msg/message.txt") : device.path("live/message.txt")).text
    }

    /// The published files as they are now, to serve again later (a replay).
    func snapshot() throws -> URL {
        let copy = source.path("snapshot-\(UUID().uuidString.prefix(6))")
        try FileManager.default.copyItem(at: publishedFolder, to: copy)
        return copy
    }

    func restore(_ snapshot: URL) throws {
        try FileManager.default.removeItem(at: publishedFolder)
        try FileManager.default.copyItem(at: snapshot, to: publishedFolder)
        try touchAll(publishedFolder)
    }

    /// The published content file a hostile server would swap: the bundle's changed file, the
    /// package, the newest repository archive.
    var contentFile: URL {
        switch mode {
        case .bundle: publishedFolder.appendingPathComponent("message.txt")
        case .package: publishedFolder.appendingPathComponent("content.tgz")
        case .repository:
            publishedFolder.appendingPathComponent(
                (try? FileManager.default.contentsOfDirectory(atPath: publishedFolder.path))?.filter {
                    $0.hasSuffix(".tar.gz")
                }.sorted().last ?? ""
            )
        }
    }
}

private final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 1
    func next() -> Int {
        lock.withLock {
            value += 1
            return value
        }
    }
}

/// TUF's attacks on signed content, each run against bundles, packages and repositories on
/// nginx: refused with a clear error, and the version installed before stays live.
@Suite("Attack matrix: every signed delivery mode")
struct AttackMatrixTests {
    let key = SigningKey.generate()

    func manifestProblem(_ work: () async throws -> Void) async -> ManifestError.Problem? {
        do { try await work() } catch {
            return (error as? FreshAirError)?.manifestError?.problem
        }
        return nil
    }

    @Test(
        "Replay: the genuine older release, served again after a newer one, is refused",
        arguments: SignedDeployment.Mode.allCases
    )
    func replay(mode: SignedDeployment.Mode) async throws {
        try await PublishedFolder.with(.nginx) { server in
            let deployment = try SignedDeployment(mode, on: server, key: key)
            try await deployment.publish("v1")
            try await deployment.update()
            let old = try deployment.snapshot()
            try await deployment.publish("v2")
            try await deployment.update()
            #expect(deployment.live == "v2")
            try deployment.restore(old)
            let problem = await manifestProblem { try await deployment.update() }
            guard case .olderSequence(_, 1) = problem else {
                Issue.record("\(String(describing: problem))")
                return
            }
            #expect(deployment.live == "v2")
        }
    }

    @Test(
        "Rollback through another URL: a mirror serving the older signed release is refused; the current one is taken",
        arguments: SignedDeployment.Mode.allCases
    )
    func rollbackThroughAnotherURL(mode: SignedDeployment.Mode) async throws {
        try await PublishedFolder.with(.nginx) { server in
            let deployment = try SignedDeployment(mode, on: server, key: key)
            try await deployment.publish("v1")
            let old = try deployment.snapshot()
            try await deployment.publish("v2")
            try await deployment.update()
            #expect(deployment.live == "v2")
            // The same signed content at another URL (a mirror, another host name or port):
            // the floor follows the identity it is signed for, not the URL.
            let mirror = server.root.appendingPathComponent("mirror")
                .appendingPathComponent(deployment.publishedFolder.lastPathComponent)
            try FileManager.default.createDirectory(
                at: mirror.deletingLastPathComponent(),
                withIntermediateDirectories: true
            )
            try FileManager.default.copyItem(at: old, to: mirror)
            try deployment.touchAll(mirror)
            let problem = await manifestProblem { try await deployment.update(through: "mirror/") }
            guard case .olderSequence(_, 1) = problem else {
                Issue.record("\(mode): \(String(describing: problem))")
                return
            }
            #expect(deployment.live == "v2")
            // A mirror holding the current release is as good as the primary.
            try FileManager.default.removeItem(at: mirror)
            try FileManager.default.copyItem(at: deployment.publishedFolder, to: mirror)
            try deployment.touchAll(mirror)
            try await deployment.update(through: "mirror/")
            #expect(deployment.live == "v2")
        }
    }

    @Test("Freeze: an expired release is refused, even on a fresh install", arguments: SignedDeployment.Mode.allCases)
    func freeze(mode: SignedDeployment.Mode) async throws {
        try await PublishedFolder.with(.nginx) { server in
            let deployment = try SignedDeployment(mode, on: server, key: key)
            try await deployment.publish("short-lived", options: .init(validity: .seconds(1)))
            // Five seconds on by the device's clock, not a real wait.
            let problem = await manifestProblem {
                try await deployment.update {
                    $0.clockSkewTolerance = .zero
                    $0.environment.now = { Date().addingTimeInterval(5) }
                }
            }
            guard case .expired = problem else {
                Issue.record("\(String(describing: problem))")
                return
            }
            #expect(deployment.live == nil)
        }
    }

    @Test("Mix-and-match: a release signed for something else is refused", arguments: SignedDeployment.Mode.allCases)
    func substitution(mode: SignedDeployment.Mode) async throws {
        try await PublishedFolder.with(.nginx) { server in
            let deployment = try SignedDeployment(mode, on: server, key: key)
            try await deployment.publish("v1")
            try await deployment.update()
            try await deployment.publish("someone else's", options: .init(identity: "Other"))
            let problem = await manifestProblem { try await deployment.update() }
            guard case .wrongIdentity(_, "Other") = problem else {
                Issue.record("\(String(describing: problem))")
                return
            }
            #expect(deployment.live == "v1")
        }
    }

    @Test(
        "Arbitrary content and endless data: a body longer than signed is refused",
        arguments: SignedDeployment.Mode.allCases
    )
    func longerThanSigned(mode: SignedDeployment.Mode) async throws {
        try await PublishedFolder.with(.nginx) { server in
            let deployment = try SignedDeployment(mode, on: server, key: key)
            try await deployment.publish("v1")
            try await deployment.update()
            try await deployment.publish("v2")
            let swapped = deployment.contentFile
            try Data(repeating: 0x41, count: 4 << 20).write(to: swapped)
            try deployment.touchAll(deployment.publishedFolder)
            do {
                try await deployment.update()
                Issue.record("a body longer than signed was installed")
            } catch let error as FreshAirError where error.code == .declaredSizeMismatch {
                // Refused on its Content-Length, before a byte of the body is read.
                #expect((error.receivedSize ?? 0) > (error.expectedSize ?? .max))
            }
            #expect(deployment.live == "v1")
        }
    }

    @Test(
        "Slow retrieval: a dribbled response is abandoned and the store stays usable",
        arguments: SignedDeployment.Mode.allCases
    )
    func slowRetrieval(mode: SignedDeployment.Mode) async throws {
        try await PublishedFolder.with(.nginx) { server in
            let deployment = try SignedDeployment(mode, on: server, key: key)
            // Incompressible, so that waiting the content out at 100 bytes/s would take over
            // half an hour in every mode (a small package would arrive whole within seconds).
            let message = SeededBytes.random(196_608).base64EncodedString()
            try await deployment.publish(message)
            let started = ContinuousClock.now
            do {
                try await deployment.update(through: "dribble/") {
                    $0.minimumThroughput = ThroughputFloor(bytesPerSecond: 4096, window: .seconds(1))
                }
                Issue.record("a dribbled response was waited for")
            } catch let failure as FreshAirError where failure.code == .transport {
                let error = try #require(failure.transportError)
                #expect(error.kind == .timeout && error.detail.contains("below the floor"), "\(error)")
            }
            // Abandoned within seconds (a minute allows for a loaded machine), not waited out.
            #expect(ContinuousClock.now - started < .seconds(60))
            try await deployment.update()
            #expect(deployment.live == message)
        }
    }
}
