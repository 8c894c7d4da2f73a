import Foundation

/// Finds the blocks of a new file (its ``ChunkIndex``) in the copy a device has, so that only
/// the others are fetched.
///
/// Two ways, cheapest first. The old copy's own index, when one describes it, places every
/// block that did not move without reading a byte. The rest of the old copy (all of it when
/// there is no index) is searched by sliding a ``RollingHash`` over it one byte at a time: a
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
    /// SHA-256 prefixes the search may still compute: a copy crafted so that every window's
    /// rolling hash collides cannot turn the search into a hash of every byte.
    private var hashesLeft = 0
    private var confirmations = 0

    /// What a search found.
    struct Found {
        /// For each of the new file's blocks, where the old copy holds the same bytes; `nil`
        /// for a block to fetch.
        var offsets: [Int64?]
        /// How many windows of the old copy were hashed to confirm a rolling-hash hit.
        var confirmations: Int
    }

    /// Where each of `new`'s blocks can be copied from in `old`. `oldIndex` is used when it
    /// has `new`'s block size and `old`'s size; the caller checks that it describes `old` (its
    /// digest).
    static func find(_ new: ChunkIndex, in old: any ChunkSource, oldIndex: ChunkIndex?) throws -> Found {
        var finder = try BlockFinder(new: new, old: old)
        let regions: [Range<Int64>]
        if let oldIndex, oldIndex.blockSize == new.blockSize, oldIndex.fileSize == finder.oldSize {
            regions = finder.place(from: oldIndex)
        } else {
            regions = [0..<finder.oldSize]
        }
        try finder.search(regions)
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
    @discardableResult
    private mutating func place(_ key: UInt64, at offset: Int64) -> Bool {
        guard var index = firstWithKey[key] else { return false }
        while index >= 0 {
            if found[Int(index)] == nil, isWhole(Int(index)) { found[Int(index)] = offset }
            index = sameKey[Int(index)]
        }
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

    /// Slides the rolling hash over `regions` of the old copy for the whole blocks still missing.
    private mutating func search(_ regions: [Range<Int64>]) throws {
        var missing: [UInt32: Int32] = [:]  // by rolling hash, one block each: a hit is confirmed by key
        for index in new.blocks.indices where found[index] == nil && isWhole(index) {
            missing[new.blocks[index].rolling] = Int32(index)
        }
        guard !missing.isEmpty else { return }
        // A bit per rolling hash's low bits, 256 to 512 for each missing block (at most 8 MB):
        // all but about one window in 256 are turned away here, without a dictionary lookup.
        let filterBits = min(1 << 26, max(1 << 16, 1 << (Int.bitWidth - (missing.count * 256).leadingZeroBitCount)))
        var filter = [UInt64](repeating: 0, count: filterBits / 64)
        func slot(_ hash: UInt32) -> (word: Int, bit: UInt64) {
            ((Int(hash) & (filterBits - 1)) >> 6, 1 << (UInt64(hash) & 63))
        }
        for rolling in missing.keys {
            let (word, bit) = slot(rolling)
            filter[word] |= bit
        }
        let searched = regions.reduce(Int64(0)) { $0 + Int64($1.count) }
        hashesLeft = Int(min(Int64(Int32.max), searched / Int64(blockSize) * 2 + 4096))

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
                        let (word, bit) = slot(hash)
                        if filter[word] & bit != 0, missing[hash] != nil {
                            guard hashesLeft > 0 else { return local }
                            hashesLeft -= 1
                            confirmations += 1
                            let key = UInt64(hash) << 32 | UInt64(ContentHash.prefix32(bytes))
                            if place(key, at: start + Int64(local)) {
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
