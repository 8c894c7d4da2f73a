import Foundation
import Synchronization
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
        configuration.retry = RetryPolicy(maxAttempts: 3, baseDelay: .milliseconds(1))
        let transport = Counting(NoDefaultTransport())
        let sync = BundleSync(
            remote: URL(string: "https://cdn.example.com/App.freshair/")!,
            store: BundleStore(root: store),
            environment: ConditionEnvironment(),
            transport: transport,
            configuration: configuration
        )
        let error = try await #require(throws: FreshAirError.self) { try await sync.run() }
        #expect(transport.requests.load(ordering: .relaxed) == 1, "asked once: trying again cannot help")
        #expect(error.code == .transport)
        #expect(!error.isTransient)
        #expect(error.description.contains("LinuxURLSession"), "\(error)")
        #expect(error.description.contains("AsyncHTTPClientTransport"), "\(error)")
        #expect(error.description.contains("cdn.example.com"), "\(error)")
    }
}

/// Counts the requests that reach `base`.
private final class Counting: HTTPTransport {
    let base: any HTTPTransport
    let requests = Atomic<Int>(0)

    init(_ base: any HTTPTransport) { self.base = base }

    func get<Result: Sendable>(
        _ request: HTTPGetRequest,
        handle: (HTTPResponseHead, ResponseBody) async throws -> Result
    ) async throws -> Result {
        requests.add(1, ordering: .relaxed)
        return try await base.get(request, handle: handle)
    }
}
