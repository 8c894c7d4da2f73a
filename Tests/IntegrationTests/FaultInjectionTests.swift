import BreezeKit
import Foundation
import FreshAir
import FreshAirAsyncHTTPClient
import TestSupport
import Testing

/// Every fault `scripts/fault-proxy` injects, between a device and nginx: each ends in a clean
/// retry with the right content, or a clear error with the last good version still live and
/// intact; never a corrupt activation.
@Suite("Under fire: a fault-injecting proxy between the device and nginx")
struct FaultInjectionTests {
    /// What a case must end in.
    enum Expected: Sendable, CustomStringConvertible {
        /// The new version is live and intact; `wasted` bounds the bytes thrown away.
        case succeeds(wasted: ClosedRange<Int64>)
        /// The sync fails with a message containing this; version 1 stays live and intact.
        case fails(String)

        var description: String {
            switch self {
            case .succeeds(let wasted): "succeeds, wasting \(wasted)"
            case .fails(let text): "fails: \(text)"
            }
        }
    }

    struct Case: Sendable, CustomStringConvertible {
        var name: String
        var rules: [[String: any Sendable]]
        var expected: Expected
        var description: String { name }
    }

    static let big = "/Big.freshair/big.bin"
    static let bigSize = 600_000
    /// Below the size from which a download keeps a side file: written straight into staging.
    static let midSize = 200_000

    static let bundleCases: [Case] = [
        Case(
            name: "reset mid-body: resumed with Range",
            rules: [["path": big, "fault": "reset", "offset": 300_000, "times": 1]],
            expected: .succeeds(wasted: 0...0)
        ),
        Case(
            name: "body shorter than Content-Length, clean close: resumed",
            rules: [["path": big, "fault": "short", "offset": 300_000, "times": 1]],
            expected: .succeeds(wasted: 0...0)
        ),
        Case(
            name: "Content-Length larger than the body",
            rules: [["path": "/Big.freshair/small.txt", "fault": "length-larger", "times": 1]],
            expected: .fails("announces")
        ),
        Case(
            name: "Content-Length smaller than the body",
            rules: [["path": "/Big.freshair/small.txt", "fault": "length-smaller", "by": 3, "times": 1]],
            expected: .fails("announces")
        ),
        // A reset drops what the client had not read yet: what was kept (and then thrown away
        // when the resumption failed) is at most what was sent before it.
        Case(
            name: "206 with a wrong Content-Range: started over",
            rules: [
                ["path": big, "fault": "reset", "offset": 300_000, "times": 1],
                ["path": big, "fault": "wrong-content-range", "times": 1],
            ],
            expected: .succeeds(wasted: 1...300_000)
        ),
        Case(
            name: "200 answering a Range request: the whole body replaces the partial",
            rules: [
                ["path": big, "fault": "reset", "offset": 300_000, "times": 1],
                ["path": big, "fault": "ignore-range", "times": 1],
            ],
            expected: .succeeds(wasted: 1...300_000)
        ),
        Case(
            name: "ETag changed between a request and its resumption",
            rules: [
                ["path": big, "fault": "etag-change", "offset": 300_000, "times": 1],
                ["path": big, "fault": "etag-change", "times": 1],
            ],
            expected: .succeeds(wasted: 1...300_000)
        ),
        Case(
            name: "stalled body: abandoned at the idle timeout, then resumed",
            rules: [["path": big, "fault": "stall", "offset": 300_000, "seconds": 6, "times": 1]],
            expected: .succeeds(wasted: 0...0)
        ),
        Case(
            name: "a burst of 503 with Retry-After",
            rules: [
                ["path": "/Big.freshair/manifest.json", "fault": "status", "status": 503, "retry_after": 0, "times": 2]
            ],
            expected: .succeeds(wasted: 0...0)
        ),
        Case(
            name: "a redirect loop",
            rules: [["path": "/Big.freshair/manifest.json", "fault": "redirect-loop"]],
            expected: .fails("redirects in a loop")
        ),
        // The encoded length differs from the listed size: refused before a byte of it is read.
        Case(
            name: "gzip Content-Encoding nobody asked for: refused, retried plain",
            rules: [["path": big, "fault": "gzip", "times": 1]],
            expected: .succeeds(wasted: 0...0)
        ),
        Case(
            name: "gzip Content-Encoding, cut: never resumed against the plain file",
            rules: [["path": big, "fault": "gzip", "offset": 200_000, "times": 1]],
            expected: .succeeds(wasted: 0...0)
        ),
        Case(
            name: "an HTML error page with status 200",
            rules: [["path": big, "fault": "html-200"]],
            expected: .fails("announces")
        ),
    ]

