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
struct BlockFinder {
    let new: ChunkIndex
    let old: any ChunkSource
    let oldSize: Int64
    /// For each of the new file's blocks, where the old copy holds the same bytes.
    private(set) var found: [Int64?]
    /// The first new block with each key, then `sameKey[i]`: the next one (or -1).
    private var firstWithKey: [UInt64: Int32] = [:]
    private var sameKey: [Int32]
    private var confirmations = 0

    /// What a search found.
    struct Found {
        /// For each of the new file's blocks, where the old copy holds the same bytes; `nil`
        /// for a block to fetch.
        var offsets: [Int64?]
        /// How many windows of the old copy were hashed to confirm a rolling-hash hit.
        var confirmations: Int
    }

    /// Where each of `new`'s blocks can be copied from in the old copy, which `open` opens
    /// (once for each part searched at once: at most `parts`, none under `partSize` bytes).
    /// `oldIndex` is used when it has `new`'s block size and the old copy's size; the caller
    /// checks that it describes the old copy (its digest).
    static func find(
        _ new: ChunkIndex,
        opening open: @escaping @Sendable () throws -> any ChunkSource,
        oldIndex: ChunkIndex?,
        parts: Int = BlockingPool.shared.threads,
        partSize: Int64 = 4 << 20
    ) throws -> Found {
        var finder = try BlockFinder(new: new, old: open())
        let regions: [Range<Int64>]
        if let oldIndex, oldIndex.blockSize == new.blockSize, oldIndex.fileSize == finder.oldSize {
            regions = finder.place(from: oldIndex)
        } else {
            regions = [0..<finder.oldSize]
        }
        try finder.search(regions, opening: open, parts: parts, partSize: partSize)
        try finder.matchLastBlock()
        return Found(offsets: finder.found, confirmations: finder.confirmations)
    }

    private init(new: ChunkIndex, old: any ChunkSource) throws {
        self.new = new
        self.old = old
        oldSize = try old.size
        found = Array(repeating: nil, count: new.blocks.count)
        sameKey = Array(repeating: -1, count: new.blocks.count)
        firstWithKey.reserveCapacity(new.blocks.count)
        for index in new.blocks.indices.reversed() {
            let key = new.blocks[index].key
            if let next = firstWithKey[key] { sameKey[index] = next }
            firstWithKey[key] = Int32(index)
        }
    }

    private var blockSize: Int { new.blockSize }

    /// A new block is whole unless it is a file's shorter last one, which only the old copy's
    /// last bytes can match (``matchLastBlock()``).
    private func isWhole(_ index: Int) -> Bool { new.extent(ofBlock: index).length == blockSize }

    /// Records `offset` for every missing whole block with `key`; whether `new` has the key.
    ///
    /// A key's blocks are placed all at once, the first time it is found, and the key is then
    /// marked done (-1): a file of zeros has one key for all its blocks and matches it at every
    /// block of the old copy, and walking the chain again each time was quadratic.
    @discardableResult
    private mutating func place(_ key: UInt64, at offset: Int64) -> Bool {
        guard var index = firstWithKey[key] else { return false }
        while index >= 0 {
            if found[Int(index)] == nil, isWhole(Int(index)) { found[Int(index)] = offset }
            index = sameKey[Int(index)]
        }
        firstWithKey[key] = -1
        return true
    }

