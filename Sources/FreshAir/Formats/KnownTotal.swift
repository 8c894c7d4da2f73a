extension Sequence<Int64?> {
    /// The sum of sizes a server claims, or `nil` when one is unknown or they add up past what an
    /// `Int64` holds (or below its least).
    ///
    /// A manifest may claim any size for a file, and two sizes of `Int64.max` added with `+` trap,
    /// where a sync must end with an error and the live version kept. A total is only ever a
    /// progress bar's: unknown is fine.
    func knownTotal() -> Int64? {
        var total: Int64 = 0
        for size in self {
            guard let size else { return nil }
            let (sum, overflow) = total.addingReportingOverflow(size)
            if overflow { return nil }
            total = sum
        }
        return total
    }
}
