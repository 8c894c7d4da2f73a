import BreezeKit
import Foundation
import FreshAir
import Synchronization
import Testing

/// Rollouts, channels, confirm-or-roll-back and periodic checks, against nginx.
@Suite("Rollouts, confirm-or-roll-back and scheduled checks")
struct LifecycleTests {
    /// Publishes `files` (path → text, condition) as a hashed bundle at `Rollout.freshair`.
    func publish(
        _ files: [(path: String, text: String, condition: String?)],
        in server: PublishedFolder
    ) async throws -> URL {
        let bundle = server.root.appendingPathComponent("Rollout.freshair")
        try FileManager.default.createDirectory(at: bundle, withIntermediateDirectories: true)
        var entries: [String] = []
        for file in files {
            try PublishedText.write(file.text, to: bundle.appendingPathComponent(file.path))
            entries.append(
                #"{"filename": "\#(file.path)""# + (file.condition.map { #", "condition": "\#($0)""# } ?? "") + "}"
            )
        }
        try PublishedText.write(
            "[\n" + entries.joined(separator: ",\n") + "\n]\n",
            to: bundle.appendingPathComponent("manifest.json")
        )
        _ = try await BundleHasher.run(bundle: bundle)
        // As an upload would: a later modification time, so the server's validators change
        // even when the manifest keeps its size.
        let manifest = bundle.appendingPathComponent("manifest.json")
        try PublishedText.write(String(contentsOf: manifest, encoding: .utf8), to: manifest)
        return bundle
    }

    func client(
        of server: PublishedFolder,
        installID: String? = nil,
        _ configure: (inout ConditionEnvironment) -> Void = { _ in }
    ) throws -> (TemporaryFolder, BundleSync) {
        let local = try TemporaryFolder("device")
        let store = BundleStore(root: local.path("store"), liveLink: local.path("live"))
        if let installID {
            try FileManager.default.createDirectory(at: store.root, withIntermediateDirectories: true)
            try Data(installID.utf8).write(to: store.root.appendingPathComponent("install-id"))
        }
        var environment = ConditionEnvironment(["platform": "iOS"])
        configure(&environment)
        return (
            local,
            BundleSync(
                remote: server.url.appendingPathComponent("Rollout.freshair/"),
                store: store,
                environment: environment
            )
        )
    }

    @Test("A stable per-install bucket reaches the right share of installs; channels are plain keys")
    func rolloutAndChannel() async throws {
        try await PublishedFolder.with(.nginx) { server in
            _ = try await publish(
                [
                    ("all.md", "everyone\n", nil), ("early.md", "first half\n", "rolloutBucket < 50"),
                    ("beta.md", "testers\n", "channel == 'beta'"),
                ],
                in: server
            )
            let bundleURL = server.url.appendingPathComponent("Rollout.freshair/").absoluteString
            var reached = 0
            for index in 0..<40 {
                let (local, sync) = try client(of: server, installID: "install-\(index)")
                try await sync.run()
                let bucket = RolloutBucket.of(installID: "install-\(index)", bundle: bundleURL)
                let hasEarly = FileManager.default.fileExists(atPath: local.path("live/early.md").path)
                #expect(hasEarly == (bucket < 50), "install-\(index) is in bucket \(bucket)")
                #expect(!FileManager.default.fileExists(atPath: local.path("live/beta.md").path))
                if hasEarly { reached += 1 }
                // The bucket is the install's for good: the next check changes nothing.
                #expect(try await sync.run().outcome == .alreadyCurrent)
            }
            // Each install is checked against its own bucket above; the share over many installs is
            // RolloutBucketTests' (the URL here has a random port, so 40 buckets vary by run).
            #expect((1...39).contains(reached), "\(reached) of 40 installs in the first half")

            // An install ID made by the store itself is kept and reused.
            let (fresh, freshSync) = try client(of: server)
            try await freshSync.run()
            let made = try freshSync.store.installID()
            let again = try freshSync.store.installID()
            #expect(UUID(uuidString: made) != nil && again == made)
            withExtendedLifetime(fresh) {}

            // The app's own value wins; a channel is a key like any other.
            let (pinned, pinnedSync) = try client(of: server) {
                $0[RolloutBucket.key] = 99
                $0["channel"] = "beta"
            }
            try await pinnedSync.run()
            #expect(!FileManager.default.fileExists(atPath: pinned.path("live/early.md").path))
            #expect(pinned.path("live/beta.md").text == "testers\n")
        }
    }

