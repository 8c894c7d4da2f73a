import BreezeKit
import Foundation
import FreshAir
import TestSupport
import Testing

@Suite("Failures are clear and never cost the live version")
struct FailureTests {
    /// Syncs the example into a client, then points it at `path` on the same server.
    func clientWithLiveContent(_ server: PublishedFolder, thenSyncing path: String) async throws -> ExampleClient {
        var client = try ExampleClient(published: server)
        try await client.sync.run()
        client.sync = BundleSync(
            remote: server.url.appendingPathComponent(path),
            store: client.sync.store,
            environment: client.sync.environment,
            configuration: client.sync.configuration
        )
        return client
    }

    @Test("404 names the status and what to check", arguments: ServerKind.allCases)
    func notFound(kind: ServerKind) async throws {
        try await PublishedFolder.with(kind) { server in
            try ExampleBundle.write(in: server.root)
            let client = try await clientWithLiveContent(server, thenSyncing: "Missing.freshair/")
            await #expect {
                try await client.sync.run()
            } throws: { error in
                guard let failure = error as? FreshAirError, failure.status == 404, let url = failure.url else {
                    return false
                }
                return url.path.hasSuffix("Missing.freshair/manifest.json") && "\(error)".contains("Check the URL")
            }
            #expect(client.liveFiles().contains("Embed1.freshair/bar.md"))
        }
    }

    @Test("A root manifest older than the installed one, or expired, is refused; the live version stays")
    func antiRollbackAndExpiry() async throws {
        try await PublishedFolder.with(.nginx) { server in
            let bundle = server.root.appendingPathComponent("Seq.freshair")
            try FileManager.default.createDirectory(at: bundle, withIntermediateDirectories: true)
            var published = 0
            func publish(sequence: Int, text: String, expires: String? = nil) throws {
                try Data(text.utf8).write(to: bundle.appendingPathComponent("a.md"))
                let digest = ContentHash.of(Array(text.utf8), using: .sha256).hex
                let expiry = expires.map { #", "expires": "\#($0)""# } ?? ""
                let manifest = bundle.appendingPathComponent("manifest.json")
                try Data(
                    #"{"format": 2, "sequence": \#(sequence)\#(expiry), "files": [{"filename": "a.md", "sha": "\#(digest)"}]}"#
                        .utf8
                )
                .write(to: manifest)
                // Each publication gets a later mtime, so the server's validators change.
                published += 1
                try FileManager.default.setAttributes(
                    [.modificationDate: Date().addingTimeInterval(Double(published) * 10)],
                    ofItemAtPath: manifest.path
                )
            }
            let live = { (client: ExampleClient) in
                try? String(contentsOf: client.live.appendingPathComponent("a.md"), encoding: .utf8)
            }
            try publish(sequence: 5, text: "v5")
            let client = try ExampleClient(published: server, path: "Seq.freshair")
            try await client.sync.run()
            #expect(live(client) == "v5")

            try publish(sequence: 4, text: "v4")  // a stale copy comes back
            await #expect {
                try await client.sync.run()
            } throws: { error in
                guard let manifestError = (error as? FreshAirError)?.manifestError,
                    case .olderSequence(installed: 5, offered: 4) = manifestError.problem
                else { return false }
                return "\(error)".contains("publish with a sequence above 5")
            }
            #expect(live(client) == "v5")

            try publish(sequence: 6, text: "v6")
            #expect(try await client.sync.run().outcome == .updated)
            #expect(live(client) == "v6")

            try publish(sequence: 7, text: "v7", expires: "2020-01-01T00:00:00Z")
            await #expect {
                try await client.sync.run()
            } throws: { error in
                guard let manifestError = (error as? FreshAirError)?.manifestError,
                    case .expired = manifestError.problem
                else { return false }
                return "\(error)".contains("expired at 2020-01-01")
            }
            #expect(live(client) == "v6")
        }
    }

    @Test("403 from a file the web server cannot read explains why")
    func forbidden() async throws {
        try await PublishedFolder.with(.nginx) { server in
            let bundle = try ExampleBundle.write(in: server.root)
            let client = try ExampleClient(published: server)
            // nginx's workers run as an unprivileged user: a file only its owner may read is refused.
            try FileManager.default.setAttributes(
                [.posixPermissions: 0o600],
                ofItemAtPath: bundle.appendingPathComponent("Embed1.freshair/bar.md").path
            )
            if getuid() != 0 {
                try FileManager.default.setAttributes(
                    [.posixPermissions: 0o000],
                    ofItemAtPath: bundle.appendingPathComponent("Embed1.freshair/bar.md").path
                )
            }
            await #expect {
                try await client.sync.run()
            } throws: { error in
                guard (error as? FreshAirError)?.status == 403 else { return false }
                return "\(error)".contains("not readable by the web server's account")
            }
            #expect(try client.sync.store.liveRecord() == nil)
            #expect(!FileManager.default.fileExists(atPath: client.live.path))
        }
    }

    @Test("500 is retried, then reported")
    func serverError() async throws {
        try await PublishedFolder.with(.nginx) { server in
            try ExampleBundle.write(in: server.root)
            let client = try await clientWithLiveContent(server, thenSyncing: "server-error/App.freshair/")
            let before = server.nginxRequests().count
            await #expect {
                try await client.sync.run()
            } throws: { error in
                guard (error as? FreshAirError)?.status == 500 else { return false }
                return "\(error)".contains("retried")
            }
            // ExampleClient allows two attempts.
            #expect(server.nginxRequests().dropFirst(before).map(\.status) == [500, 500])
            #expect(client.liveFiles().contains("Embed1.freshair/foo.md"))
        }
    }

    @Test("503 with Retry-After waits as asked before retrying")
    func retryAfter() async throws {
        try await PublishedFolder.with(.nginx) { server in
            let client = try ExampleClient(published: server, path: "busy/App.freshair")
            let started = ContinuousClock.now
            await #expect {
                try await client.sync.run()
            } throws: { error in
                guard (error as? FreshAirError)?.status == 503 else { return false }
                return true
            }
            #expect(server.nginxRequests().map(\.status) == [503, 503])
            // The policy's own back-off is 10 ms here; one second can only come from Retry-After.
            #expect(ContinuousClock.now - started >= .milliseconds(950))
        }
    }

    @Test("A connection refused is a transport error")
    func connectionRefused() async throws {
        let local = try TemporaryFolder("client")
        let offline = try LoopbackSocket(listening: false)
        defer { offline.close() }
        let sync = BundleSync(
            remote: offline.url("App.freshair/"),
            store: BundleStore(root: local.path("store")),
            configuration: {
                var configuration = SyncConfiguration()
                configuration.retry = .none
                return configuration
            }()
        )
        await #expect {
            try await sync.run()
        } throws: { error in
            guard let transport = (error as? FreshAirError)?.transportError else { return false }
            return transport.kind == .connect
        }
    }

    @Test(
        "Hostile paths in a manifest are refused before anything is written",
        arguments: ["../escape.md", "/etc/escape.md", "a/../../escape.md"]
    )
    func hostilePaths(path: String) async throws {
        try await PublishedFolder.with(.breezeServe) { server in
            let bundle = server.root.appendingPathComponent("Hostile.freshair")
            try PublishedText.write(#"[{"filename": "\#(path)"}]"#, to: bundle.appendingPathComponent("manifest.json"))
            let client = try ExampleClient(published: server, path: "Hostile.freshair")
            await #expect {
                try await client.sync.run()
            } throws: { error in
                guard let manifestError = (error as? FreshAirError)?.manifestError,
                    case .entry(0, path, .unsafePath) = manifestError.problem
                else { return false }
                return true
            }
            #expect(!FileManager.default.fileExists(atPath: client.local.path("escape.md").path))
            #expect(!FileManager.default.fileExists(atPath: client.live.path))
        }
    }

    @Test("A body larger than the manifest declares is refused on its Content-Length, unread")
    func oversizedBody() async throws {
        try await PublishedFolder.with(.nginx) { server in
            let bundle = server.root.appendingPathComponent("Sized.freshair")
            let payload = Data(repeating: 7, count: 100_000)
            try FileManager.default.createDirectory(at: bundle, withIntermediateDirectories: true)
            try payload.write(to: bundle.appendingPathComponent("blob.bin"))
            let digest = ContentHash.of(payload, using: .sha256).hex
            try PublishedText.write(
                #"{"format": 2, "files": [{"filename": "blob.bin", "sha": "\#(digest)", "size": 1000}]}"#,
                to: bundle.appendingPathComponent("manifest.json")
            )
            let client = try ExampleClient(published: server, path: "Sized.freshair")
            await #expect {
                try await client.sync.run()
            } throws: { error in
                // Refused on its Content-Length, before a byte of the body is read.
                guard let failure = error as? FreshAirError, failure.code == .declaredSizeMismatch,
                    failure.path == "blob.bin",
                    failure.expectedSize == 1000, failure.receivedSize == 100_000
                else {
                    return false
                }
                return "\(error)".contains(
                    "announces 100000 bytes (Content-Length), but 1000 are listed for it; nothing was read"
                )
            }
            #expect(!FileManager.default.fileExists(atPath: client.live.path))
        }
    }

    @Test("A configured cap refuses a file whose size nobody declared")
    func capOnUndeclaredSize() async throws {
        try await PublishedFolder.with(.nginx) { server in
            let bundle = server.root.appendingPathComponent("Big.freshair")
            try FileManager.default.createDirectory(at: bundle, withIntermediateDirectories: true)
            try Data(repeating: 1, count: 300_000).write(to: bundle.appendingPathComponent("big.bin"))
            try PublishedText.write(#"[{"filename": "big.bin"}]"#, to: bundle.appendingPathComponent("manifest.json"))
            var client = try ExampleClient(published: server, path: "Big.freshair")
            client.sync.configuration.maxFileSize = 64_000
            await #expect {
                try await client.sync.run()
            } throws: { error in
                guard let failure = error as? FreshAirError, failure.code == .bodyTooLarge, failure.sizeLimit == 64_000
                else { return false }
                return true
            }
        }
    }

    @Test("A second process's update waits for the lock, then gives up clearly")
    func storeLock() async throws {
        try await PublishedFolder.with(.breezeServe) { server in
            try ExampleBundle.write(in: server.root)
            var client = try ExampleClient(published: server)
            client.sync.store.lockTimeout = .milliseconds(200)
            // Hold the lock from another process, as a second app or breeze would.
            try FileManager.default.createDirectory(at: client.local.path("store"), withIntermediateDirectories: true)
            let holder = Process()
            // The interpreter itself, not a version manager's shim that would outlive a SIGTERM.
            holder.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
            holder.arguments = [
                "-c",
                """
                import fcntl, sys, time
                f = open(sys.argv[1], "w"); fcntl.flock(f, fcntl.LOCK_EX); print("locked", flush=True); time.sleep(60)
                """, client.local.path("store/lock").path,
            ]
            let output = Pipe.unshared()
            holder.standardOutput = output
            try holder.run()
            // SIGKILL: the test runner's children may inherit a mask that blocks SIGTERM.
            defer { kill(holder.processIdentifier, SIGKILL) }
            #expect(output.fileHandleForReading.availableData.starts(with: Data("locked".utf8)))
            await #expect {
                try await client.sync.run()
            } throws: { error in
                guard (error as? FreshAirError)?.code == .storeLocked else { return false }
                return "\(error)".contains("another process is updating")
            }
            kill(holder.processIdentifier, SIGKILL)
            holder.waitUntilExit()
            let summary = try await client.sync.run()
            #expect(summary.outcome == .updated)
        }
    }

    /// A request for `big.bin` answered with `offset` bytes, then silence for `seconds` or until
    /// the test makes the file `release`, then a closed connection. The proxy makes the file
    /// `arrived` as the silence begins: the request has come, and its bytes were sent.
    struct Stall {
        var offset: Int
        var seconds: Int
        var release: URL? = nil
        var arrived: URL? = nil
    }

    /// `Big.freshair` on `server`: one file of `size` bytes, listed without a digest (so only its
    /// bytes can show that two writers mixed them), and a sync of it through a fault proxy
    /// that answers the first requests for `big.bin` with `stalls`, one each, in order.
    /// Returns the file, the proxy (stop it) and the sync.
    func bigBundleThroughProxy(
        on server: PublishedFolder,
        size: Int,
        stalls: [Stall]
    ) throws -> (big: Data, proxy: FaultProxy, client: ExampleClient, sync: BundleSync) {
        let bundle = server.root.appendingPathComponent("Big.freshair")
        try FileManager.default.createDirectory(at: bundle, withIntermediateDirectories: true)
        let big = SeededBytes(seed: 7).bytesOnce(size)
        try big.write(to: bundle.appendingPathComponent("big.bin"))
        try PublishedText.write(#"[{"filename": "big.bin"}]"#, to: bundle.appendingPathComponent("manifest.json"))
        let proxy = try FaultProxy(upstream: server.url)
        // Each rule is used once, in order: the first request for big.bin meets the first.
        try proxy.rules(
            stalls.map {
                var rule: [String: any Sendable] = [
                    "path": "/Big.freshair/big.bin", "fault": "stall", "offset": $0.offset, "seconds": $0.seconds,
                    "times": 1,
                ]
                if let release = $0.release { rule["until"] = release.path }
                if let arrived = $0.arrived { rule["arrived"] = arrived.path }
                return rule
            }
        )
        let client = try ExampleClient(published: server, path: "Big.freshair")
        let sync = BundleSync(
            remote: proxy.url.appendingPathComponent("Big.freshair/"),
            store: client.sync.store,
            environment: client.sync.environment,
            configuration: client.sync.configuration
        )
        return (big, proxy, client, sync)
    }

    /// The owner files of staged folders an update is filling (`staging/N.owner`).
    func stagingLeases(_ staging: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: staging)) ?? []).filter { $0.hasSuffix(".owner") }
    }

    @Test(
        "The lock is let go while a download waits: another process takes it, another update installs, and the first plans again"
    )
    func lockNotHeldDuringDownload() async throws {
        try await PublishedFolder.with(.nginx) { server in
            // The first request for big.bin stalls after 1,000 bytes until the test releases it,
            // once the second update has installed (at most 20 s: under the client's 30 s idle
            // timeout); later requests pass. A fixed 5 s stall let the first update finish first
            // on a loaded CI machine (2026-11-28).
            let release = server.root.appendingPathComponent(".release-big")
            let (big, proxy, client, sync) = try bigBundleThroughProxy(
                on: server,
                size: 400_000,
                stalls: [Stall(offset: 1000, seconds: 20, release: release)]
            )
            defer { proxy.stop() }
            let staging = client.local.path("store/staging").path
            let first = Task { try await sync.run() }
            defer { first.cancel() }

            // The first update is downloading into its leased staged folder: another process
            // takes the store's lock at once (flock(1), without waiting).
            var tookLock = false
            for _ in 0..<400 where !tookLock {
                let leases = stagingLeases(staging)
                if !leases.isEmpty {
                    let lock = client.local.path("store/lock").path
                    let answer = try await shell(
                        "flock -n '\(lock)' true && echo took || echo busy",
                        in: client.local.url
                    )
                    // Taken while the lease still stands: the first update has not finished.
                    tookLock =
                        answer.hasPrefix("took")
                        && leases.allSatisfy { FileManager.default.fileExists(atPath: staging + "/" + $0) }
                }
                if !tookLock { try await Task.sleep(for: .milliseconds(25)) }
            }
            #expect(tookLock, "another process took the store's lock while a download waited")

            // A second update of the same store, meanwhile: it leaves the first's staged folder
            // (1) alone and makes version 2 live.
            let second = try await sync.run()
            try Data().write(to: release)
            #expect(second.outcome == .updated)
            #expect(second.version == 2)

            // The first finds the live version changed under it, plans again against it, and
            // has nothing left to do.
            let summary = try await first.value
            #expect(summary.outcome == .alreadyCurrent)
            #expect(summary.version == 2)
            #expect(try Data(contentsOf: client.live.appendingPathComponent("big.bin")) == big)
            #expect(try FileManager.default.contentsOfDirectory(atPath: staging).isEmpty)
        }
    }

    @Test("Two updates downloading one file at once each write their own partial file: the content stays whole")
    func concurrentDownloadsNeverShareAPartial() async throws {
        try await PublishedFolder.with(.nginx) { server in
            // Both updates are held mid-download at once, the second with more of the file, then
            // the first is let go: it resumes and installs while the second's partial copy waits
            // half written. The test orders them (fixed stalls lost the race on a loaded CI
            // machine, 2026-11-28); each update meets one stall, under the 30 s idle timeout.
            let signals = server.root.appendingPathComponent(".signals")
            try FileManager.default.createDirectory(at: signals, withIntermediateDirectories: true)
            func signal(_ name: String) -> URL { signals.appendingPathComponent(name) }
            let (big, proxy, client, sync) = try bigBundleThroughProxy(
                on: server,
                size: 600_000,
                stalls: [
                    Stall(offset: 1000, seconds: 20, release: signal("release-1"), arrived: signal("arrived-1")),
                    Stall(offset: 300_000, seconds: 20, release: signal("release-2"), arrived: signal("arrived-2")),
                ]
            )
            defer { proxy.stop() }
            func waitFor(_ name: String) async throws {
                for _ in 0..<800 where !FileManager.default.fileExists(atPath: signal(name).path) {
                    try await Task.sleep(for: .milliseconds(25))
                }
                #expect(FileManager.default.fileExists(atPath: signal(name).path), "\(name) within 20 s")
            }
            let first = Task { try await sync.run() }
            try await waitFor("arrived-1")
            let second = Task { try await sync.run() }
            try await waitFor("arrived-2")
            try Data().write(to: signal("release-1"))
            let one = try await first.value
            try Data().write(to: signal("release-2"))
            let two = try await second.value
            #expect(one.outcome == .updated)
            #expect(two.outcome == .alreadyCurrent)
            // Each resumed from its own partial copy: the first from its 1,000 bytes, though the
            // second had written 300,000 of the same file meanwhile.
            let resumed = proxy.answers().filter { $0.path == "/Big.freshair/big.bin" }.compactMap(\.range)
            #expect(resumed.sorted() == ["bytes=1000-", "bytes=300000-"])
            #expect(try Data(contentsOf: client.live.appendingPathComponent("big.bin")) == big)
            #expect(try client.sync.store.verify()?.isIntact == true)
        }
    }
}
