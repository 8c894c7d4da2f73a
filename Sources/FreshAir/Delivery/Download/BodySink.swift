import Foundation
import Synchronization

/// Where a response body goes: written to its file, hashed, and handed to a tee (a package
/// unpacked as it arrives), in order, on `BlockingPool`'s threads, while the task that owns
/// the body reads the next chunk from the network.
///
/// A large body is hashed on a second lane, so that two cores share the work. A tee's work is
/// the heaviest (inflating a `.tgz` costs a core more than the network gives it), so with a
/// tee the file is written on the hashing lane, and the first lane does nothing but feed the
/// tee. Chunks go to the lanes in batches (``batchLimit(bodies:)``), shared between lanes, not
/// copied; at most 2 batches wait on each, which keeps memory flat when the disk or the hash
/// falls behind the network.
///
/// Unchecked `Sendable`: one task writes to it, one chunk after another. `hasher` is touched
/// by that task until the first chunk goes to a lane, then only by the jobs of one lane, which
/// run one after another; `usesLanes`, `writtenInline` and the batch are the task's alone.
final class BodySink: @unchecked Sendable {
    private let writing = BlockingLane()
    private let hashing: BlockingLane?
    private let file: OutputFile
    /// `false` when only the tee keeps the bytes (``DownloadJob/keepsBody``).
    private let writesFile: Bool
    private let tee: (any DownloadTee)?
    /// Touched by the owning task until the first chunk goes to a lane, then only by the jobs
    /// of one lane, which run one after another.
    private var hasher: ContentHasher?
    /// A chunk went to the lanes: every later one must follow it there, in order.
    private var usesLanes = false
    /// Bytes written by the task itself (the owning task's alone).
    private var writtenInline = 0
    /// The most bytes of a body written by the task itself, before any lane is used.
    static let inlineLimit = 64 << 10
    /// Chunks gathered for the lanes (the task's alone), handed over as one job once they
    /// reach ``batchLimit(bodies:)``.
    private var batch: [any BodyBytes] = []
    private var batchBytes = 0
    /// Bodies whose chunks go to lanes now, in the whole process: they share ``batchBudget``.
    private static let bodiesInLanes = Atomic<Int>(0)
    /// What one batch of every body in the lanes may add up to.
    static let batchBudget = 1 << 20

    /// - Parameters:
    ///   - hasher: the digest so far (a resumed body's covers the bytes already on disk), or
    ///     `nil` when the body needs none.
    ///   - hashingApart: hash on a lane of its own (worth it for large bodies only).
    init(file: OutputFile, writesFile: Bool = true, hasher: ContentHasher?, tee: (any DownloadTee)?, hashingApart: Bool)
    {
        self.file = file
        self.writesFile = writesFile
        self.hasher = hasher
        self.tee = tee
        hashing = hashingApart && hasher != nil ? BlockingLane() : nil
    }

    /// Queues `chunk`; suspends while the lanes are full, and rethrows an earlier chunk's failure.
    ///
    /// The first ``inlineLimit`` bytes of a body without a tee are hashed and written by the
    /// task itself, as the file was opened: handing 4 KB to a pool thread and waiting for it
    /// cost more than the write (two thread wake-ups per file of a 10,000-file sync). Past
    /// that, chunks go to the lanes ``batchLimit(bodies:)`` bytes at a time, so a large body still
    /// uses two cores.
    func write(_ chunk: any BodyBytes) async throws {
        if !usesLanes, tee == nil, writtenInline + chunk.count <= Self.inlineLimit {
            try chunk.withUnsafeBytes { bytes in
                hasher?.update(bytes)
                try file.write(bytes)
            }
            writtenInline += chunk.count
            return
        }
        if !usesLanes {
            usesLanes = true
            Self.bodiesInLanes.add(1, ordering: .relaxed)
        }
        // A batch never grows past the limit: a chunk that would take it past goes in the next.
        let limit = Self.batchLimit(bodies: Self.bodiesInLanes.load(ordering: .relaxed))
        if batchBytes + chunk.count > limit { try await submitBatch() }
        batch.append(chunk)
        batchBytes += chunk.count
        if batchBytes >= limit { try await submitBatch() }
    }

    /// A lane's job: up to 256 KB (about four of the network's chunks) while at most four
    /// bodies are in the lanes, their share of ``batchBudget`` past that; a chunk alone when
    /// the share is smaller than a chunk. One job wakes a lane's thread once where single
    /// chunks woke it four times: a 1 GB sync took 1.31 -> 1.23 s (medians of 5). Sharing keeps
    /// what waits flat: 16 files of 64 MB at once peaked at 43-45 MB with 256 KB each and at
    /// 33 MB before batches.
    static func batchLimit(bodies: Int) -> Int {
        min(256 << 10, batchBudget / max(1, bodies))
    }

    deinit {
        if usesLanes { Self.bodiesInLanes.subtract(1, ordering: .relaxed) }
    }

    /// Hands the gathered chunks to the lanes as one job each.
    private func submitBatch() async throws {
        guard !batch.isEmpty else { return }
        let chunks = batch
        batch = []
        batchBytes = 0
        let fileWithHash = hashing != nil && tee != nil
        if let hashing {
            try await hashing.submit { [self] in
                for chunk in chunks {
                    try chunk.withUnsafeBytes {
                        hasher?.update($0)
                        if fileWithHash, writesFile { try file.write($0) }
                    }
                }
            }
        }
        let hashesHere = hashing == nil
        try await writing.submit { [self] in
            for chunk in chunks {
                try chunk.withUnsafeBytes { bytes in
                    if hashesHere { hasher?.update(bytes) }
                    if !fileWithHash, writesFile { try file.write(bytes) }
                    try tee?.consume(bytes)
                }
            }
        }
    }

    /// Waits for every queued chunk, then returns the digest of the whole body (`nil` when not
    /// hashing) or the first failure.
    func finish() async throws -> ContentHash? {
        try await settle()
        return hasher?.finalize()
    }

    /// Waits for every queued chunk; before the file is closed or removed, whatever happened.
    func settle() async throws {
        var failure: (any Error)?
        // What arrived last is written too: a cut download resumes after it.
        do { try await submitBatch() } catch { failure = error }
        do { try await writing.finish() } catch { failure = failure ?? error }
        do { try await hashing?.finish() } catch { failure = failure ?? error }
        if let tee {
            // A package unpacks on a thread of its own: its last files land before this returns.
            do { try await BlockingPool.run { try tee.settle() } } catch { failure = failure ?? error }
        }
        if let failure { throw failure }
    }
}