    /// A bundle with a 600 KB file (resumable) and a small one, version 1 or 2.
    static func publishBundle(in root: URL, version: Int) throws {
        let folder = root.appendingPathComponent("Big.freshair")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let files = [
            "big.bin": SeededBytes(seed: UInt64(version)).bytesOnce(bigSize),
            "mid.bin": SeededBytes(seed: UInt64(version) + 100).bytesOnce(midSize),
            "small.txt": Data("small, version \(version)\n".utf8),
        ]
        var entries: [String] = []
        for (name, data) in files.sorted(by: { $0.key < $1.key }) {
            try data.write(to: folder.appendingPathComponent(name))
            entries.append(
                #"{"filename": "\#(name)", "sha": "\#(ContentHash.of(data, using: .sha256).hex)", "size": \#(data.count)}"#
            )
        }
        try Data(#"{"format": 2, "files": [\#(entries.joined(separator: ", "))]}"#.utf8).write(
            to: folder.appendingPathComponent("manifest.json")
        )
        // nginx derives validators from the second of the mtime: move them on.
        for name in ["big.bin", "mid.bin", "small.txt", "manifest.json"] {
            try FileManager.default.setAttributes(
                [.modificationDate: Date().addingTimeInterval(Double(version * 10))],
                ofItemAtPath: folder.appendingPathComponent(name).path
            )
        }
    }

    /// `content.tgz` (made by GNU tar) holding `message.txt`.
    static func publishPackage(_ message: String, in root: URL) async throws {
        try FileManager.default.createDirectory(
            at: root.appendingPathComponent("src"),
            withIntermediateDirectories: true
        )
        try Data(message.utf8).write(to: root.appendingPathComponent("src/message.txt"))
        try await shell("tar -czf content.tgz -C src .", in: root)
    }

    func client(
        _ url: URL,
        in local: TemporaryFolder,
        transport: AsyncHTTPClientTransport,
        attempts: Int = 4
    ) -> BundleSync {
        var configuration = SyncConfiguration()
        configuration.retry = RetryPolicy(maxAttempts: attempts, baseDelay: .milliseconds(10))
        return BundleSync(
            remote: url.appendingPathComponent("Big.freshair/"),
            store: BundleStore(root: local.path("store"), liveLink: local.path("live")),
            environment: ConditionEnvironment(),
            transport: transport,
            configuration: configuration
        )
    }

    @Test("Bundles", arguments: bundleCases)
    func bundle(_ fault: Case) async throws {
        try await PublishedFolder.with(.nginx) { server in
            try Self.publishBundle(in: server.root, version: 1)
            let proxy = try FaultProxy(upstream: server.url)
            defer { proxy.stop() }
            let transport = AsyncHTTPClientTransport(idleTimeout: .seconds(2))
            let local = try TemporaryFolder("fault-bundle")
            let sync = client(proxy.url, in: local, transport: transport)
            try await sync.run()

            try Self.publishBundle(in: server.root, version: 2)
            try proxy.rules(fault.rules)
            let result: Result<SyncSummary, any Error>
            do { result = .success(try await sync.run()) } catch { result = .failure(error) }
            try await transport.shutdown()
            let report = try #require(try sync.store.verify())
            #expect(report.isIntact, "\(report.oneLine)")
            let liveVersion: UInt64
            switch fault.expected {
            case .succeeds(let wasted):
                let summary = try result.get()
                #expect(summary.outcome == .updated)
                #expect(wasted.contains(summary.bytesWasted), "wasted \(summary.bytesWasted)")
                liveVersion = 2
            case .fails(let text):
                #expect(throws: FreshAirError.self) { try result.get() }
                if case .failure(let error) = result { #expect("\(error)".contains(text), "\(error)") }
                liveVersion = 1
            }
            #expect(
                try Data(contentsOf: local.path("live/big.bin"))
                    == SeededBytes(seed: liveVersion).bytesOnce(Self.bigSize)
            )
        }
    }

