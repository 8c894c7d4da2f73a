/// The whole blocks of a new file's `ChunkIndex` in the order of their keys, for
/// `BlockFinder`'s lookups: which blocks have a key (a *run* of neighbours in that order), and
/// the rolling hashes of runs in order.
///
/// 4 bytes a block, and a bucket table of 1 to 2 bytes a block: the dictionary of keys and the
/// chain of blocks sharing one that it replaces took some 28 bytes a block (7 MB for a 1 GB
/// file). A key starts with the high bits of a rolling hash, which are spread evenly, so its
/// bucket is its top bits and holds about two blocks; each bucket is kept in key order, so even
/// an index crafted to put every key in one bucket costs a binary search, not a walk.
struct BlockKeyTable: Sendable {
    let blocks: ChunkIndex.Blocks
    /// The whole blocks' numbers, in key order.
    let order: [Int32]
    /// `order[starts[b]..<starts[b + 1]]` holds the blocks whose keys' top bits are `b`.
    private let starts: [Int32]
    /// 64 less the bits that pick a bucket.
    private let shift: UInt64

    /// A table of the first `count` blocks of `blocks` (the whole ones).
    init(_ blocks: ChunkIndex.Blocks, count: Int) {
        precondition(count < Int(Int32.max), "an index of more than 2^31 blocks")
        self.blocks = blocks
        // About two blocks a bucket.
        let bucketBits = min(30, max(0, Int.bitWidth - (count >> 2).leadingZeroBitCount))
        shift = UInt64(64 - bucketBits)
        var starts = [Int32](repeating: 0, count: (1 << bucketBits) + 1)
        for block in 0..<count { starts[Int(blocks[block].key >> shift) + 1] += 1 }
        for bucket in 0..<(1 << bucketBits) { starts[bucket + 1] += starts[bucket] }
        var order = [Int32](repeating: 0, count: count)
        var next = starts
        for block in 0..<count {
            let bucket = Int(blocks[block].key >> shift)
            order[Int(next[bucket])] = Int32(block)
            next[bucket] += 1
        }
        next = []
        for bucket in 0..<(1 << bucketBits) {
            let range = Int(starts[bucket])..<Int(starts[bucket + 1])
            if range.count > 1 { order[range].sort { blocks[Int($0)].key < blocks[Int($1)].key } }
        }
        self.order = order
        self.starts = starts
    }

    /// The key of the block at `position` in ``order``.
    func key(at position: Int) -> UInt64 { blocks[Int(order[position])].key }

    /// The positions in ``order`` of the blocks with `key`: empty when there are none.
    func run(of key: UInt64) -> Range<Int> {
        let bucket = Int(key >> shift)
        let end = Int(starts[bucket + 1])
        let first = (Int(starts[bucket])..<end).firstPosition { self.key(at: $0) >= key }
        guard first < end, self.key(at: first) == key else { return first..<first }
        return first..<((first + 1)..<end).firstPosition { self.key(at: $0) > key }
    }

    /// Calls `body` with the positions of every run, in key order.
    func forEachRun(_ body: (Range<Int>) throws -> Void) rethrows {
        var start = 0
        while start < order.count {
            let key = key(at: start)
            var end = start + 1
            while end < order.count, self.key(at: end) == key { end += 1 }
            try body(start..<end)
            start = end
        }
    }
}
