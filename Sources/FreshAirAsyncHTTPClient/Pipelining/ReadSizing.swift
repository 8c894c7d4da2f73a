import NIOCore
import Synchronization

/// How much one socket read of a ``PipeliningTransport`` may bring: up to 512 KB while few
/// large answers stream, less as more do, so that what waits between the sockets and the disk
/// stays about the same.
///
/// A read's buffer travels whole: it is the chunk a body's task takes, and the chunk waits in
/// the file writer's queues (`BodySink`, three or four chunks a body). On a fresh ext4 in RAM:
/// - one 1 GB file: 1.74 → 1.56 s (medians of 15, old and new taking turns). Fixed caps, 5
///   rounds: 512 KB 1.23 s against 1.71 s at 64 KB (fewer reads, writes and chunks to pass
///   along); 1 MB 1.20 s but a 32 MB peak; 2 MB slower (1.51 s);
/// - a budget of 2 MB (256 KB reads for 8 answers, 128 KB for 16) took 16 files of 64 MB from
///   1.51 to 1.33 s, but four packages unpacking at once, whose chunks wait for the inflater,
///   peaked at 36-39 MB against 31 MB. With 1 MB they peak at 33 MB, and the 16 files take
///   their old time.
final class ReadSizing: Sendable {
    /// The smallest and largest reads it allows: NIO's default largest, and a size past which
    /// reads cost more memory than they save time (1 MB: 1.20 s against 1.29 s, 32 MB against
    /// 29 MB peak; 2 MB: slower).
    static let smallest = 64 << 10
    static let largest = 512 << 10
    /// What one read of each streaming answer may add up to.
    static let budget = 1 << 20

    /// Large (or unknown) answers asked for and not yet read to their end.
    private let streamingCount = Atomic<Int>(0)

    /// The largest read for a connection while `streaming` large answers stream: their share of
    /// ``budget``, rounded down to a power of two, within ``smallest`` and ``largest``.
    static func largestRead(streaming: Int) -> Int {
        let share = budget / max(1, streaming)
        let powerOfTwo = 1 << (Int.bitWidth - 1 - share.leadingZeroBitCount)
        return min(largest, max(smallest, powerOfTwo))
    }

    /// The largest read now.
    var largestRead: Int { Self.largestRead(streaming: streamingNow) }

    /// Large answers streaming now.
    var streamingNow: Int { streamingCount.load(ordering: .relaxed) }

    /// Runs `body`, a request whose answer may be large, counted as streaming while it runs.
    func streaming<Result>(_ body: () async throws -> Result) async rethrows -> Result {
        streamingCount.add(1, ordering: .relaxed)
        defer { streamingCount.subtract(1, ordering: .relaxed) }
        return try await body()
    }
}

/// NIO's adaptive read sizes (growing while reads fill their buffer, shrinking while they come
/// back half empty), capped by the transport's ``ReadSizing`` at each read.
struct SharedReadAllocator: RecvByteBufferAllocator {
    private var adaptive = AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 2048, maximum: ReadSizing.largest)
    let sizing: ReadSizing

    init(sizing: ReadSizing) {
        self.sizing = sizing
    }

    func nextBufferSize() -> Int? {
        min(adaptive.nextBufferSize() ?? ReadSizing.smallest, sizing.largestRead)
    }

    func buffer(allocator: ByteBufferAllocator) -> ByteBuffer {
        allocator.buffer(capacity: nextBufferSize()!)
    }

    mutating func record(actualReadBytes: Int) -> Bool {
        adaptive.record(actualReadBytes: actualReadBytes)
    }
}