    /// A file cut short after `cut` bytes: its path, size and the seed of its version-2 bytes.
    struct CutFile: Sendable, CustomStringConvertible {
        var name: String
        var size: Int
        var cut: Int
        var seed: UInt64
        var description: String { "\(name), \(size) bytes, cut at \(cut)" }
    }

    /// A large file resumes from its side file; one written straight into staging, from what
    /// the attempt before kept in memory.
    @Test(
        "A body cut short is resumed with Range from where it stopped: no byte is fetched twice",
        arguments: [
            CutFile(name: "big.bin", size: bigSize, cut: 300_000, seed: 2),
            CutFile(name: "mid.bin", size: midSize, cut: 100_000, seed: 102),
        ]
    )
    func resumptionIsRanged(_ file: CutFile) async throws {
        try await PublishedFolder.with(.nginx) { server in
            try Self.publishBundle(in: server.root, version: 2)
            let proxy = try FaultProxy(upstream: server.url)
            defer { proxy.stop() }
            let path = "/Big.freshair/\(file.name)"
            try proxy.rules([["path": path, "fault": "short", "offset": file.cut, "times": 1]])
            let transport = AsyncHTTPClientTransport()
            let local = try TemporaryFolder("fault-range")
            let summary = try await client(proxy.url, in: local, transport: transport).run()
            try await transport.shutdown()
            #expect(summary.bytesWasted == 0)
            // The client may not have read every byte before the close reached it: it resumes
            // from what it wrote, and asks for exactly the rest.
            let answers = proxy.answers().filter { $0.path == path }
            let start = try #require(answers.last?.range.flatMap { Int($0.dropFirst("bytes=".count).dropLast()) })
            #expect(answers.count == 2 && answers[0].range == nil && answers[0].sent == file.cut)
            #expect(start > 0 && start <= file.cut && answers[1].sent == file.size - start)
            #expect(
                try Data(contentsOf: local.path("live/\(file.name)"))
                    == SeededBytes(seed: file.seed).bytesOnce(file.size)
            )
        }
    }

    @Test("An encoded, cut package: the next run starts over instead of resuming against the plain file")
    func encodedPartialIsNeverResumed() async throws {
        try await PublishedFolder.with(.nginx) { server in
            try FileManager.default.createDirectory(
                at: server.root.appendingPathComponent("src"),
                withIntermediateDirectories: true
            )
            try SeededBytes(seed: 9).bytesOnce(Self.bigSize).write(
                to: server.root.appendingPathComponent("src/data.bin")
            )
            try await shell("tar -cf content.tar -C src .", in: server.root)
            let proxy = try FaultProxy(upstream: server.url)
            defer { proxy.stop() }
            try proxy.rules([["path": "/content.tar", "fault": "gzip", "offset": 100_000, "times": 1]])
            let local = try TemporaryFolder("fault-encoded")
            let remote = proxy.url.appendingPathComponent("content.tar").absoluteString

            // Unpacked while it streams, the encoded bytes fail as a tar: the encoding is named.
            let cut = try await BreezeBinary.run(["sync", remote, local.path("Content").path, "--attempts", "1"])
            #expect(
                cut.status == 65
                    && cut.error.contains("came with Content-Encoding: gzip, which FreshAir does not ask for"),
                "\(cut.error)"
            )
            #expect(!FileManager.default.fileExists(atPath: local.path("Content").path))
            let next = try await BreezeBinary.run(["sync", remote, local.path("Content").path, "--attempts", "1"])
            #expect(next.status == 0, "\(next.error)")
            #expect(
                try Data(contentsOf: local.path("Content/data.bin")) == SeededBytes(seed: 9).bytesOnce(Self.bigSize)
            )
            // The second run asked for the whole file: an encoded partial is never a prefix of the plain one.
            #expect(proxy.answers().filter { $0.path == "/content.tar" }.map(\.range) == [nil, nil])

            // Encoded whole: refused as the server's doing, retried, installed plain.
            try proxy.rules([["path": "/content.tar", "fault": "gzip", "times": 1]])
            try await shell("touch -d '+1 hour' content.tar", in: server.root)
            let encoded = try await BreezeBinary.run(["sync", remote, local.path("Content").path])
            #expect(
                encoded.status == 0 && encoded.output.contains("wasted on failed attempts"),
                "\(encoded.output)\(encoded.error)"
            )
        }
    }

    @Test("A .tar cut mid-body while it unpacks: the retry resumes with Range and installs from the file, exact")
    func packageCutWhileUnpacking() async throws {
        try await PublishedFolder.with(.nginx) { server in
            let source = server.root.appendingPathComponent("src")
            try FileManager.default.createDirectory(at: source, withIntermediateDirectories: true)
            for number in 0..<6 {
                try SeededBytes(seed: 40 + UInt64(number)).bytesOnce(150_000).write(
                    to: source.appendingPathComponent("part-\(number).bin")
                )
            }
            try await shell("tar -cf content.tar -C src .", in: server.root)
            let proxy = try FaultProxy(upstream: server.url)
            defer { proxy.stop() }
            try proxy.rules([["path": "/content.tar", "fault": "short", "offset": 500_000, "times": 1]])
            let local = try TemporaryFolder("fault-tar-cut")
            let updater = PackageUpdater(
                remote: proxy.url.appendingPathComponent("content.tar"),
                store: BundleStore(root: local.path("store"), liveLink: local.path("Content")),
                transport: testTransport
            )
            let summary = try await updater.run()
            let result = try #require(summary.package)
            #expect(result.outcome == .downloaded && summary.bytesWasted == 0, "\(summary.oneLine)")
            // The first part was unpacked as it came; the rest came by Range, and the files from the whole file.
            let ranges = proxy.answers().filter { $0.path == "/content.tar" }.map(\.range)
            #expect(ranges.count == 2 && ranges[0] == nil && ranges[1] != nil, "\(ranges)")
            for number in 0..<6 {
                #expect(
                    try Data(contentsOf: local.path("Content/part-\(number).bin"))
                        == SeededBytes(seed: 40 + UInt64(number)).bytesOnce(150_000)
                )
            }
        }
    }

    @Test("A body with no Content-Length that runs past the listed size is cut off as it streams")
    func unannouncedOverrunIsCutOff() async throws {
        try await PublishedFolder.with(.nginx) { server in
            try Self.publishBundle(in: server.root, version: 1)
            let proxy = try FaultProxy(upstream: server.url)
            defer { proxy.stop() }
            let transport = AsyncHTTPClientTransport()
            let local = try TemporaryFolder("fault-overrun")
            let sync = client(proxy.url, in: local, transport: transport, attempts: 1)
            try await sync.run()
            // Version 2's manifest, but a file four times as long as it lists, sent without a length.
            try Self.publishBundle(in: server.root, version: 2)
            try SeededBytes(seed: 7).bytesOnce(4 * Self.bigSize).write(
                to: server.root.appendingPathComponent("Big.freshair/big.bin")
            )
            try proxy.rules([["path": Self.big, "fault": "no-length"]])
            let result: Result<SyncSummary, any Error>
            do { result = .success(try await sync.run()) } catch { result = .failure(error) }
            try await transport.shutdown()
            guard case .failure(let error) = result, let failure = error as? FreshAirError,
                failure.code == .sizeMismatch, let expected = failure.expectedSize, let actual = failure.receivedSize
            else {
                Issue.record("expected a size mismatch, got \(result)")
                return
            }
            #expect(failure.path == "big.bin" && expected == Int64(Self.bigSize) && actual > expected)
            #expect(try Data(contentsOf: local.path("live/big.bin")) == SeededBytes(seed: 1).bytesOnce(Self.bigSize))
        }
    }

    @Test(
        "A Last-Modified of raw non-ASCII bytes (the date that crashed Foundation under fuzzing) is ignored, not fatal"
    )
    func hostileDateHeader() async throws {
        try await PublishedFolder.with(.nginx) { server in
            try await Self.publishPackage("dated\n", in: server.root)
            let proxy = try FaultProxy(upstream: server.url)
            defer { proxy.stop() }
            try proxy.rules([
                [
                    "path": "/content.tgz", "fault": "header", "name": "Last-Modified",
                    "hex": "53756e6461792c203036ccb19089d2c6cbdf30383a34393a333720474d54",
                ]
            ])
            let local = try TemporaryFolder("fault-date")
            let run = try await BreezeBinary.run([
                "sync", proxy.url.appendingPathComponent("content.tgz").absoluteString, local.path("Content").path,
            ])
            #expect(run.status == 0, "\(run.error)")
            #expect(local.path("Content/message.txt").text == "dated\n")
        }
    }

    @Test("An HTML error page with status 200 in place of a package: a clear error, the installed package stays")
    func htmlInPlaceOfAPackage() async throws {
        try await PublishedFolder.with(.nginx) { server in
            try await Self.publishPackage("good\n", in: server.root)
            let proxy = try FaultProxy(upstream: server.url)
            defer { proxy.stop() }
            let local = try TemporaryFolder("fault-html")
            let remote = proxy.url.appendingPathComponent("content.tgz").absoluteString
            try await BreezeBinary.run(["sync", remote, local.path("Content").path]).expectSuccess()
            try await shell("touch -d '+1 hour' content.tgz", in: server.root)
            try proxy.rules([["path": "/content.tgz", "fault": "html-200"]])
            let run = try await BreezeBinary.run(["sync", remote, local.path("Content").path, "--attempts", "1"])
            #expect(run.status == 65 && run.error.contains("content.tgz: not valid gzip data"), "\(run.error)")
            #expect(local.path("Content/message.txt").text == "good\n")
            #expect(try await BreezeBinary.run(["verify", local.path("Content").path]).status == 0)
        }
    }

    static let rootCases: [Case] = [
        Case(
            name: "cut short, clean close: fetched again",
            rules: [["path": "/Big.freshair/manifest.json", "fault": "short", "offset": 100, "times": 1]],
            expected: .succeeds(wasted: 100...100)
        ),
        Case(
            name: "Content-Length larger than the body",
            rules: [["path": "/Big.freshair/manifest.json", "fault": "length-larger"]],
            expected: .fails("closed early")
        ),
        Case(
            name: "no Content-Length, running past the limit",
            rules: [["path": "/Big.freshair/manifest.json", "fault": "no-length"]],
            expected: .fails("larger than")
        ),
    ]

    /// A root manifest is written to the update's partials as it arrives (here from its first
    /// byte): a body cut, lying about its length or running past the limit leaves no file
    /// behind, and version 1 live.
    @Test("A root manifest streamed to disk as it arrives", arguments: rootCases)
    func rootStreamedToDisk(_ fault: Case) async throws {
        try await PublishedFolder.with(.nginx) { server in
            try Self.publishBundle(in: server.root, version: 1)
            let proxy = try FaultProxy(upstream: server.url)
            defer { proxy.stop() }
            let transport = AsyncHTTPClientTransport(idleTimeout: .seconds(2))
            let local = try TemporaryFolder("fault-root")
            var sync = client(proxy.url, in: local, transport: transport)
            sync.configuration.spillDocumentsFrom = 0
            try await sync.run()

            try Self.publishBundle(in: server.root, version: 2)
            let root = try Data(contentsOf: server.root.appendingPathComponent("Big.freshair/manifest.json"))
            // A byte short of the root: refused as it streams when no length announces it.
            let runsLong = fault.rules.contains { $0["fault"] as? String == "no-length" }
            if runsLong { sync.configuration.maxDocumentSize = root.count - 1 }
            try proxy.rules(fault.rules)
            let result: Result<SyncSummary, any Error>
            do { result = .success(try await sync.run()) } catch { result = .failure(error) }
            try await transport.shutdown()
            switch fault.expected {
            case .succeeds(let wasted):
                let summary = try result.get()
                #expect(summary.outcome == .updated && wasted.contains(summary.bytesWasted), "\(summary)")
                #expect(try Data(contentsOf: local.path("live/manifest.json")) == root)
            case .fails(let text):
                #expect(throws: FreshAirError.self) { try result.get() }
                if case .failure(let error) = result { #expect("\(error)".contains(text), "\(error)") }
                #expect(try Data(contentsOf: local.path("live/small.txt")) == Data("small, version 1\n".utf8))
            }
            #expect(try sync.store.verify()?.isIntact == true)
            let left = FileManager.default.enumerator(atPath: local.path("store").path)?
                .compactMap { $0 as? String }.filter { $0.hasSuffix("root.manifest.json") }
            #expect(left == [], "a spilled root is moved into the version or removed")
        }
    }
}

