import Foundation

/// Hashes bytes on a thread of its own while the caller reads and writes the next ones, so
/// that a pass that copies a large file and hashes it takes as long as the slower of the two,
/// not their sum (SHA-256 of 1 GB is most of a second even with the CPU's SHA extensions).
///
/// A few buffers go round: the caller fills one (``send(_:)``), the hashing thread hashes it
/// and hands it back. A thread of its own rather than ``BlockingPool``'s: a sender waiting for
/// a buffer must never wait for a pool thread that is itself waiting.
final class HashingPipe: @unchecked Sendable {
    // `full` (in order), `empty`, `closed` and `digest` are guarded by `condition`.
    private let condition = NSCondition()
    private var full: [(buffer: [UInt8], count: Int)] = []
    private var empty: [[UInt8]]
    private var closed = false
    private var digest: ContentHash?

    /// Starts the hashing thread, with `buffers` buffers of `bufferSize` bytes.
    init(buffers: Int = 4, bufferSize: Int = 1 << 20) {
        empty = (0..<buffers).map { _ in [UInt8](repeating: 0, count: bufferSize) }
        let thread = Thread { [self] in hashUntilClosed() }
        thread.name = "FreshAir.HashingPipe"
        thread.start()
    }

    /// Lets `fill` write into a free buffer (it answers how many bytes it wrote), then queues
    /// those bytes to be hashed after everything sent before.
    func send(_ fill: (UnsafeMutableRawBufferPointer) throws -> Int) rethrows {
        condition.lock()
        while empty.isEmpty { condition.wait() }
        var buffer = empty.removeLast()
        condition.unlock()
        let count: Int
        do {
            count = try buffer.withUnsafeMutableBytes { try fill($0) }
        } catch {
            condition.lock()
            empty.append(buffer)
            condition.unlock()
            throw error
        }
        condition.lock()
        full.append((buffer, count))
        condition.broadcast()
        condition.unlock()
    }

    /// Waits for every byte sent to be hashed, ends the thread and answers the SHA-256. Call it
    /// also when sending stopped on an error, or the thread waits for ever; later calls answer
    /// the same digest.
    func finish() -> ContentHash {
        condition.lock()
        defer { condition.unlock() }
        closed = true
        condition.broadcast()
        while digest == nil { condition.wait() }
        return digest!
    }

    private func hashUntilClosed() {
        var hasher = ContentHasher(.sha256)
        while true {
            condition.lock()
            while full.isEmpty && !closed { condition.wait() }
            if full.isEmpty {
                digest = hasher.finalize()
                condition.broadcast()
                condition.unlock()
                return
            }
            let (buffer, count) = full.removeFirst()
            condition.unlock()
            buffer.withUnsafeBytes { hasher.update(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
            condition.lock()
            empty.append(buffer)
            condition.broadcast()
            condition.unlock()
        }
    }
}
