import Foundation

/// How transient failures (connection errors, timeouts, 408, 429 and 5xx) are retried:
/// exponential back-off with full jitter, honouring `Retry-After` up to ``maximumDelay``.
public struct RetryPolicy: Sendable {
    /// Attempts in all, the first included. `1` never retries.
    public var maxAttempts: Int
    /// The first back-off; each further one doubles.
    public var baseDelay: Duration
    /// No wait is longer than this, whatever `Retry-After` asks.
    public var maximumDelay: Duration

    /// Up to `maxAttempts` attempts, waiting `baseDelay` doubled each time (with jitter), never more
    /// than `maximumDelay`, or what `Retry-After` asks.
    public init(maxAttempts: Int = 4, baseDelay: Duration = .milliseconds(250), maximumDelay: Duration = .seconds(30)) {
        self.maxAttempts = max(1, maxAttempts)
        self.baseDelay = baseDelay
        self.maximumDelay = maximumDelay
    }

    /// Never retries.
    public static let none = RetryPolicy(maxAttempts: 1)

    /// The wait before attempt `attempt + 1` (attempt counts from 1): what `Retry-After` asks
    /// (up to ``maximumDelay``), else the back-off's ceiling scaled by `fraction` (0.5…1, the
    /// jitter, drawn by the caller). A pure function of its inputs.
    func delay(after attempt: Int, retryAfter: String?, now: Date, fraction: Double) -> Duration {
        if let retryAfter, let requested = Self.parseRetryAfter(retryAfter, now: now) {
            return min(requested, maximumDelay)
        }
        let ceiling = min(baseDelay * (1 << min(attempt - 1, 20)), maximumDelay)
        return ceiling * min(max(fraction, 0.5), 1)
    }

    /// `Retry-After` as seconds or as an HTTP date, counted from `now`.
    static func parseRetryAfter(_ value: String, now: Date) -> Duration? {
        if let seconds = Int(value.trimmingCharacters(in: .whitespaces)), seconds >= 0 { return .seconds(seconds) }
        guard let date = HTTPDate.parse(value) else { return nil }
        return .seconds(max(0, date.timeIntervalSince(now)))
    }

    /// Runs `operation`, retrying transient failures: network errors below HTTP, and
    /// statuses 408, 425, 429 and 5xx (waiting as `Retry-After` asks). What is left after the
    /// last attempt is thrown as a ``FreshAirError``.
    /// Waits go through `environment` (its clock, sleep and jitter).
    func run<Result>(
        in environment: SyncEnvironment,
        _ operation: (_ attempt: Int) async throws -> Result
    ) async throws -> Result {
        var attempt = 1
        while true {
            let retryAfter: String?
            do {
                return try await operation(attempt)
            } catch let failure as StatusFailure {
                let error = FreshAirError.httpStatus(failure.status, url: failure.url)
                guard error.isTransient, attempt < maxAttempts else { throw error }
                retryAfter = failure.retryAfter
            } catch let error as FreshAirError where error.isTransient && attempt < maxAttempts {
                retryAfter = nil
            }
            let fraction = environment.random(0.5...1)
            try await environment.sleep(
                delay(after: attempt, retryAfter: retryAfter, now: environment.now(), fraction: fraction)
            )
            attempt += 1
        }
    }
}

/// An error status on its way through ``RetryPolicy``, carrying `Retry-After`; callers
/// see ``FreshAirError/Code/httpStatus``.
struct StatusFailure: Error {
    var status: Int
    var url: URL
    var retryAfter: String?

    init(_ head: HTTPResponseHead, url: URL) {
        status = head.status
        self.url = url
        retryAfter = head["Retry-After"]
    }
}
