import Foundation
import Testing

@testable import FreshAir

/// A Linux build without the `LinuxURLSession` trait (breeze's release build) has no URLSession:
/// a sync given no transport must say what to pass, at once, not retry a network that is fine.
@Suite("A build without a default transport says what to pass")
struct NoDefaultTransportTests {
    @Test("The first request fails with words naming the trait and the transport to pass, and is not retried")
    func namesTheWayOut() async throws {
        let store = FileManager.default.temporaryDirectory.appendingPathComponent("no-transport-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: store) }
        var configuration = SyncConfiguration()
        configuration.retry = RetryPolicy(maxAttempts: 5, baseDelay: .seconds(30))
        let sync = BundleSync(
            remote: URL(string: "https://cdn.example.com/App.freshair/")!,
            store: BundleStore(root: store),
            environment: ConditionEnvironment(),
            transport: NoDefaultTransport(),
            configuration: configuration
        )
        let started = ContinuousClock.now
        let error = try await #require(throws: FreshAirError.self) { try await sync.run() }
        #expect(ContinuousClock.now - started < .seconds(10), "a retry would have waited 30 s")
        #expect(error.code == .transport)
        #expect(!error.isTransient)
        #expect(error.description.contains("LinuxURLSession"), "\(error)")
        #expect(error.description.contains("AsyncHTTPClientTransport"), "\(error)")
        #expect(error.description.contains("cdn.example.com"), "\(error)")
    }
}