    /// Places the blocks the old index has at its own offsets; answers the parts of the old
    /// copy whose blocks the new file does not have there, widened by a block less one byte
    /// on each side (a moved block may straddle them), for the search.
    private mutating func place(from oldIndex: ChunkIndex) -> [Range<Int64>] {
        var regions: [Range<Int64>] = []
        let reach = Int64(blockSize - 1)
        for index in oldIndex.blocks.indices {
            let (offset, length) = oldIndex.extent(ofBlock: index)
            if length == blockSize, place(oldIndex.blocks[index].key, at: offset) { continue }
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
    /// other, so one thread searches only about 700 MB a second. What the parts find is placed
    /// in file order, as one search would.
    private mutating func search(
        _ regions: [Range<Int64>],
        opening open: @escaping @Sendable () throws -> any ChunkSource,
        parts: Int,
        partSize: Int64
    ) throws {
        var missing = Set<UInt32>()  // by rolling hash: a hit is confirmed by key
        for index in new.blocks.indices where found[index] == nil && isWhole(index) {
            missing.insert(new.blocks[index].rolling)
        }
        guard !missing.isEmpty else { return }
        let searched = regions.reduce(Int64(0)) { $0 + Int64($1.count) }
        let budget = min(Int64(Int32.max), searched / Int64(blockSize) * 2 + 4096)
        let pieces = Self.split(regions, into: parts, overlap: Int64(blockSize - 1), smallest: partSize)
        let scan = RollingScan(blockSize: blockSize, missing: missing, keys: firstWithKey)
        let results = Mutex<[RollingScan.Result?]>(Array(repeating: nil, count: pieces.count))
        try BlockingPool.shared.perform(pieces.count) { part in
            let bytes = pieces[part].reduce(Int64(0)) { $0 + Int64($1.count) }
            let share = Self.share(of: budget, for: bytes, of: searched)
            let result = try scan.run(pieces[part], in: open(), budget: share)
            results.withLock { $0[part] = result }
        }
        for result in results.withLock({ $0 }) {
            guard let result else { continue }
            for hit in result.hits { place(hit.key, at: hit.offset) }
            confirmations += result.confirmations
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
        guard last >= 0, found[last] == nil, !isWhole(last) else { return }
        let length = new.extent(ofBlock: last).length
        guard oldSize >= Int64(length) else { return }
        var tail = [UInt8](repeating: 0, count: length)
        try tail.withUnsafeMutableBytes { try old.read(at: oldSize - Int64(length), into: $0) }
        if tail.withUnsafeBytes({ ChunkIndex.block(of: $0) }) == new.blocks[last] {
            found[last] = oldSize - Int64(length)
        }
    }
}

/// The rolling search of one part of the old copy (`BlockFinder`): it records where the
/// windows whose hash and SHA-256 prefix are a missing block's lie, and reads only its own
/// part, so parts can be searched at once.
private struct RollingScan: Sendable {
    /// A window the new file has a block for: its key, and where it starts in the old copy.
    struct Hit: Sendable {
        var key: UInt64
        var offset: Int64
    }

    struct Result: Sendable {
        var hits: [Hit] = []
        /// How many windows were hashed to confirm a rolling-hash hit.
        var confirmations = 0
    }

    let blockSize: Int
    /// The rolling hashes of the missing blocks.
    let missing: Set<UInt32>
    /// Every key of the new file: a confirmed window is one of its blocks, and the search
    /// jumps past it.
    let keys: [UInt64: Int32]
    /// A bit per rolling hash's low bits, 256 to 512 for each missing block (at most 8 MB):
    /// all but about one window in 256 are turned away here, without a set lookup.
    let filterBits: Int
    let filter: [UInt64]

    init(blockSize: Int, missing: Set<UInt32>, keys: [UInt64: Int32]) {
        self.blockSize = blockSize
        self.missing = missing
        self.keys = keys
        let filterBits = min(1 << 26, max(1 << 16, 1 << (Int.bitWidth - (missing.count * 256).leadingZeroBitCount)))
        var filter = [UInt64](repeating: 0, count: filterBits / 64)
        for rolling in missing {
            let (word, bit) = Self.slot(rolling, filterBits: filterBits)
            filter[word] |= bit
        }
        self.filterBits = filterBits
        self.filter = filter
    }

    private static func slot(_ hash: UInt32, filterBits: Int) -> (word: Int, bit: UInt64) {
        ((Int(hash) & (filterBits - 1)) >> 6, 1 << (UInt64(hash) & 63))
    }

    /// Searches `regions` of `old`, confirming at most `budget` windows by their SHA-256
    /// prefix: a copy crafted so that every window's rolling hash collides cannot turn the
    /// search into a hash of every byte.
    func run(_ regions: [Range<Int64>], in old: any ChunkSource, budget: Int) throws -> Result {
        var result = Result()
        var hashesLeft = budget
        let capacity = max(4 << 20, 4 * blockSize)
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
                        let (word, bit) = Self.slot(hash, filterBits: filterBits)
                        if filter[word] & bit != 0, missing.contains(hash) {
                            guard hashesLeft > 0 else { return local }
                            hashesLeft -= 1
                            result.confirmations += 1
                            let key = UInt64(hash) << 32 | UInt64(ContentHash.prefix32(bytes))
                            if keys[key] != nil {
                                result.hits.append(Hit(key: key, offset: start + Int64(local)))
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
        return result
    }
}
