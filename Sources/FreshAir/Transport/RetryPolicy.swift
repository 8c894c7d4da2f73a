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

    /// The wait before attempt `attempt + 1` (attempt counts from 1).
    func delay(after attempt: Int, retryAfter: String?) -> Duration {
        if let retryAfter, let requested = Self.parseRetryAfter(retryAfter) {
            return min(requested, maximumDelay)
        }
        let ceiling = min(baseDelay * (1 << min(attempt - 1, 20)), maximumDelay)
        return .seconds(Double.random(in: ceiling.seconds / 2...ceiling.seconds))
    }

    /// `Retry-After` as seconds or as an HTTP date.
    static func parseRetryAfter(_ value: String) -> Duration? {
        if let seconds = Int(value.trimmingCharacters(in: .whitespaces)), seconds >= 0 { return .seconds(seconds) }
        guard let date = HTTPDate.parse(value) else { return nil }
        return .seconds(max(0, date.timeIntervalSinceNow))
    }

    /// Runs `operation`, retrying transient failures: network errors below HTTP, and
    /// statuses 408, 425, 429 and 5xx (waiting as `Retry-After` asks). What is left after the
    /// last attempt is thrown as a ``FreshAirError``.
    func run<Result>(_ operation: (_ attempt: Int) async throws -> Result) async throws -> Result {
        var attempt = 1
        while true {
            do {
                return try await operation(attempt)
            } catch let failure as StatusFailure {
                let error = FreshAirError.httpStatus(failure.status, url: failure.url)
                guard error.isTransient, attempt < maxAttempts else { throw error }
                try await Task.sleep(for: delay(after: attempt, retryAfter: failure.retryAfter))
            } catch let error as FreshAirError where error.isTransient && attempt < maxAttempts {
                try await Task.sleep(for: delay(after: attempt, retryAfter: nil))
            }
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
