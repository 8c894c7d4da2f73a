import Foundation
import Testing

@testable import FreshAir

@Suite("The planner decides from digests alone")
struct SyncPlannerTests {
    let a = ContentHash.of(Array("a".utf8), using: .sha256)
    let b = ContentHash.of(Array("b".utf8), using: .sha256)

    func selected(_ path: String, _ hash: ContentHash?, size: Int64? = nil) -> SelectedFile {
        SelectedFile(path: try! BundlePath(path), hash: hash, size: size)
    }

    func live(_ files: [String: ContentHash]) -> VersionRecord {
        VersionRecord(id: 1, source: "http://x/", files: files.mapValues { FileRecord(hash: $0, size: 1) })
    }

    @Test("A selected file is 64 bytes and a digest 33: a plan of 100,000 downloads is 6.4 MB, not 7.2")
    func compactLayout() {
        #expect(MemoryLayout<SelectedFile>.stride == 64)
        #expect(MemoryLayout<ContentHash?>.size == 33)
        let file = SelectedFile(path: BundlePath(trusted: "a"), hash: nil, size: nil)
        #expect(file.size == nil)
        #expect(SelectedFile(path: BundlePath(trusted: "a"), hash: nil, size: 0).size == 0)
    }

    @Test("Files listed as the live version's: kept when intact, fetched again as listed when damaged")
    func filesListedAsTheLiveVersions() {
        let record = live(["a.md": a, "b.md": a, "c.md": b])
        // a.md and c.md were selected exactly as the live version has them: places 0 and 2.
        let plan = SyncPlanner.plan(
            selected: [selected("new.md", a)],
            sameAsLive: [0, 2],
            live: record,
            isIntact: { path, _ in path != "c.md" }
        )
        #expect(plan.kept.map(\.path.string) == ["a.md"])
        #expect(plan.downloads.map(\.path.string) == ["new.md", "c.md"])
        #expect(plan.downloads.last?.hash == b && plan.downloads.last?.size == 1)
        #expect(plan.removed == ["b.md"])
    }

    @Test("A kept file the manifest now spells in another normalization takes the manifest's spelling")
    func keptFileRespelled() {
        let (decomposed, composed) = ("cafe\u{301}.txt", "caf\u{e9}.txt")
        let plan = SyncPlanner.plan(
            selected: [selected(composed, a), selected("other.txt", a)],
            live: live([decomposed: a, "other.txt": a]),
            isIntact: { _, _ in true }
        )
        #expect(plan.downloads.isEmpty && plan.removed.isEmpty)
        let paths = plan.kept.map { Array($0.path.string.utf8) }
        #expect(paths == [Array(composed.utf8), Array("other.txt".utf8)])
        let run = plan.kept.run
        #expect((0..<run.count).map { Array(run.entry($0).path.utf8) } == paths)
    }

    @Test func keepsSameDigestsDownloadsChangedOnesRemovesTheRest() {
        let plan = SyncPlanner.plan(
            selected: [selected("same.md", a), selected("changed.md", b), selected("new.md", a)],
            live: live(["same.md": a, "changed.md": a, "gone.md": a]),
            isIntact: { _, _ in true }
        )
        #expect(plan.downloads.map(\.path.string) == ["changed.md", "new.md"])
        #expect(plan.removed == ["gone.md"])
        #expect(plan.summary.filesToKeep == 1)
        #expect(!plan.changesNothing)
    }

    @Test func existenceSufficesWithoutADigest() {
        let plan = SyncPlanner.plan(
            selected: [selected("any.md", nil)],
            live: live(["any.md": b]),
            isIntact: { _, _ in true }
        )
        #expect(plan.changesNothing)
    }

    @Test func aDamagedLiveFileIsFetchedAgain() {
        let plan = SyncPlanner.plan(
            selected: [selected("same.md", a)],
            live: live(["same.md": a]),
            isIntact: { _, _ in false }
        )
        #expect(plan.downloads.map(\.path.string) == ["same.md"])
    }

    @Test func aDeclaredSizeThatDiffersMeansDownload() {
        let plan = SyncPlanner.plan(
            selected: [selected("same.md", a, size: 99)],
            live: live(["same.md": a]),
            isIntact: { _, _ in true }
        )
        #expect(plan.downloads.count == 1)
    }

