import Foundation

/// Hashes a large body on its own thread while the caller writes it to disk, so the two
/// costs overlap on separate cores instead of taking turns. Chunks are handed over without
/// copying (an array's storage is shared, not duplicated); at most `capacity` wait, which keeps
/// memory flat when hashing falls behind.
final class BackgroundHasher: @unchecked Sendable {
    private let condition = NSCondition()
    private var queue: [[UInt8]] = []
    private var finished = false
    private var digest: ContentHash?
    private let capacity = 64

    /// Touched only by the hashing thread until it publishes `digest`.
    private var hasher: ContentHasher

    /// Starts hashing on a new thread, continuing from `hasher` (which may already cover a
    /// resumed prefix).
    init(continuing hasher: ContentHasher) {
        self.hasher = hasher
        Thread { [self] in run() }.start()
    }

    private func run() {
        while true {
            condition.lock()
            while queue.isEmpty && !finished { condition.wait() }
            if queue.isEmpty && finished {
                digest = hasher.finalize()
                condition.broadcast()
                condition.unlock()
                return
            }
            let chunk = queue.removeFirst()
            condition.broadcast()
            condition.unlock()
            chunk.withUnsafeBytes { hasher.update($0) }
        }
    }

    func add(_ chunk: [UInt8]) {
        condition.lock()
        while queue.count >= capacity { condition.wait() }
        queue.append(chunk)
        condition.broadcast()
        condition.unlock()
    }

    /// Waits for every chunk to be hashed and returns the digest.
    func finalize() -> ContentHash {
        condition.lock()
        finished = true
        condition.broadcast()
        while digest == nil { condition.wait() }
        let result = digest!
        condition.unlock()
        return result
    }
}
