/// When and how a changed large file is rebuilt from the chunks this device already has
/// (see `ChunkIndex`) instead of being downloaded whole.
///
/// A delta is only ever an optimisation: whatever this policy says, the assembled file must
/// match its digest before it installs, and anything a delta cannot do comes whole.
package struct ChunkDeltaPolicy: Sendable, Hashable {
    /// `false`: changed large files always come whole (a bundle's index is still installed
    /// beside its file, as any listed file).
    package var isEnabled = true
    /// The share of the file above which a plan is not worth it and the file comes whole:
    /// the bytes of its ranges plus ``requestCost`` for each of them. 0.6 by default.
    package var maximumShare = 0.6
    /// What one request costs, in bytes, when a plan is weighed: many small ranges take
    /// longer than the bytes they save. 16 KB by default.
    package var requestCost: Int64 = 16 << 10
    /// Kept bytes between two ranges to fetch below which one request fetches both
    /// (adjacent ranges always make one). 8 KB by default.
    package var mergeGap: Int64 = 8 << 10
    /// Single-range requests in flight at once, for one file. 8 by default, the connections a
    /// sync opens to one host (``SyncConfiguration/concurrency``): a delta of thousands of small
    /// ranges waits a round trip for each, and 8 at a time halve what 4 wait (2,873 ranges
    /// behind 20 ms of latency: 8.5 s against 16.5 s).
    package var concurrency = 8

    /// The defaults: deltas on, at most 60% of the file, eight ranges at a time.
    package init() {}
}
