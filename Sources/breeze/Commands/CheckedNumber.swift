import ArgumentParser

/// A number from the command line checked against the range breeze can use, so that a value
/// out of it is a usage error (exit 64) that names the range, never an arithmetic trap later
/// (`--expires 999999999999999` became seconds that overflowed).
enum CheckedNumber {
    /// Days a signature may last: up to 100 years.
    static let expiryDays = 1...36_500
    /// Requests or uploads at once.
    static let concurrency = 1...256
    /// Seconds to wait for an answer: up to a day.
    static let timeoutSeconds = 1...86_400
    /// A TCP port; 0 (serve only) asks the system for a free one.
    static let port = 0...65_535
    /// S3 multipart part sizes in MiB: S3 takes 5 MiB to 5 GiB.
    static let partMiB: ClosedRange<Int64> = 5...5_120
    /// Minutes of grace before a collector may remove an object: up to a year.
    static let graceMinutes = 0...525_600

    /// Throws a `ValidationError` naming `option`, `range` and `unit` when `value` is outside.
    static func require<Number: BinaryInteger>(
        _ value: Number,
        in range: ClosedRange<Number>,
        _ option: String,
        _ unit: String
    ) throws {
        guard !range.contains(value) else { return }
        throw ValidationError(
            "\(option) takes a number of \(unit) from \(range.lowerBound) to \(range.upperBound), not \(value)."
        )
    }
}
