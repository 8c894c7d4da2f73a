import Synchronization

/// A digest (or none) and a size (or none) for each position of a list, 41 bytes each: in
/// memory while the list is short, and past ``bufferRecords`` positions in an unnamed file in
/// a folder of the update, written as the list grows and read back a block at a time.
///
/// Digests and sizes are a plan's largest part; in an unnamed file they cost no memory but one
/// block of reading and one of writing, and a process that is killed leaves nothing behind.
///
/// Where the file cannot be made or written (a full disk), the list stays in memory: a slower
/// sync never becomes a failed one. A read of the file that fails (an I/O error on the
/// device) stops the process, as any fault of its own memory would: the last good version
/// is untouched, and no file is ever checked against a digest that was not read.
struct DigestsAndSizes: Sendable {
    static let recordSize = 41

    /// Where a long list goes; `nil` keeps every record in memory.
    private var folder: String?
    /// How many records are kept in memory before they go to the file, and read back at once.
    let bufferRecords: Int
    /// Records `0..<written` when there is a file.
    private var file: RecordFile?
    private var written = 0
    /// The records after the file's, encoded.
    private var tail: [UInt8] = []
    private(set) var count = 0

    /// The positions, `0..<count`.
    var indices: Range<Int> { 0..<count }

    /// An empty list that goes to an unnamed file in `folder` once it passes `bufferRecords`.
    init(spillingTo folder: String? = nil, bufferRecords: Int = 1_600) {
        precondition(bufferRecords > 0)
        self.folder = folder
        self.bufferRecords = bufferRecords
    }

    /// Whether some of the records are in the file (for tests and measurements).
    var isSpilled: Bool { file != nil }

    /// How many times a block of records was read from the file (for tests and measurements).
    var blocksRead: Int { file?.blocksRead.load(ordering: .relaxed) ?? 0 }

    subscript(position: Int) -> (hash: ContentHash?, size: Int64?) {
        precondition(position >= 0 && position < count, "position \(position) of \(count)")
        guard position < written else {
            return tail.withUnsafeBytes { Self.decode($0, at: (position - written) * Self.recordSize) }
        }
        return file!.read(position, of: written)
    }

    mutating func append(hash: ContentHash?, size: Int64?) {
        Self.encode(hash: hash, size: size, into: &tail)
        count += 1
        guard folder != nil, tail.count >= bufferRecords * Self.recordSize else { return }
        makeUnique()  // a copy of a shared file leaves a short tail: written when full
        guard tail.count >= bufferRecords * Self.recordSize else { return }
        flush()
    }

    /// Removes the last record. One already in the file comes back to memory with the rest of
    /// its block, which is written again whole.
    mutating func removeLast() {
        precondition(count > 0)
        makeUnique()
        if tail.isEmpty, let file {
            written -= bufferRecords
            tail = file.takeBack(from: written, count: bufferRecords)
        }
        tail.removeLast(Self.recordSize)
        count -= 1
    }

    /// Room for `extra` more records: in memory, at most a buffer's worth once they would spill.
    mutating func reserveCapacity(_ extra: Int) {
        let records = folder == nil ? count - written + extra : min(count - written + extra, bufferRecords)
        tail.reserveCapacity(records * Self.recordSize)
    }

    /// Keeps, in order, the records whose `keep` is `true` (one for each record). The kept
    /// records go to a new file, so that a write that fails half-way loses nothing.
    mutating func keep(_ keep: [Bool]) {
        precondition(keep.count == count)
        guard keep.contains(false) else { return }
        self = rebuilt { keep[$0] }
    }

    /// Gives back the room of a buffer that is mostly empty.
    mutating func trimRoom() { tail.trimRoom() }

    /// This list's records that `keep` answers `true` for, in a file of their own.
    private func rebuilt(keeping keep: (Int) -> Bool) -> DigestsAndSizes {
        var kept = DigestsAndSizes(spillingTo: folder, bufferRecords: bufferRecords)
        file?.forEachRecord(upTo: written, blockRecords: bufferRecords) { position, hash, size in
            if keep(position) { kept.append(hash: hash, size: size) }
        }
        for position in written..<count where keep(position) {
            let (hash, size) = self[position]
            kept.append(hash: hash, size: size)
        }
        return kept
    }

    /// Writes the buffer to the file, making the file first; when it cannot, keeps every
    /// record from here on in memory.
    private mutating func flush() {
        guard let folder else { return }
        // Whole buffers only, so that `removeLast()` can take the last one back. Records once
        // written never change, but for those taken back, which the cache then forgets.
        precondition(written % bufferRecords == 0 && tail.count == bufferRecords * Self.recordSize)
        if file == nil { file = RecordFile(in: folder) }
        guard let file, file.write(tail, at: written) else {
            self.folder = nil
            return
        }
        written += tail.count / Self.recordSize
        tail.removeAll(keepingCapacity: true)
    }

