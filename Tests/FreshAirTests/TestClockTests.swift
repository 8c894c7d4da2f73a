import Foundation
import FreshAir
import FreshAirTesting
import Synchronization
import Testing

/// Retries, deadlines and schedules on `FreshAirTesting`'s `TestClock`, against the in-memory
/// server: minutes of waiting in milliseconds, and every wait's length checked.
@Suite("Time driven by the test: retries, deadlines and schedules without sleeping")
struct TestClockTests {
    let server = InMemoryServer()
    let clock = TestClock()
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("test-clock-\(UUID().uuidString)")

    func configuration(attempts: Int = 4, deadline: Duration? = nil) -> SyncConfiguration {
        var configuration = SyncConfiguration()
        configuration.retry = RetryPolicy(maxAttempts: attempts, baseDelay: .seconds(8), maximumDelay: .seconds(60))
        configuration.deadline = deadline
        clock.drive(&configuration)
        return configuration
    }

    func bundleSync(_ configuration: SyncConfiguration) -> BundleSync {
        let text = Data("hello".utf8)
        let manifest = #"[{"filename": "a.txt", "sha": "\#(ContentHashHex.sha256(text))", "size": 5}]"#
        server.publish(Data(manifest.utf8), at: "App.freshair/manifest.json")
        server.publish(text, at: "App.freshair/a.txt")
        return BundleSync(
            remote: server.url("App.freshair/"),
            store: BundleStore(root: folder),
            environment: ConditionEnvironment(),
            transport: server.transport,
            configuration: configuration
        )
    }

    @Test(
        "A bundle's manifest answered 503 (Retry-After: 1), then 500: the sync waits 1 s, then the back-off's 16 s scaled by the jitter, and installs"
    )
    func bundleRetries() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let sync = bundleSync(configuration())
        server.answer("App.freshair/manifest.json", with: 503)
        let run = Task { try await sync.run() }
        await clock.waitForSleepers(1)
        server.answer("App.freshair/manifest.json", with: 500)
        clock.advance(by: .seconds(1))
        await clock.waitForSleepers(1)
        server.answer("App.freshair/manifest.json", with: nil)
        clock.advance(by: .seconds(12))
        #expect(try await run.value.outcome == .updated)
        // The second wait: the ceiling 8 s × 2, at 0.75 (the middle of the jitter's 0.5…1).
        #expect(clock.sleeps == [.seconds(1), .seconds(12)], "Retry-After, then the back-off")
        let record = try #require(try sync.store.liveRecord())
        #expect(record.created == clock.now, "the record is dated by the run's clock")
    }

    @Test("A package answered 500 once: one wait of the back-off's 8 s at the top of the jitter, then it installs")
    func packageRetries() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        clock.randomFraction = 1
        server.publish(try gzipped(Data("packaged".utf8)), at: "message.txt.gz")
        server.answer("message.txt.gz", with: 500)
        let updater = PackageUpdater(
            remote: server.url("message.txt.gz"),
            store: BundleStore(root: folder),
            transport: server.transport,
            configuration: configuration()
        )
        let run = Task { try await updater.update() }
        await clock.waitForSleepers(1)
        server.answer("message.txt.gz", with: nil)
        clock.advance(by: .seconds(8))
        #expect(try await run.value.outcome == .downloaded)
        #expect(clock.sleeps == [.seconds(8)])
    }

    @Test("A deadline passes on the test's clock while a retry waits: the run fails with a timeout, nothing installed")
    func deadline() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let sync = bundleSync(configuration(attempts: 100, deadline: .seconds(60)))
        server.answer("App.freshair/manifest.json", with: 500)
        let run = Task { try await sync.run() }
        await clock.waitForSleepers(2)  // the deadline, and the first retry's wait (6 s)
        clock.advance(by: .seconds(6))
        await clock.waitForSleepers(2)
        clock.advance(by: .seconds(60))
        await #expect {
            try await run.value
        } throws: { error in
            (error as? FreshAirError)?.localizedDescription.contains("60 s deadline") == true
        }
        #expect(try sync.store.liveRecord() == nil)
    }

    @Test("Advancing moves the wall clock by the same time as the monotonic one, fractions included")
    func advanceMovesBothClocks() {
        let start = clock.now
        clock.advance(by: .milliseconds(1500))
        #expect(clock.now.timeIntervalSince(start) == 1.5)
    }

    @Test("A schedule: a check at once, then one per interval scaled by the drawn jitter")
    func schedule() async throws {
        let checks = Counter()
        let schedule = clock.driving(SyncSchedule(interval: .seconds(3600), jitter: 0.2))
        clock.randomFraction = 1
        var results = schedule.runs { checks.increment() }.makeAsyncIterator()
        #expect(try await results.next()?.get() == 1)
        let second = Task { try await results.next()?.get() }
        await clock.waitForSleepers(1)
        #expect(clock.sleeps == [.seconds(4320)], "3600 s × 1.2")
        clock.advance(by: .seconds(4320))
        #expect(try await second.value == 2)
    }
}

/// `data` compressed by the real gzip.
func gzipped(_ data: Data) throws -> Data {
    let file = FileManager.default.temporaryDirectory.appendingPathComponent("gzip-\(UUID().uuidString)")
    try data.write(to: file)
    defer { try? FileManager.default.removeItem(at: file.appendingPathExtension("gz")) }
    let gzip = try Process.run(URL(fileURLWithPath: "/usr/bin/gzip"), arguments: ["-n", file.path])
    gzip.waitUntilExit()
    return try Data(contentsOf: file.appendingPathExtension("gz"))
}

/// A count shared with a schedule's checks.
final class Counter: Sendable {
    private let value = Mutex(0)
    func increment() -> Int {
        value.withLock {
            $0 += 1
            return $0
        }
    }
}
