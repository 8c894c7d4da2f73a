import Foundation

/// Periodic checks, spread out and gated by the app's policy: a check at start, then one
/// every ``interval`` give or take ``jitter`` (so a fleet of devices does not hit the server
/// in step), each only when ``isAllowed`` says so (on Wi-Fi, not in low-power mode: the app
/// knows, FreshAir does not).
///
/// ```swift
/// let schedule = SyncSchedule(interval: .seconds(3600), isAllowed: { await network.isOnWiFi })
/// for await result in schedule.runs({ try await sync.run() }) {
///     if case .failure(let error) = result { log(error) }   // the next check comes anyway
/// }
/// ```
///
/// Any delivery mode fits: `{ try await sync.run() }`, `{ try await updater.update() }`,
/// `{ try await repository.update() }`. Ending the iteration (or cancelling its task) stops it.
public struct SyncSchedule: Sendable {
    /// The average time between checks.
    public var interval: Duration
    /// How far each wait may stray from ``interval``, as a fraction of it (0…1).
    public var jitter: Double
    /// Whether the first check happens at once rather than after the first wait.
    public var checksAtStart: Bool
    /// The priority checks run at: `.background` keeps them out of the app's way.
    public var priority: TaskPriority?
    /// Asked before every check; a check it refuses is skipped until the next one.
    public var isAllowed: @Sendable () async -> Bool

    public init(
        interval: Duration, jitter: Double = 0.2, checksAtStart: Bool = true, priority: TaskPriority? = .background,
        isAllowed: @escaping @Sendable () async -> Bool = { true }
    ) {
        self.interval = interval
        self.jitter = min(max(jitter, 0), 1)
        self.checksAtStart = checksAtStart
        self.priority = priority
        self.isAllowed = isAllowed
    }

    /// The wait before the next check: ``interval`` scaled by a random factor in 1 ± ``jitter``.
    public func nextWait() -> Duration {
        interval * Double.random(in: (1 - jitter)...(1 + jitter))
    }

    /// Runs `check` on this schedule and delivers each outcome; failures do not stop it.
    public func runs<Summary: Sendable>(
        _ check: @escaping @Sendable () async throws -> Summary
    ) -> AsyncStream<Result<Summary, any Error>> {
        AsyncStream { continuation in
            let task = Task(priority: priority) {
                var first = checksAtStart
                while !Task.isCancelled {
                    if !first {
                        do { try await Task.sleep(for: nextWait()) } catch { break }
                    }
                    first = false
                    guard await isAllowed() else { continue }
                    do {
                        continuation.yield(.success(try await check()))
                    } catch is CancellationError {
                        break
                    } catch {
                        continuation.yield(.failure(error))
                    }
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}