    /// A file shared with a copy of this list is copied before this one changes it.
    private mutating func makeUnique() {
        guard file != nil, !isKnownUniquelyReferenced(&file) else { return }
        self = rebuilt { _ in true }
    }

    static func encode(hash: ContentHash?, size: Int64?, into bytes: inout [UInt8]) {
        let words = hash?.digestWords ?? (0, 0, 0, 0)
        let algorithm: UInt8 =
            switch hash?.algorithm {
            case nil: 0
            case .sha1: 1
            case .sha256: 2
            }
        withUnsafeBytes(of: (words.0.littleEndian, words.1.littleEndian, words.2.littleEndian, words.3.littleEndian)) {
            bytes.append(contentsOf: $0)
        }
        bytes.append(algorithm)
        withUnsafeBytes(of: (size ?? -1).littleEndian) { bytes.append(contentsOf: $0) }
    }

    static func decode(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> (hash: ContentHash?, size: Int64?) {
        func word(_ index: Int) -> UInt64 {
            UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset + 8 * index, as: UInt64.self))
        }
        let algorithm: ContentHash.Algorithm? =
            switch bytes[offset + 32] {
            case 1: .sha1
            case 2: .sha256
            default: nil
            }
        let size = Int64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset + 33, as: Int64.self))
        return (
            algorithm.map { ContentHash(algorithm: $0, words: (word(0), word(1), word(2), word(3))) },
            size >= 0 ? size : nil
        )
    }
}

/// The file behind a ``DigestsAndSizes``: written by its one owner a buffer at a time, read
/// by any thread through a cache of a few blocks of 4 KB.
private final class RecordFile: Sendable {
    let file: UnnamedFile
    private let cache = Mutex(PageCache(slots: RecordFile.cacheBlocks))
    /// Reads through the cache that missed it.
    let blocksRead = Atomic(0)

    /// A new file in `folder`; `nil` when it cannot be made.
    init?(in folder: String) {
        guard let file = UnnamedFile(in: folder) else { return nil }
        self.file = file
    }

    /// Writes `records` from record number `first`; `false` when the file could not take them.
    func write(_ records: [UInt8], at first: Int) -> Bool {
        records.withUnsafeBytes { file.write($0, at: Int64(first * DigestsAndSizes.recordSize)) }
    }

    /// Reads `count` records from record number `first`, which are to be written again: the
    /// cache forgets them.
    func takeBack(from first: Int, count: Int) -> [UInt8] {
        cache.withLock { $0.forgetAll() }
        return readRecords(from: first, count: count)
    }

    /// Records read at once for ``read(_:of:)``: 4 KB, so that a reader that jumps about (a
    /// pack's files, in path order) reads a page each time, and one in order a page a hundred.
    static let readBlock = 100

    /// Blocks kept. A sync reads each file's record as its download starts, as it lands, and for
    /// the next file's weight, a few hundred positions apart: one block would evict itself on every
    /// read. Sixteen blocks hold 1,600 positions, for 66 KB.
    static let cacheBlocks = 16

    /// Record `position` of the first `count`, through the cache: a block holds the records
    /// written when it was read, and is read again for one past them.
    func read(_ position: Int, of count: Int) -> (hash: ContentHash?, size: Int64?) {
        let (block, start) = (position / Self.readBlock, position / Self.readBlock * Self.readBlock)
        let offset = (position - start) * DigestsAndSizes.recordSize
        let bytes = cache.withLock {
            $0.page(block, length: offset + DigestsAndSizes.recordSize) { _ in
                blocksRead.add(1, ordering: .relaxed)
                return readRecords(from: start, count: min(Self.readBlock, count - start))
            }
        }
        return bytes.withUnsafeBytes { DigestsAndSizes.decode($0, at: offset) }
    }

    /// Reads the first `end` records in order, a block at a time, past the cache.
    func forEachRecord(upTo end: Int, blockRecords: Int, _ body: (Int, ContentHash?, Int64?) -> Void) {
        var start = 0
        while start < end {
            let records = min(blockRecords, end - start)
            readRecords(from: start, count: records).withUnsafeBytes { raw in
                for index in 0..<records {
                    let (hash, size) = DigestsAndSizes.decode(raw, at: index * DigestsAndSizes.recordSize)
                    body(start + index, hash, size)
                }
            }
            start += records
        }
    }

    private func readRecords(from first: Int, count: Int) -> [UInt8] {
        file.read(at: Int64(first * DigestsAndSizes.recordSize), count: count * DigestsAndSizes.recordSize)
    }
}
