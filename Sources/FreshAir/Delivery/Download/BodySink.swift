import Foundation

/// Where a response body goes: written to its file, hashed, and handed to a tee (a package
/// unpacked as it arrives), in order, on `BlockingPool`'s threads, while the task that owns
/// the body reads the next chunk from the network.
///
/// A large body is hashed on a second lane, so that two cores share the work. A tee's work is
/// the heaviest (inflating a `.tgz` costs a core more than the network gives it), so with a
/// tee the file is written on the hashing lane, and the first lane does nothing but feed the
/// tee. Chunks are shared between lanes, not copied; at most 16 wait on each, which keeps
/// memory flat when the disk or the hash falls behind the network.
///
/// Unchecked `Sendable`: its one mutable value, `hasher`, is touched only by the jobs of one
/// lane, which run one after another; the rest never changes.
final class BodySink: @unchecked Sendable {
    private let writing = BlockingLane()
    private let hashing: BlockingLane?
    private let file: OutputFile
    private let tee: (any DownloadTee)?
    /// Touched only by the jobs of one lane, which run one after another.
    private var hasher: ContentHasher?

    /// - Parameters:
    ///   - hasher: the digest so far (a resumed body's covers the bytes already on disk), or
    ///     `nil` when the body needs none.
    ///   - hashingApart: hash on a lane of its own (worth it for large bodies only).
    init(file: OutputFile, hasher: ContentHasher?, tee: (any DownloadTee)?, hashingApart: Bool) {
        self.file = file
        self.hasher = hasher
        self.tee = tee
        hashing = hashingApart && hasher != nil ? BlockingLane() : nil
    }

    /// Queues `chunk`; suspends while the lanes are full, and rethrows an earlier chunk's failure.
    func write(_ chunk: [UInt8]) async throws {
        let fileWithHash = hashing != nil && tee != nil
        if let hashing {
            try await hashing.submit { [self] in
                try chunk.withUnsafeBytes {
                    hasher?.update($0)
                    if fileWithHash { try file.write($0) }
                }
            }
        }
        let hashesHere = hashing == nil
        try await writing.submit { [self] in
            try chunk.withUnsafeBytes { bytes in
                if hashesHere { hasher?.update(bytes) }
                if !fileWithHash { try file.write(bytes) }
                try tee?.consume(bytes)
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
        do { try await writing.finish() } catch { failure = error }
        do { try await hashing?.finish() } catch { failure = failure ?? error }
        if let tee {
            // A package unpacks on a thread of its own: its last files land before this returns.
            do { try await BlockingPool.run { try tee.settle() } } catch { failure = failure ?? error }
        }
        if let failure { throw failure }
    }
}
