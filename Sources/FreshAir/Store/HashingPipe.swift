import Foundation

/// Hashes bytes on a thread of its own while the caller reads and writes the next ones, so
/// that a pass that copies a large file and hashes it takes as long as the slower of the two,
/// not their sum (SHA-256 of 1 GB is most of a second even with the CPU's SHA extensions).
///
/// A `BytePipe` whose consumer is a SHA-256: only full buffers change hands, since a pass of
/// thousands of small runs (a database's changed pages between kept ones) would otherwise
/// wake the hashing thread for each, and pay more for the hand-offs than for the hashing.
///
/// One thread sends (``send(_:)``, then ``finish()``).
///
/// Unchecked `Sendable`: `hasher` is touched by the pipe's thread while bytes are sent, and by
/// the sending thread only once ``finish()`` has ended the pipe's thread.
final class HashingPipe: @unchecked Sendable {
    private final class Hashing: @unchecked Sendable {
        var hasher = ContentHasher(.sha256)
        var digest: ContentHash?
    }

    private let hashing = Hashing()
    private let pipe: BytePipe

    /// Starts the hashing thread, with `buffers` buffers of `bufferSize` bytes.
    init(buffers: Int = 4, bufferSize: Int = 1 << 20) {
        pipe = BytePipe(name: "FreshAir.HashingPipe", buffers: buffers, bufferSize: bufferSize) {
            [hashing] bytes, _ in hashing.hasher.update(bytes)
        }
    }

    /// Lets `fill` write into the free end of a buffer (never empty; it answers how many bytes
    /// it wrote), to be hashed after everything sent before. A `fill` that throws adds nothing.
    func send(_ fill: (UnsafeMutableRawBufferPointer) throws -> Int) rethrows {
        try pipe.send(fill)
    }

    /// Buffers handed to the hashing thread so far.
    var handOffs: Int { pipe.handOffs }

    /// Waits for every byte sent to be hashed, ends the thread and answers the SHA-256. Call it
    /// also when sending stopped on an error, or the thread waits for ever; later calls answer
    /// the same digest.
    func finish() -> ContentHash {
        if let digest = hashing.digest { return digest }
        try? pipe.finish()  // hashing never throws
        let digest = hashing.hasher.finalize()
        hashing.digest = digest
        return digest
    }
}
