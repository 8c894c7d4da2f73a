import Foundation
import Synchronization

/// Finds the blocks of a new file (its `ChunkIndex`) in the copy a device has, so that only
/// the others are fetched.
///
/// Two ways, cheapest first. The old copy's own index, when one describes it, places every
/// block that did not move without reading a byte. The rest of the old copy (all of it when
/// there is no index) is searched by sliding a `RollingHash` over it one byte at a time: a
/// window whose hash is a missing block's is confirmed by its SHA-256 prefix, and the search
/// then jumps a whole block, so content that moved by any number of bytes is found at the cost
/// of one hash per block. Matches rest on 64 bits, so the delta checks the assembled file's
/// whole SHA-256 before anything is installed.
///
/// What it holds grows by some 21 bytes a block of the new file (the index's 8, where each block
/// is found 8, its place in key order 4 and 1 to 2 of buckets), and 8 to 16 bytes a block still
/// missing when the search starts (the filter and the sorted rolling hashes): about 6 MB for a
/// 1 GB file, where a dictionary, a set and a one-bit filter took 33 MB.
struct BlockFinder {
    let new: ChunkIndex
    let old: any ChunkSource
    let oldSize: Int64
    /// The new file's whole blocks in key order.
    private let table: BlockKeyTable
    /// Where the old copy holds each new block; -1 where it was not found. A key's blocks are
    /// placed together: until ``expandRuns()`` only the first of each run in key order (its
    /// *head*) holds the run's offset, so a file of zeros (one key for every block) is placed
    /// at the cost of one block each time its key is found.
    private var placements: [Int64]
    private var confirmations = 0
    private var searchedBytes: Int64 = 0

    /// What a search found.
    struct Found {
        /// For each of the new file's blocks, where the old copy holds the same bytes; `nil`
        /// for a block to fetch.
        var offsets: Placements
        /// How many windows of the old copy were hashed to confirm a rolling-hash hit.
        var confirmations: Int
        /// How many bytes of the old copy the rolling search went through (a sampled search
        /// that found nothing stops at the sample).
        var searched: Int64 = 0
    }

    /// For each of a new file's blocks, where the old copy holds the same bytes, or `nil`:
    /// 8 bytes a block.
    struct Placements: RandomAccessCollection, Sendable {
        fileprivate let offsets: [Int64]
        var startIndex: Int { 0 }

        fileprivate init(offsets: [Int64]) {
            self.offsets = offsets
        }

        /// Placements given one by one (tests, fuzzing); offsets must not be negative.
        init(_ offsets: some Sequence<Int64?>) {
            self.offsets = offsets.map { $0 ?? -1 }
        }

        var endIndex: Int { offsets.count }
        subscript(index: Int) -> Int64? { offsets[index] < 0 ? nil : offsets[index] }
    }

    /// Where each of `new`'s blocks can be copied from in the old copy, which `open` opens
    /// (once for each part searched at once: at most `parts`, none under `partSize` bytes).
    /// `oldIndex` is used when it has `new`'s block size and the old copy's size, and let go
    /// before the search; the caller checks that it describes the old copy (its digest).
    static func find(
        _ new: ChunkIndex,
        opening open: @escaping @Sendable () throws -> any ChunkSource,
        oldIndex: consuming ChunkIndex?,
        parts: Int = BlockingPool.shared.threads,
        partSize: Int64 = 4 << 20
    ) throws -> Found {
        var finder = try BlockFinder(new: new, old: open())
        var regions = [0..<finder.oldSize]
        if let index = oldIndex, index.blockSize == new.blockSize, index.fileSize == finder.oldSize {
            regions = finder.place(from: index)
        }
        oldIndex = nil
        // A large search first tries a few small windows spread over it: when none holds a block
        // of the new file, the file was rewritten, and searching the rest would cost about what
        // fetching it does (256 MiB: 1.0 s of search before a 0.4 s download). The caller then
        // fetches it whole; a misjudged file costs bytes, never correctness.
        if let sample = Self.sample(of: regions, blockSize: Int64(new.blockSize)) {
            let placedBefore = finder.placedCount
            try finder.search(sample, opening: open, parts: parts, partSize: partSize)
            if finder.placedCount == placedBefore {
                finder.expandRuns()
                return Found(
                    offsets: Placements(offsets: finder.placements),
                    confirmations: finder.confirmations,
                    searched: finder.searchedBytes
                )
            }
        }
        try finder.search(regions, opening: open, parts: parts, partSize: partSize)
        try finder.matchLastBlock()
        finder.expandRuns()
        return Found(
            offsets: Placements(offsets: finder.placements),
            confirmations: finder.confirmations,
            searched: finder.searchedBytes
        )
    }

