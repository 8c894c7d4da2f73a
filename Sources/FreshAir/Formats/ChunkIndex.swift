package import Foundation

/// A large file's blocks: for each block of 4 KB, a rolling hash of it and the first 4 bytes of
/// its SHA-256.
///
/// `breeze hash` writes one beside every file of at least 8 MB, as `<file>.freshair-chunks`,
/// and lists it in the same manifest with its own digest, so a signature over the root covers
/// it. When such a file changes, a device finds each of the new file's blocks wherever it sits
/// in the copy it has (sliding the `RollingHash` over it, so content that moved by any number
/// of bytes is found), fetches the blocks it lacks with single-range `GET`s, and checks the
/// whole file's digest. Clients that do not know the format download it as any other small
/// file.
///
/// Fixed blocks rather than content-defined chunks, by measurement: every chunk must be named
/// by its length as well as its digest, and a 10 KB edit costs the two chunks around it, so a
/// 4 KB-average FastCDC index (version 1) fetched 1.4× what zsync does; blocks at fixed offsets
/// need no lengths, cost one block's worth per edit, and fall on the pages of formats that
/// change in pages (SQLite). The binary form, all integers little-endian:
///
/// ```
/// "FRCI"  version (2)  0 0 0      8 bytes
/// block size                      UInt32 (a power of two, 256 bytes to 1 MB)
/// file size                       UInt64
/// file SHA-256                    32 bytes
/// per block, ⌈size ÷ block size⌉: rolling hash (UInt32), the first 4 bytes of its SHA-256
/// ```
package struct ChunkIndex: Sendable, Hashable {
    /// What the index records of one block; both parts must match for a block of the old copy
    /// to stand for it.
    package struct Block: Sendable, Hashable {
        /// The high 32 bits of the block's `RollingHash`.
        package var rolling: UInt32
        /// The first 4 bytes of the block's SHA-256, big-endian.
        package var digest: UInt32

        /// Both parts in one value, for tables: the rolling hash in the high half, so keys in
        /// order are rolling hashes in order.
        var key: UInt64 { UInt64(rolling) << 32 | UInt64(digest) }
    }

    /// The name a chunk index has beside its file.
    package static let suffix = ".freshair-chunks"
    /// Files at least this large get one by default.
    package static let defaultThreshold: Int64 = 8 << 20
    /// 4 KB: 8 bytes of index per 4 KB of file (0.2%), a 10 KB edit costs 12 to 16 KB, and
    /// blocks fall on the pages of SQLite and most file systems.
    package static let defaultBlockSize = 4096
    /// "FRCI", the version, the block size, the file's size and SHA-256.
    static let headerSize = 52

    /// Every block is this long but the last, which holds what is left.
    package let blockSize: Int
    /// The size of the file the index describes. A device uses an index only when its size
    /// and ``fileDigest`` are what the manifest says of the file.
    package let fileSize: Int64
    /// The SHA-256 of the file the index describes.
    package let fileDigest: ContentHash
    /// The binary form, which is all an index keeps: its blocks are read from it where they
    /// are needed, so a 1 GB file's index takes the 2 MB it took on the wire, once (a copy as
    /// an array of blocks was another 2 MB, held through the whole delta).
    private let bytes: Data

    /// The blocks in file order.
    package var blocks: Blocks { Blocks(bytes: bytes) }

    /// The blocks of an index, read from its binary form.
    package struct Blocks: RandomAccessCollection, Sendable {
        fileprivate let bytes: Data
        package var startIndex: Int { 0 }
        package var endIndex: Int { (bytes.count - ChunkIndex.headerSize) / 8 }

        package subscript(index: Int) -> Block {
            // The bytes are read unchecked below: an index past the end must stop here.
            precondition(index >= 0 && index < endIndex, "block \(index) of \(endIndex)")
            let word = bytes.withUnsafeBytes {
                UInt64(
                    littleEndian: $0.loadUnaligned(fromByteOffset: ChunkIndex.headerSize + index * 8, as: UInt64.self)
                )
            }
            // The rolling hash little-endian, then the digest's first 4 bytes as they come.
            return Block(
                rolling: UInt32(truncatingIfNeeded: word),
                digest: UInt32(truncatingIfNeeded: word >> 32).byteSwapped
            )
        }
    }

    /// Where block `index` starts in the file, and its length.
    func extent(ofBlock index: Int) -> (offset: Int64, length: Int) {
        let offset = Int64(index) * Int64(blockSize)
        return (offset, Int(min(Int64(blockSize), fileSize - offset)))
    }

    /// How many blocks are `blockSize` long: all but a shorter last one.
    var wholeBlockCount: Int { Int(fileSize / Int64(blockSize)) }

    static func isValid(blockSize: Int) -> Bool {
        blockSize.nonzeroBitCount == 1 && (256...(1 << 20)).contains(blockSize)
    }

    /// Reads an index (``serialized()``'s form). Only the header is read here; the blocks are
    /// read where they are used.
    ///
    /// - Throws: `ChunkIndexError` naming `source` and what is wrong: a device then
    ///   downloads the file whole.
    package init(data: Data, source: String) throws(ChunkIndexError) {
        func fail(_ problem: String) -> ChunkIndexError { ChunkIndexError(source: source, problem: problem) }
        var reader = ByteReader(bytes: [UInt8](data.prefix(Self.headerSize)))
        guard reader.take(4) == Array("FRCI".utf8) else { throw fail("not a FreshAir chunk index (no FRCI header)") }
        guard let version = reader.take(4) else { throw fail("the header is cut short") }
        guard version == [2, 0, 0, 0] else {
            throw fail(
                version == [1, 0, 0, 0]
                    ? "version 1 (content-defined chunks) is no longer read: run `breeze hash` again"
                    : "version \(version[0]) is not 2: a newer breeze wrote it"
            )
        }
        guard let blockSize = reader.uint32(), let size = reader.uint64(), let digest = reader.take(32) else {
            throw fail("the header is cut short")
        }
        guard Self.isValid(blockSize: Int(blockSize)) else {
            throw fail("block size \(blockSize) is not a power of two from 256 bytes to 1 MB")
        }
        guard size <= UInt64(Int64.max) else { throw fail("a file of \(size) bytes is too large") }
        // Compared with the bytes present before anything is done with them: a header may claim
        // a file of 2^62 bytes (fuzzing found one asking for 34 GB in version 1).
        let count = (size + UInt64(blockSize) - 1) / UInt64(blockSize)
        let remaining = data.count - Self.headerSize
        guard count == UInt64(remaining / 8), remaining % 8 == 0 else {
            throw fail(
                "\(count) blocks of \(blockSize) bytes make \(size) bytes, but \(remaining) bytes follow the header"
            )
        }
        self.blockSize = Int(blockSize)
        fileSize = Int64(size)
        fileDigest = ContentHash(algorithm: .sha256, digest: digest)
        // A slice of a larger buffer would keep all of it, and start at another index.
        bytes = data.startIndex == 0 ? data : Data(data)
    }

    private init(blockSize: Int, fileSize: Int64, fileDigest: ContentHash, bytes: Data) {
        self.blockSize = blockSize
        self.fileSize = fileSize
        self.fileDigest = fileDigest
        self.bytes = bytes
    }

    /// An index of `blocks`, for tests and tools that make one block by block.
    init(blockSize: Int, fileSize: Int64, fileDigest: ContentHash, blocks: some Sequence<Block>) {
        var writer = Writer(blockSize: blockSize, expectedBlocks: 0)
        for block in blocks { writer.append(block) }
        self = writer.finish(fileSize: fileSize, fileDigest: fileDigest)
    }

    /// Builds an index in its binary form as blocks are hashed, so that making one holds only
    /// the bytes it will be.
    struct Writer {
        private var bytes: Data
        private let blockSize: Int

        init(blockSize: Int, expectedBlocks: Int) {
            self.blockSize = blockSize
            bytes = Data(count: ChunkIndex.headerSize)
            bytes.reserveCapacity(ChunkIndex.headerSize + expectedBlocks * 8)
        }

        mutating func append(_ block: Block) {
            withUnsafeBytes(of: block.rolling.littleEndian) { bytes.append(contentsOf: $0) }
            withUnsafeBytes(of: block.digest.bigEndian) { bytes.append(contentsOf: $0) }
        }

        /// The index; its header is written now that the file's size and digest are known.
        consuming func finish(fileSize: Int64, fileDigest: ContentHash) -> ChunkIndex {
            var header = ByteWriter(bytes: Array("FRCI".utf8) + [2, 0, 0, 0])
            header.littleEndian(UInt32(blockSize))
            header.littleEndian(UInt64(fileSize))
            header.bytes += fileDigest.bytes
            bytes.replaceSubrange(0..<ChunkIndex.headerSize, with: header.bytes)
            return ChunkIndex(blockSize: blockSize, fileSize: fileSize, fileDigest: fileDigest, bytes: bytes)
        }
    }

    /// The binary form.
    package func serialized() -> Data { bytes }

    /// What an index records of `bytes`, one block.
    static func block(of bytes: UnsafeRawBufferPointer) -> Block {
        Block(rolling: UInt32(truncatingIfNeeded: RollingHash.of(bytes) >> 32), digest: ContentHash.prefix32(bytes))
    }

}

/// A chunk index that cannot be used; the file is then downloaded whole.
package struct ChunkIndexError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The index's URL or path.
    package var source: String
    /// What is wrong with it.
    package var problem: String
    package var description: String { "\(source): \(problem)" }
}
