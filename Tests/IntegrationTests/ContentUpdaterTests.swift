import BreezeKit
import Foundation
import FreshAir
import Testing

/// The three delivery modes behind one protocol: the same events, the same summary.
@Suite("One protocol for every delivery mode: events with byte progress, one summary")
struct ContentUpdaterTests {
    /// Everything one run reported, and what it returned.
    struct Run {
        var events: [SyncEvent]
        var summary: SyncSummary

        var progress: [SyncProgress] { events.compactMap { if case .progress(let p) = $0 { p } else { nil } } }
        var downloaded: [String] { events.compactMap { if case .downloaded(let path, _) = $0 { path } else { nil } } }
        var notModified: Bool { events.contains { if case .notModified = $0 { true } else { false } } }
    }

    func run(_ updater: any ContentUpdater) async throws -> Run {
        var events: [SyncEvent] = []
        for try await event in updater.updates() { events.append(event) }
        guard case .finished(let summary)? = events.last else {
            Issue.record("the last event is not .finished: \(events)")
            throw TestSetupError("no summary")
        }
        return Run(events: events, summary: summary)
    }

    /// A bundle, a package and a repository, each with one 2 MB file of random bytes, and
    /// updaters for them installing into `local`.
    func publishAll(
        in server: PublishedFolder,
        to local: TemporaryFolder
    ) async throws -> [(name: String, updater: any ContentUpdater)] {
        let root = server.root
        var configuration = SyncConfiguration()
        configuration.retry = RetryPolicy(maxAttempts: 1)
        try await shell(
            """
            mkdir -p Big.freshair src/data repo-src/cats \\
            && head -c 2097152 /dev/urandom > Big.freshair/blob.bin \\
            && echo '[{"filename": "blob.bin"}]' > Big.freshair/manifest.json \\
            && cp Big.freshair/blob.bin src/data/blob.bin && tar -czf content.tgz -C src . \\
            && cp Big.freshair/blob.bin repo-src/cats/blob.bin
            """,
            in: root
        )
        _ = try await BundleHasher.run(bundle: root.appendingPathComponent("Big.freshair"), check: false, sha256: true)
        try RepositoryPublisher.add(
            folder: root.appendingPathComponent("repo-src/cats"),
            as: "cats",
            to: root.appendingPathComponent("com.example.r")
        )
        let bundle = BundleSync(
            remote: server.url.appendingPathComponent("Big.freshair/"),
            store: BundleStore(root: local.path("bundle"), liveLink: local.path("bundle-live")),
            environment: ConditionEnvironment(),
            configuration: configuration
        )
        let package = PackageUpdater(
            remote: server.url.appendingPathComponent("content.tgz"),
            store: BundleStore(root: local.path("package"), liveLink: local.path("package-live")),
            configuration: configuration
        )
        let repository = Repository(
            source: server.url,
            id: "com.example.r",
            directory: local.path("repository"),
            configuration: configuration
        )
        return [("bundle", bundle), ("package", package), ("repository", repository)]
    }

    @Test("A cold run: checking first, byte progress up to what was downloaded, each file, the summary last")
    func coldRun() async throws {
        try await PublishedFolder.with(.nginx) { server in
            let local = try TemporaryFolder("updaters")
            for (name, updater) in try await publishAll(in: server, to: local) {
                let cold = try await run(updater)
                guard case .checking? = cold.events.first else {
                    Issue.record("\(name): the first event is not .checking")
                    continue
                }
                #expect(cold.summary.outcome == .updated, "\(name)")
                #expect(cold.summary.bytesDownloaded >= 2 << 20, "\(name): \(cold.summary.oneLine)")
                #expect(cold.progress.last?.bytesReceived ?? 0 >= 2 << 20, "\(name): \(cold.progress)")
                #expect(!cold.downloaded.isEmpty, "\(name)")
                #expect(cold.summary.filesDownloaded == cold.summary.downloaded.count, "\(name)")
                #expect(!cold.notModified, "\(name)")

                let again = try await run(updater)
                #expect(again.summary.outcome == .alreadyCurrent, "\(name): \(again.summary.oneLine)")
                #expect(again.summary.notModified && again.notModified, "\(name)")
                #expect(again.summary.bytesDownloaded == 0 && again.progress.isEmpty, "\(name)")
            }
        }
    }

    @Test("A schedule runs any of them through the protocol")
    func scheduled() async throws {
        try await PublishedFolder.with(.nginx) { server in
            let local = try TemporaryFolder("updaters")
            for (name, updater) in try await publishAll(in: server, to: local) {
                let schedule = SyncSchedule(interval: .milliseconds(10), jitter: 0)
                var outcomes: [SyncSummary.Outcome] = []
                for await result in schedule.runs(updater) {
                    outcomes.append(try result.get().outcome)
                    if outcomes.count == 2 { break }
                }
                #expect(outcomes == [.updated, .alreadyCurrent], "\(name)")
            }
        }
    }
}