    /// Searches of at least this many bytes are sampled first (see ``sample(of:blockSize:)``).
    static let sampledSearch: Int64 = 64 << 20

    /// Sixteen windows of 256 KiB (at least four blocks), evenly spread over `regions`, when
    /// they add up to ``sampledSearch`` or more; `nil` for a smaller search, done whole.
    static func sample(of regions: [Range<Int64>], blockSize: Int64) -> [Range<Int64>]? {
        let total = regions.reduce(Int64(0)) { $0 + Int64($1.count) }
        guard total >= sampledSearch else { return nil }
        let (windows, length) = (Int64(16), max(256 << 10, 4 * blockSize))
        var sample: [Range<Int64>] = []
        for window in 0..<windows {
            // The window's start, counted through the regions as if they were one run of bytes.
            var skip = total * window / windows
            for region in regions {
                if skip < Int64(region.count) {
                    let start = region.lowerBound + skip
                    sample.append(start..<min(region.upperBound, start + length))
                    break
                }
                skip -= Int64(region.count)
            }
        }
        return sample
    }

    /// How many runs of the new file's blocks are placed so far.
    private var placedCount: Int {
        var count = 0
        table.forEachRun { run in if placements[head(of: run)] >= 0 { count += 1 } }
        return count
    }

    private init(new: ChunkIndex, old: any ChunkSource) throws {
        self.new = new
        self.old = old
        oldSize = try old.size
        table = BlockKeyTable(new.blocks, count: new.wholeBlockCount)
        placements = Array(repeating: -1, count: new.blocks.count)
    }

    private var blockSize: Int { new.blockSize }

    /// The block that holds the offset of the run at `positions` (in key order).
    private func head(of positions: Range<Int>) -> Int { Int(table.order[positions.lowerBound]) }

    /// Places the whole blocks with `key` at `offset`, unless they are placed; whether `new`
    /// has the key.
    @discardableResult
    private mutating func place(_ key: UInt64, at offset: Int64) -> Bool {
        let run = table.run(of: key)
        guard !run.isEmpty else { return false }
        if placements[head(of: run)] < 0 { placements[head(of: run)] = offset }
        return true
    }

    /// Places the blocks the old index has at its own offsets; answers the parts of the old
    /// copy whose blocks the new file does not have there, widened by a block less one byte
    /// on each side (a moved block may straddle them), for the search.
    private mutating func place(from oldIndex: ChunkIndex) -> [Range<Int64>] {
        var regions: [Range<Int64>] = []
        let reach = Int64(blockSize - 1)
        let blocks = oldIndex.blocks
        for index in blocks.indices {
            let (offset, length) = oldIndex.extent(ofBlock: index)
            if length == blockSize, place(blocks[index].key, at: offset) { continue }
            let region = max(0, offset - reach)..<min(oldSize, offset + Int64(length) + reach)
            if let last = regions.last, last.upperBound >= region.lowerBound {
                regions[regions.count - 1] = last.lowerBound..<region.upperBound
            } else {
                regions.append(region)
            }
        }
        return regions
    }

    /// Slides the rolling hash over `regions` of the old copy for the whole blocks still
    /// missing, in up to `parts` parts (of `partSize` bytes at least) at once on
    /// `BlockingPool`'s threads: the hash is a chain of multiplications, one byte after the
    /// other, so one thread searches only about 700 MB a second. A run found by several windows
    /// takes the first in file order, as one search would.
    private mutating func search(
        _ regions: [Range<Int64>],
        opening open: @escaping @Sendable () throws -> any ChunkSource,
        parts: Int,
        partSize: Int64
    ) throws {
        // The runs still missing, and their rolling hashes in order (keys in order are).
        var searching = Bitmap(count: table.order.count)
        var missing: [UInt32] = []
        table.forEachRun { run in
            guard placements[head(of: run)] < 0 else { return }
            searching.insert(run.lowerBound)
            let rolling = UInt32(truncatingIfNeeded: table.key(at: run.lowerBound) >> 32)
            if missing.last != rolling { missing.append(rolling) }
        }
        guard !missing.isEmpty else { return }
        let searched = regions.reduce(Int64(0)) { $0 + Int64($1.count) }
        searchedBytes += searched
        let budget = min(Int64(Int32.max), searched / Int64(blockSize) * 2 + 4096)
        let pieces = Self.split(regions, into: parts, overlap: Int64(blockSize - 1), smallest: partSize)
        let scan = RollingScan(blockSize: blockSize, missing: missing, table: table)
        // Parts place what they find as they find it, the first offset in file order winning.
        let shared = Mutex((placements: [Int64](), confirmations: 0))
        shared.withLock { swap(&$0.placements, &placements) }
        defer { shared.withLock { swap(&$0.placements, &placements) } }
        try BlockingPool.shared.perform(pieces.count) { [table, searching] part in
            let bytes = pieces[part].reduce(Int64(0)) { $0 + Int64($1.count) }
            let share = Self.share(of: budget, for: bytes, of: searched)
            let confirmed = try scan.run(pieces[part], in: open(), budget: share) { run, offset in
                guard searching.contains(run.lowerBound) else { return }
                let head = Int(table.order[run.lowerBound])
                shared.withLock {
                    if $0.placements[head] < 0 || offset < $0.placements[head] { $0.placements[head] = offset }
                }
            }
            shared.withLock { $0.confirmations += confirmed }
        }
        confirmations += shared.withLock { $0.confirmations }
    }