    @Test("An update the app never confirms is rolled back at the next launch, and not installed again")
    func confirmOrRollBack() async throws {
        try await PublishedFolder.with(.nginx) { server in
            _ = try await publish([("content.md", "v1\n", nil)], in: server)
            let (local, sync) = try client(of: server)
            let live = { local.path("live/content.md").text }
            try await sync.run()
            try await sync.store.confirmLive()

            _ = try await publish([("content.md", "v2, crashes the app\n", nil)], in: server)
            #expect(try await sync.run().outcome == .updated)
            #expect(
                try await sync.store.rollBackIfUnconfirmed() == nil,
                "the first launch of v2 is counted, not judged"
            )
            // The system wakes the app for background work, twice: no user saw v2, nothing counts.
            for _ in 0..<2 { #expect(try await sync.store.rollBackIfUnconfirmed(inForeground: false) == nil) }
            #expect(live() == "v2, crashes the app\n")
            #expect(live() == "v2, crashes the app\n")
            // The app died before confirming; the next launch goes back to v1.
            let restored = try await sync.store.rollBackIfUnconfirmed()
            #expect(restored != nil && live() == "v1\n")
            // The server still has v2: it is not installed again.
            let check = try await sync.run()
            #expect(check.outcome == .keptAfterRollback && live() == "v1\n")
            #expect(try await sync.store.rollBackIfUnconfirmed() == nil)

            // A fix is published: it installs, is confirmed, and stays (a damaged list of
            // rejected versions does not stand in the way).
            _ = try await publish([("content.md", "v3\n", nil)], in: server)
            try Data("{not json".utf8).write(to: sync.store.root.appendingPathComponent("rejected.json"))
            #expect(try await sync.run().outcome == .updated)
            try await sync.store.confirmLive()
            #expect(try await sync.store.rollBackIfUnconfirmed() == nil)
            #expect(try await sync.store.rollBackIfUnconfirmed() == nil)
            #expect(live() == "v3\n")
            // A check that only records a new environment keeps the confirmation.
            var moved = sync
            moved.environment["channel"] = "beta"
            #expect(try await moved.run().outcome == .alreadyCurrent)
            #expect(try sync.store.liveRecord()?.confirmed == true)
        }
    }

    @Test("Scheduled checks: spread by jitter, skipped when the policy says no, one request each when nothing changed")
    func schedule() async throws {
        let schedule = SyncSchedule(interval: .milliseconds(40), jitter: 0.5)
        let waits = (0..<1000).map { _ in schedule.nextWait() }
        #expect(waits.allSatisfy { $0 >= .milliseconds(20) && $0 <= .milliseconds(60) })
        #expect(Set(waits).count > 100, "waits vary")

        try await PublishedFolder.with(.nginx) { server in
            _ = try await publish([("content.md", "v1\n", nil)], in: server)
            let (local, sync) = try client(of: server)
            let asked = Atomic<Int>(0)
            // Refuses the first two checks (off Wi-Fi, say), then allows.
            let gated = SyncSchedule(interval: .milliseconds(20), jitter: 0.5) {
                asked.add(1, ordering: .relaxed).newValue > 2
            }
            let before = server.requests().count
            var outcomes: [SyncSummary.Outcome] = []
            for await result in gated.runs({ try await sync.run() }) {
                outcomes.append(try result.get().outcome)
                if outcomes.count == 3 { break }
            }
            #expect(outcomes == [.updated, .alreadyCurrent, .alreadyCurrent])
            #expect(asked.load(ordering: .relaxed) == 5)
            #expect(
                server.requests().count - before == 4,
                "the first sync fetches manifest and file; each later check is one 304"
            )
            #expect(local.path("live/content.md").text == "v1\n")
        }
    }
}
