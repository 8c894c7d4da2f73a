package import Foundation

/// Time and chance as FreshAir sees them: the wall clock, a monotonic clock with its sleep, and
/// random numbers. The one place the library reads them (`scripts/check-environment` holds it
/// so), so that a test can drive them instead of waiting (`FreshAirTesting`'s `TestClock`).
///
/// Apps leave it alone: ``system`` is the default everywhere.
package struct SyncEnvironment: Sendable {
    /// What time it is: expiry, a `Last-Modified` from the future, record and lease dates.
    package var now: @Sendable () -> Date
    /// Time since an arbitrary fixed origin, never set back: waits, stalls, elapsed times.
    package var uptime: @Sendable () -> Duration
    /// Waits `duration` on the monotonic clock; throws `CancellationError` when cancelled.
    package var sleep: @Sendable (Duration) async throws -> Void
    /// A number drawn uniformly from the range: the jitter of retries and schedules.
    package var random: @Sendable (ClosedRange<Double>) -> Double

    package init(
        now: @escaping @Sendable () -> Date,
        uptime: @escaping @Sendable () -> Duration,
        sleep: @escaping @Sendable (Duration) async throws -> Void,
        random: @escaping @Sendable (ClosedRange<Double>) -> Double
    ) {
        self.now = now
        self.uptime = uptime
        self.sleep = sleep
        self.random = random
    }

    private static let origin = ContinuousClock.now

    /// The system's clocks and random numbers.
    package static let system = SyncEnvironment(
        now: { Date() },
        uptime: { ContinuousClock.now - origin },
        sleep: { try await Task.sleep(for: $0) },
        random: { Double.random(in: $0) }
    )
}