    /// Gives each run's offset, held by its head, to every block of the run.
    private mutating func expandRuns() {
        table.forEachRun { run in
            let offset = placements[head(of: run)]
            guard offset >= 0 else { return }
            for position in run.dropFirst() { placements[Int(table.order[position])] = offset }
        }
    }

    /// A part's share of the search's `budget` of SHA-256 checks, by its `bytes` of the
    /// `searched` whole; at least one. In 128 bits: `budget` times `bytes` passes 2^63 for an
    /// old copy of some 140 GB.
    static func share(of budget: Int64, for bytes: Int64, of searched: Int64) -> Int {
        let share = Int128(budget) * Int128(min(bytes, searched)) / Int128(max(1, searched))
        return max(1, Int(share))
    }

    /// `regions` cut into at most `count` runs of about equal bytes, none smaller than
    /// `smallest` unless all are; a region cut in two is searched up to `overlap` bytes
    /// past the cut, so that every window lies whole in one part.
    static func split(
        _ regions: [Range<Int64>],
        into count: Int,
        overlap: Int64,
        smallest: Int64
    ) -> [[Range<Int64>]] {
        let total = regions.reduce(Int64(0)) { $0 + Int64($1.count) }
        let count = Int(max(1, min(Int64(max(1, count)), total / max(1, smallest))))
        guard count > 1 else { return [regions] }
        let share = (total + Int64(count) - 1) / Int64(count)
        var parts: [[Range<Int64>]] = [[]]
        var room = share
        for region in regions {
            var start = region.lowerBound
            while region.upperBound - start > room, parts.count < count {
                let cut = start + room
                parts[parts.count - 1].append(start..<min(region.upperBound, cut + overlap))
                parts.append([])
                (start, room) = (cut, share)
            }
            parts[parts.count - 1].append(start..<region.upperBound)
            room -= region.upperBound - start
        }
        return parts
    }

    /// A file's last block, when shorter than the others, can only be the old copy's last bytes.
    private mutating func matchLastBlock() throws {
        let last = new.blocks.count - 1
        guard last >= 0, last >= new.wholeBlockCount, placements[last] < 0 else { return }
        let length = new.extent(ofBlock: last).length
        guard oldSize >= Int64(length) else { return }
        var tail = [UInt8](repeating: 0, count: length)
        try tail.withUnsafeMutableBytes { try old.read(at: oldSize - Int64(length), into: $0) }
        if tail.withUnsafeBytes({ ChunkIndex.block(of: $0) }) == new.blocks[last] {
            placements[last] = oldSize - Int64(length)
        }
    }
}

/// The rolling search of one part of the old copy (`BlockFinder`): it reports the windows whose
/// hash and SHA-256 prefix are a new block's, and reads only its own part, so parts can be
/// searched at once.
private struct RollingScan: Sendable {
    let blockSize: Int
    /// The rolling hashes of the runs still missing, in order.
    let missing: [UInt32]
    let filter: RollingFilter
    /// Every key of the new file: a confirmed window is one of its blocks, and the search
    /// jumps past it.
    let table: BlockKeyTable

    init(blockSize: Int, missing: [UInt32], table: BlockKeyTable) {
        self.blockSize = blockSize
        self.missing = missing
        self.table = table
        filter = RollingFilter(missing)
    }

    /// Whether a missing run has the rolling hash `hash`: the filter first, which turns away
    /// almost every window, then a binary search.
    @inline(__always)
    private func isMissing(_ hash: UInt32) -> Bool {
        guard filter.mayContain(hash) else { return false }
        let first = missing.indices.firstPosition { missing[$0] >= hash }
        return first < missing.count && missing[first] == hash
    }

