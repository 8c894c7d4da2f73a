import Foundation
import Synchronization

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
/// Any delivery mode fits, through ``ContentUpdater`` (`schedule.runs(updater)`) or as a
/// closure (`{ try await repository.run() }`). Ending the iteration (or cancelling its task)
/// stops it.
public struct SyncSchedule: Sendable {
    /// The average time between checks.
    public var interval: Duration
    /// How far each wait may stray from ``interval``, as a fraction of it (0…1).
    public var jitter: Double
    /// Whether the first check happens at once rather than after the first wait.
    public var checksAtStart: Bool
    /// Asked before every check; a check it refuses is skipped until the next one.
    public var isAllowed: @Sendable () async -> Bool
    /// The sleep and random numbers the waits use: the system's; a test drives its own.
    package var environment = SyncEnvironment.system

    /// A schedule: a check every `interval`, give or take `jitter` of it, first at once unless
    /// `checksAtStart` is false, each only when `isAllowed` says so.
    public init(
        interval: Duration,
        jitter: Double = 0.2,
        checksAtStart: Bool = true,
        isAllowed: @escaping @Sendable () async -> Bool = { true }
    ) {
        self.interval = interval
        self.jitter = min(max(jitter, 0), 1)
        self.checksAtStart = checksAtStart
        self.isAllowed = isAllowed
    }

    /// The wait before the next check: ``interval`` scaled by a random factor in 1 ± ``jitter``.
    public func nextWait() -> Duration {
        interval * environment.random((1 - jitter)...(1 + jitter))
    }

    /// Runs `check` on this schedule and delivers each outcome; failures do not stop it.
    ///
    /// Checks happen as the loop asks for them: the wait for the next one starts when the
    /// previous outcome has been taken, so a slow consumer never piles up checks. Run the loop
    /// in a task of the priority you want (`Task(priority: .background) { for await … }`).
    public func runs<Summary: Sendable>(
        _ check: @escaping @Sendable () async throws -> Summary
    ) -> AsyncStream<Result<Summary, any Error>> {
        let waitFirst = Mutex(!checksAtStart)
        return AsyncStream(unfolding: { [self] in
            while !Task.isCancelled {
                if waitFirst.withLock({ $0 }) {
                    do { try await environment.sleep(nextWait()) } catch { return nil }
                }
                waitFirst.withLock { $0 = true }
                guard await isAllowed() else { continue }
                do {
                    return .success(try await check())
                } catch is CancellationError {
                    return nil
                } catch {
                    return .failure(error)
                }
            }
            return nil
        })
    }
}