    @Test func manifestsInMemoryAreWrittenOnlyWhenTheyChanged() {
        let bytes = Data("[]".utf8)
        let manifest = selected("manifest.json", nil)
        let documents = [manifest.path: SelectedDocument(data: bytes, fetched: true)]
        let unchanged = SyncPlanner.plan(
            selected: [manifest],
            documents: documents,
            live: live(["manifest.json": .of(bytes, using: .sha256)]),
            isIntact: { _, _ in true }
        )
        #expect(unchanged.changesNothing)
        let changed = SyncPlanner.plan(
            selected: [manifest],
            documents: documents,
            live: live(["manifest.json": a]),
            isIntact: { _, _ in true }
        )
        #expect(changed.written.map(\.file.path.string) == ["manifest.json"])
        #expect(changed.kept.isEmpty && changed.downloads.isEmpty)
    }

    @Test func sizesAddUpOnlyWhenAllAreKnown() {
        let known = SyncPlanner.plan(
            selected: [selected("x", a, size: 10), selected("y", b, size: 5)],
            live: nil,
            isIntact: { _, _ in true }
        )
        #expect(known.summary.bytesToDownload == 15)
        let unknown = SyncPlanner.plan(
            selected: [selected("x", a, size: 10), selected("y", b)],
            live: nil,
            isIntact: { _, _ in true }
        )
        #expect(unknown.summary.bytesToDownload == nil)
    }
}

@Suite("Retry policy")
struct RetryPolicyTests {
    @Test(
        "Retry-After in seconds or as a date is honoured up to the cap; otherwise the back-off doubles, scaled by the jitter"
    )
    func delays() {
        let policy = RetryPolicy(maxAttempts: 3, baseDelay: .milliseconds(10), maximumDelay: .seconds(5))
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        func delay(_ attempt: Int, _ retryAfter: String?, _ fraction: Double = 1) -> Duration {
            policy.delay(after: attempt, retryAfter: retryAfter, now: now, fraction: fraction)
        }
        #expect(delay(1, "2") == .seconds(2))
        #expect(delay(1, "120") == .seconds(5))
        #expect(delay(1, HTTPDate.format(now.addingTimeInterval(3))) == .seconds(3))
        #expect(delay(1, HTTPDate.format(now.addingTimeInterval(-30))) == .zero, "a date passed: no wait")
        #expect(delay(1, "soon") == .milliseconds(10), "an unreadable Retry-After: the back-off")
        #expect(delay(3, nil) == .milliseconds(40))
        #expect(delay(3, nil, 0.5) == .milliseconds(20))
        #expect(delay(3, nil, 0) == .milliseconds(20), "the jitter never takes off more than half")
        #expect(delay(30, nil) == .seconds(5), "doubling stops at the cap")
    }

    @Test func headerNamesMatchWithoutRegardToCase() {
        let head = HTTPResponseHead(
            status: 200,
            headers: [("etag", "\"x\""), ("Content-Length", "12"), ("X-A_B", "1")]
        )
        #expect(head["ETag"] == "\"x\"")
        #expect(head.contentLength == 12)
        #expect(head["x-a_b"] == "1")
        #expect(head["X-A_"] == nil)
        #expect(head["X-A\u{7F}B"] == nil)  // only letters fold: _ and DEL differ by 0x20
        #expect(!HTTPResponseHead.namesMatch("Etag2", "ETag"))
    }

    @Test func httpDatesParseInEveryFormWhateverTheLocale() {
        let expected = Date(timeIntervalSince1970: 1_541_861_208)  // Sat, 10 Nov 2018 14:46:48 GMT
        #expect(HTTPDate.parse("Sat, 10 Nov 2018 14:46:48 GMT") == expected)
        #expect(HTTPDate.parse("Saturday, 10-Nov-18 14:46:48 GMT") == expected)
        #expect(HTTPDate.parse("Sat Nov 10 14:46:48 2018") == expected)
        #expect(HTTPDate.format(expected) == "Sat, 10 Nov 2018 14:46:48 GMT")
        #expect(HTTPDate.parse("yesterday") == nil)
    }

    @Test func transientMeansNetworkOrServerTrouble() {
        let url = URL(string: "http://x/")!
        #expect(FreshAirError.httpStatus(503, url: url).isTransient)
        #expect(FreshAirError.httpStatus(429, url: url).isTransient)
        #expect(!FreshAirError.httpStatus(404, url: url).isTransient)
        #expect(!FreshAirError.httpStatus(403, url: url).isTransient)
        #expect(FreshAirError.transport(TransportError(kind: .interrupted, url: url, detail: "")).isTransient)
    }
}