    /// Searches `regions` of `old`, confirming at most `budget` windows by their SHA-256
    /// prefix (a copy crafted so that every window's rolling hash collides cannot turn the
    /// search into a hash of every byte), and calls `found` with the run (positions in key
    /// order) of each confirmed window and where it starts. Answers how many windows it
    /// confirmed.
    func run(
        _ regions: [Range<Int64>],
        in old: any ChunkSource,
        budget: Int,
        found: (Range<Int>, Int64) -> Void
    ) throws -> Int {
        var confirmations = 0
        var hashesLeft = budget
        // 256 KB reads: 1 MB ones were no faster (a 1 GB file shifted off the grid), and each part
        // holds one.
        let capacity = max(256 << 10, 4 * blockSize)
        var buffer = [UInt8](repeating: 0, count: capacity)
        var rolling = RollingHash(window: blockSize)
        let window = blockSize
        for region in regions {
            var position = region.lowerBound
            while position + Int64(window) <= region.upperBound, hashesLeft > 0 {
                let count = Int(min(Int64(capacity), region.upperBound - position))
                try buffer.withUnsafeMutableBytes {
                    try old.read(at: position, into: UnsafeMutableRawBufferPointer(rebasing: $0[0..<count]))
                }
                let start = position
                let advanced = buffer.withUnsafeBytes { raw -> Int in
                    var local = 0
                    var current = false
                    while local + window <= count {
                        let bytes = UnsafeRawBufferPointer(rebasing: raw[local..<(local + window)])
                        if !current {
                            rolling.start(bytes)
                            current = true
                        }
                        let hash = rolling.recorded
                        if isMissing(hash) {
                            guard hashesLeft > 0 else { return local }
                            hashesLeft -= 1
                            confirmations += 1
                            let run = table.run(of: UInt64(hash) << 32 | UInt64(ContentHash.prefix32(bytes)))
                            if !run.isEmpty {
                                found(run, start + Int64(local))
                                local += window
                                current = false
                                continue
                            }
                        }
                        guard local + window < count else { return local + 1 }  // the next window starts the next read
                        rolling.roll(out: raw[local], in: raw[local + window])
                        local += 1
                    }
                    return local
                }
                position = start + Int64(advanced)
            }
        }
        return confirmations
    }
}

/// A Bloom filter of rolling hashes: three bits each, in 32 to 64 bits a hash (4 MB at most).
/// A window whose hash no missing block has passes it about once in 1,400 to 10,000. The filter
/// it replaced, one bit a hash in 256 to 512, turned away as many but took 8 MB for a 1 GB file
/// shifted off the block grid.
private struct RollingFilter: Sendable {
    private var bits: Bitmap
    private let shift: UInt64
    private let mask: UInt64

    init(_ hashes: [UInt32]) {
        let wanted = max(1 << 12, hashes.count * 32)
        let width = min(25, Int.bitWidth - (wanted - 1).leadingZeroBitCount)
        bits = Bitmap(count: 1 << width)
        shift = UInt64(64 - width)
        mask = (1 << UInt64(width)) - 1
        for hash in hashes {
            let (first, step) = probes(hash)
            for probe in 0..<UInt64(3) { bits.insert(Int((first &+ probe &* step) & mask)) }
        }
    }

    /// Where the bits of `hash` start, and the step between them (odd, so the three differ).
    @inline(__always)
    private func probes(_ hash: UInt32) -> (first: UInt64, step: UInt64) {
        ((UInt64(hash) &* 0x9E37_79B9_7F4A_7C15) >> shift, (UInt64(hash) &* 0xC2B2_AE3D_27D4_EB4F) >> shift | 1)
    }

    @inline(__always)
    func mayContain(_ hash: UInt32) -> Bool {
        let (first, step) = probes(hash)
        return bits.contains(Int(first)) && bits.contains(Int((first &+ step) & mask))
            && bits.contains(Int((first &+ 2 &* step) & mask))
    }
}

/// One bit for each of `count` things.
private struct Bitmap: Sendable {
    private var words: [UInt64]

    init(count: Int) {
        words = Array(repeating: 0, count: (count + 63) / 64)
    }

    mutating func insert(_ index: Int) {
        words[index >> 6] |= 1 << UInt64(index & 63)
    }

    @inline(__always)
    func contains(_ index: Int) -> Bool {
        words[index >> 6] & 1 << UInt64(index & 63) != 0
    }
}
