import Foundation

/// Runs one whole update under ``SyncConfiguration/deadline``: past it the update is
/// cancelled and fails with a timeout, its store lock released and the live version as it
/// was; downloads resume on the next run. Every single wait is bounded already (connect and
/// idle timeouts, ``SyncConfiguration/minimumThroughput``, a bounded number of retries); this
/// bounds their sum. `sleep` is the run's (``SyncEnvironment/sleep``).
func withDeadline<Result: Sendable>(
    _ deadline: Duration?,
    url: URL,
    sleep: @escaping @Sendable (Duration) async throws -> Void,
    _ body: @escaping @Sendable () async throws -> Result
) async throws -> Result {
    guard let deadline else { return try await body() }
    return try await withThrowingTaskGroup(of: Result.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await sleep(deadline)
            throw FreshAirError.transport(
                TransportError(
                    kind: .timeout,
                    url: url,
                    detail:
                        "the update took longer than its \(Int(deadline.seconds)) s deadline (SyncConfiguration.deadline)"
                )
            )
        }
        defer { group.cancelAll() }
        return try await group.next()!
    }
}