@Suite("What an interrupted update already verified is reused, not downloaded again")
struct InterruptedUpdateTests {
    /// A bundle of `count` small files.
    static func publish(count: Int, in root: URL) throws {
        let folder = root.appendingPathComponent("Many.freshair")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var entries: [String] = []
        for index in 0..<count {
            let data = Data("file \(index)\n".utf8)
            try data.write(to: folder.appendingPathComponent("f\(index).txt"))
            entries.append(
                #"{"filename": "f\#(index).txt", "sha": "\#(ContentHash.of(data, using: .sha256).hex)", "size": \#(data.count)}"#
            )
        }
        try Data("[\(entries.joined(separator: ", "))]".utf8).write(to: folder.appendingPathComponent("manifest.json"))
    }

    @Test("A sync that failed on one file: the next downloads that file and reuses the rest")
    func failedSyncIsReused() async throws {
        try await PublishedFolder.with(.nginx) { server in
            try Self.publish(count: 40, in: server.root)
            let proxy = try FaultProxy(upstream: server.url)
            defer { proxy.stop() }
            try proxy.rules([["path": "/Many.freshair/f39.txt", "fault": "status", "status": 404]])
            let local = try TemporaryFolder("interrupted")
            var configuration = SyncConfiguration()
            configuration.retry = .none
            configuration.concurrency = 1  // in order: f0 … f38 arrive before f39 fails
            let sync = BundleSync(
                remote: proxy.url.appendingPathComponent("Many.freshair/"),
                store: BundleStore(root: local.path("store"), liveLink: local.path("live")),
                environment: ConditionEnvironment(),
                configuration: configuration
            )
            await #expect(throws: FreshAirError.self) { try await sync.run() }
            #expect(!FileManager.default.fileExists(atPath: local.path("live").path))

            try proxy.rules([])
            let before = proxy.answers().count
            let summary = try await sync.run()
            let fetched = proxy.answers().dropFirst(before).map(\.path)
            #expect(fetched == ["/Many.freshair/manifest.json", "/Many.freshair/f39.txt"])
            #expect(summary.filesReused == 39 && summary.downloaded == ["manifest.json", "f39.txt"])
            #expect(try sync.store.verify()?.isIntact == true)
            #expect(
                !FileManager.default.fileExists(atPath: local.path("store/interrupted").path),
                "set-aside work is removed once live"
            )
        }
    }

    @Test("A version assembled but killed before the switch is reused whole by the next sync")
    func assembledVersionIsReused() async throws {
        try await PublishedFolder.with(.nginx) { server in
            try Self.publish(count: 10, in: server.root)
            let local = try TemporaryFolder("assembled")
            let store = BundleStore(root: local.path("store"), liveLink: local.path("live"))
            let sync = BundleSync(
                remote: server.url.appendingPathComponent("Many.freshair/"),
                store: store,
                environment: ConditionEnvironment()
            )
            try await sync.run()
            // What a kill between the record and the link of a first sync leaves: version 2 complete, nothing live.
            try FileManager.default.copyItem(at: local.path("store/versions/1"), to: local.path("store/versions/2"))
            try FileManager.default.copyItem(
                at: local.path("store/versions/1.json"),
                to: local.path("store/versions/2.json")
            )
            try FileManager.default.removeItem(at: local.path("store/versions/1"))
            try FileManager.default.removeItem(at: local.path("store/versions/1.json"))
            try FileManager.default.removeItem(at: local.path("live"))
            let before = server.nginxRequests().count
            let summary = try await sync.run()
            #expect(
                summary.filesReused == 10 && summary.filesDownloaded == 1,
                "only the root manifest crosses the network"
            )
            #expect(server.nginxRequests().dropFirst(before).map(\.path) == ["/Many.freshair/manifest.json"])
            #expect(try store.verify()?.isIntact == true)
        }
    }
}
