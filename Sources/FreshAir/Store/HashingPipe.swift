import Foundation

/// Hashes bytes on a thread of its own while the caller reads and writes the next ones, so
/// that a pass that copies a large file and hashes it takes as long as the slower of the two,
/// not their sum (SHA-256 of 1 GB is most of a second even with the CPU's SHA extensions).
///
/// A few buffers go round: the caller fills one (``send(_:)``, as many times as it takes), the
/// hashing thread hashes it and hands it back. Only full buffers change hands: a pass of
/// thousands of small runs (a database's changed pages between kept ones) would otherwise wake
/// the hashing thread for each, and pay more for the hand-offs than for the hashing. A thread
/// of its own rather than `BlockingPool`'s: a sender waiting for a buffer must never wait for
/// a pool thread that is itself waiting.
///
/// One thread sends (``send(_:)``, then ``finish()``).
///
/// Unchecked `Sendable`: what both threads touch is guarded by `condition`; the buffer being
/// filled belongs to the one sending thread.
final class HashingPipe: @unchecked Sendable {
    // `full` (in order), `empty`, `closed` and `digest` are guarded by `condition`.
    private let condition = NSCondition()
    private var full: [(buffer: [UInt8], count: Int)] = []
    private var empty: [[UInt8]]
    private var closed = false
    private var digest: ContentHash?
    // The buffer being filled and how much of it is: the sending thread's alone.
    private var filling: [UInt8]?
    private var filled = 0
    /// Buffers handed to the hashing thread so far (read it from the sending thread).
    private(set) var handOffs = 0

    /// Starts the hashing thread, with `buffers` buffers of `bufferSize` bytes.
    init(buffers: Int = 4, bufferSize: Int = 1 << 20) {
        empty = (0..<buffers).map { _ in [UInt8](repeating: 0, count: bufferSize) }
        let thread = Thread { [self] in hashUntilClosed() }
        thread.name = "FreshAir.HashingPipe"
        thread.start()
    }

    /// Lets `fill` write into the free end of a buffer (never empty; it answers how many bytes
    /// it wrote), to be hashed after everything sent before. A `fill` that throws adds nothing.
    func send(_ fill: (UnsafeMutableRawBufferPointer) throws -> Int) rethrows {
        var buffer = filling ?? takeEmpty()
        filling = nil
        let count: Int
        do {
            count = try buffer.withUnsafeMutableBytes { [filled] in
                try fill(UnsafeMutableRawBufferPointer(rebasing: $0[filled...]))
            }
        } catch {
            filling = buffer
            throw error
        }
        filled += count
        if filled == buffer.count {
            queue(buffer)
        } else {
            filling = buffer
        }
    }

    private func takeEmpty() -> [UInt8] {
        condition.lock()
        defer { condition.unlock() }
        while empty.isEmpty { condition.wait() }
        filled = 0
        return empty.removeLast()
    }

    private func queue(_ buffer: [UInt8]) {
        condition.lock()
        full.append((buffer, filled))
        condition.broadcast()
        condition.unlock()
        filled = 0
        handOffs += 1
    }

    /// Waits for every byte sent to be hashed, ends the thread and answers the SHA-256. Call it
    /// also when sending stopped on an error, or the thread waits for ever; later calls answer
    /// the same digest.
    func finish() -> ContentHash {
        if let buffer = filling, filled > 0 { queue(buffer) }
        filling = nil
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