@Suite("Manifest trees")
struct ManifestTreeTests {
    @Test func childrenLoadedTogetherSelectWhatOneByOneWould() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "freshair-tree-\(UUID().uuidString.prefix(8))"
        )
        defer { try? FileManager.default.removeItem(at: folder) }
        func write(_ path: String, _ text: String) throws {
            let url = folder.appendingPathComponent(path)
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(),
                withIntermediateDirectories: true
            )
            try Data(text.utf8).write(to: url)
        }
        // Three children, one not for this platform, and a path listed twice: the first listing
        // (in document order, depth first) wins, as when children were loaded one at a time.
        try write(
            "manifest.json",
            """
            [{"filename": "A.freshair/manifest.json"}, {"filename": "B.freshair/manifest.json", "condition": "platform == 'tvOS'"},
             {"filename": "C.freshair/manifest.json"}, {"filename": "A.freshair/x.md", "size": 99}, {"filename": "top.md"}]
            """
        )
        try write("A.freshair/manifest.json", #"[{"filename": "x.md"}, {"filename": "C.freshair/manifest.json"}]"#)
        try write("A.freshair/C.freshair/manifest.json", #"[{"filename": "deep.md"}]"#)
        try write("B.freshair/manifest.json", #"[{"filename": "tv.md"}]"#)
        try write("C.freshair/manifest.json", #"[{"filename": "y.md"}]"#)
        for name in [
            "A.freshair/x.md", "A.freshair/C.freshair/deep.md", "C.freshair/y.md", "top.md", "B.freshair/tv.md",
        ] { try write(name, name) }
        var environment = ConditionEnvironment()
        environment["platform"] = "iOS"
        let selected = try await LocalBundle.selection(folder: folder, environment: environment)
        #expect(
            selected.map(\.path) == [
                "manifest.json", "A.freshair/manifest.json", "A.freshair/x.md", "A.freshair/C.freshair/manifest.json",
                "A.freshair/C.freshair/deep.md", "C.freshair/manifest.json", "C.freshair/y.md", "top.md",
            ]
        )
        // The child's entry, not the later one.
        #expect(selected.first { $0.path == "A.freshair/x.md" }?.size == Int64("A.freshair/x.md".utf8.count))
    }

    @Test("A 304 needs no planning only for the environment the live version was planned for")
    func notModifiedIsFinalForTheSameEnvironment() throws {
        var device = ConditionEnvironment(["platform": "iOS", "locale": "fr_FR", "defaults": .map(["flag": true])])
        let a = ContentHash.of(Array("a".utf8), using: .sha256)
        var record = VersionRecord(
            id: 1,
            source: "http://x/",
            files: ["a.md": FileRecord(hash: a, size: 1), "b.md": FileRecord(hash: a, size: 1)]
        )
        record.plannedFor = device.fingerprint
        let current = try BundleSync.unchanged(
            record,
            plannedFor: device.fingerprint,
            source: "http://x/manifest.json",
            now: Date()
        )
        #expect(current?.outcome == .alreadyCurrent)
        #expect(current?.filesReused == 2)

        // Any change of a value, nested ones included, means re-planning from the stored manifests.
        device["defaults"] = .map(["flag": false])
        #expect(
            try BundleSync.unchanged(
                record,
                plannedFor: device.fingerprint,
                source: "http://x/manifest.json",
                now: Date()
            ) == nil
        )
        // So does a record written before fingerprints were kept.
        record.plannedFor = nil
        #expect(
            try BundleSync.unchanged(
                record,
                plannedFor: device.fingerprint,
                source: "http://x/manifest.json",
                now: Date()
            ) == nil
        )
        // Values that merely look alike are different environments.
        #expect(ConditionEnvironment(["k": "1"]).fingerprint != ConditionEnvironment(["k": .number("1")]).fingerprint)
        #expect(ConditionEnvironment(["ab": "c"]).fingerprint != ConditionEnvironment(["a": "bc"]).fingerprint)
    }

    @Test("A 304 for a live version whose manifest has since expired is refused")
    func notModifiedStillHonoursExpiry() throws {
        let device = ConditionEnvironment(["platform": "iOS"])
        var record = VersionRecord(id: 1, source: "http://x/")
        record.plannedFor = device.fingerprint
        record.expires = Date().addingTimeInterval(-60)
        #expect {
            try BundleSync.unchanged(
                record,
                plannedFor: device.fingerprint,
                source: "http://x/manifest.json",
                now: Date()
            )
        } throws: { error in
            guard let problem = (error as? FreshAirError)?.manifestError, case .expired = problem.problem else {
                return false
            }
            return true
        }
    }
}
