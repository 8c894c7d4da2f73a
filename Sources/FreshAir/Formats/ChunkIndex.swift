import Foundation

/// A large file's content-defined chunks: where each one ends and an 8-byte digest of it.
///
/// `breeze hash` writes one beside every file of at least 8 MB, as `<file>.freshair-chunks`,
/// and lists it in the same manifest with its own digest, so a signature over the root covers
/// it. When such a file changes, a device compares the new index with the chunks of the copy
/// it has, fetches only the chunks it lacks with single-range `GET`s, and checks the whole
/// file's digest. Clients that do not know the format download it as any
/// other small file.
///
/// Chunk boundaries come from FastCDC (a gear rolling hash with normalized chunking), so an
/// insertion moves only the boundaries next to it: the chunks after it are found again at
/// their new offsets. The binary form, all integers little-endian:
///
/// ```
/// "FRCI"  version (1)  0 0 0      8 bytes
/// minimum, average, maximum       3 × UInt32 (chunk sizes)
/// file size                       UInt64
/// file SHA-256                    32 bytes
/// chunk count                     UInt32
/// per chunk: length (LEB128), the first 8 bytes of its SHA-256
/// ```
public struct ChunkIndex: Sendable, Hashable {
    /// FastCDC's sizes: no chunk shorter than `minimum` (but the last) or longer than `maximum`;
    /// `average`, a power of two, is what the cut-point masks aim for.
    public struct Parameters: Sendable, Hashable {
        /// No chunk but the last is shorter.
        public var minimum: Int
        /// What the cut-point masks aim for: a power of two.
        public var average: Int
        /// No chunk is longer: a cut is forced here.
        public var maximum: Int

        /// 4 KB on average (1 KB to 16 KB): about 10.5 bytes of index per 4 KB of file
        /// (0.26%), and a 10 KB edit costs about 15 KB.
        public static let standard = Parameters(minimum: 1 << 10, average: 4 << 10, maximum: 16 << 10)

        /// Chunk sizes; `average` must be a power of two between 256 bytes and 4 MB, with
        /// `64 <= minimum < average < maximum <= 16 MB`.
        public init(minimum: Int, average: Int, maximum: Int) {
            self.minimum = minimum
            self.average = average
            self.maximum = maximum
        }

        var isValid: Bool {
            average.nonzeroBitCount == 1 && (256...(4 << 20)).contains(average) && minimum >= 64
                && minimum < average && average < maximum && maximum <= 16 << 20
        }
    }

    /// One chunk of the file.
    public struct Chunk: Sendable, Hashable {
        /// Where it starts in the file.
        public var offset: Int64
        /// Its length in bytes.
        public var length: Int
        /// The first 8 bytes of the chunk's SHA-256, big-endian.
        public var digest: UInt64
    }

    /// The name a chunk index has beside its file.
    public static let suffix = ".freshair-chunks"
    /// Files at least this large get one by default.
    public static let defaultThreshold: Int64 = 8 << 20

    /// The chunk sizes the boundaries were found with; a device chunks its old copy alike.
    public var parameters: Parameters
    /// The size of the file the index describes. A device uses an index only when its size
    /// and ``fileDigest`` are what the manifest says of the file.
    public var fileSize: Int64
    /// The SHA-256 of the file the index describes.
    public var fileDigest: ContentHash
    /// The chunks in file order, covering it without gaps.
    public var chunks: [Chunk]

    /// Reads an index (``serialized()``'s form).
    ///
    /// - Throws: ``ChunkIndexError`` naming `source` and what is wrong: a device then
    ///   downloads the file whole.
    public init(data: Data, source: String) throws(ChunkIndexError) {
        var reader = ByteReader(bytes: [UInt8](data))
        func fail(_ problem: String) -> ChunkIndexError { ChunkIndexError(source: source, problem: problem) }
        guard reader.take(4) == Array("FRCI".utf8) else { throw fail("not a FreshAir chunk index (no FRCI header)") }
        guard reader.take(4) == [1, 0, 0, 0] else { throw fail("version is not 1: a newer breeze wrote it") }
        guard let minimum = reader.uint32(), let average = reader.uint32(), let maximum = reader.uint32(),
            let size = reader.uint64(), let digest = reader.take(32), let count = reader.uint32()
        else { throw fail("the header is cut short") }
        parameters = Parameters(minimum: Int(minimum), average: Int(average), maximum: Int(maximum))
        guard parameters.isValid else { throw fail("chunk sizes \(minimum)/\(average)/\(maximum) are out of range") }
        guard size <= UInt64(Int64.max), UInt64(count) <= size / UInt64(minimum) + 1 else {
            throw fail("\(count) chunks cannot make a file of \(size) bytes")
        }
        // Each chunk takes at least 9 bytes here: a count the document cannot hold is refused
        // before any memory is set aside for it (fuzzing found a header asking for 34 GB).
        guard Int(count) <= reader.remaining / 9 else {
            throw fail("announces \(count) chunks but holds room for at most \(reader.remaining / 9)")
        }
        fileSize = Int64(size)
        fileDigest = ContentHash(hex: digest.map { String($0, radix: 16).leftPadded(to: 2) }.joined())!
        var chunks: [Chunk] = []
        chunks.reserveCapacity(Int(count))
        var offset: Int64 = 0
        for index in 0..<Int(count) {
            guard let length = reader.leb128(), let digest = reader.uint64BigEndian() else {
                throw fail("cut short at chunk \(index) of \(count)")
            }
            let isLast = index == Int(count) - 1
            guard length >= 1, length <= UInt64(maximum), isLast || length >= UInt64(minimum) else {
                throw fail("chunk \(index) is \(length) bytes, outside \(minimum)...\(maximum)")
            }
            chunks.append(Chunk(offset: offset, length: Int(length), digest: digest))
            offset += Int64(length)
            guard offset <= fileSize else { throw fail("the chunks add up to more than \(size) bytes") }
        }
        guard offset == fileSize else { throw fail("the chunks add up to \(offset) bytes, not \(size)") }
        guard reader.isAtEnd else { throw fail("bytes follow the last chunk") }
        self.chunks = chunks
    }

    init(parameters: Parameters, fileSize: Int64, fileDigest: ContentHash, chunks: [Chunk]) {
        self.parameters = parameters
        self.fileSize = fileSize
        self.fileDigest = fileDigest
        self.chunks = chunks
    }

    /// The binary form.
    public func serialized() -> Data {
        var writer = ByteWriter(bytes: Array("FRCI".utf8) + [1, 0, 0, 0])
        writer.littleEndian(UInt32(parameters.minimum))
        writer.littleEndian(UInt32(parameters.average))
        writer.littleEndian(UInt32(parameters.maximum))
        writer.littleEndian(UInt64(fileSize))
        writer.bytes += fileDigest.bytes
        writer.littleEndian(UInt32(chunks.count))
        for chunk in chunks {
            writer.leb128(UInt64(chunk.length))
            withUnsafeBytes(of: chunk.digest.bigEndian) { writer.bytes += $0 }
        }
        return Data(writer.bytes)
    }

    /// Chunks the file at `path` and hashes it, in one pass.
    ///
    /// - Throws: ``FreshAirError`` when the file cannot be read.
    public static func make(fileAt path: String, parameters: Parameters = .standard) throws -> ChunkIndex {
        try make(reading: InputFile(path: path), parameters: parameters)
    }

    /// Chunks and hashes the bytes of `source`, in one pass: a file, or a previous package
    /// rebuilt from its installed files.
    static func make(reading source: any ChunkSource, parameters: Parameters) throws -> ChunkIndex {
        precondition(parameters.isValid, "invalid chunk parameters")
        let chunker = Chunker(parameters: parameters)
        var whole = ContentHasher(.sha256)
        var chunks: [Chunk] = []
        var buffer = [UInt8](repeating: 0, count: max(4 << 20, parameters.maximum * 2))
        let size = try source.size
        var filled = 0
        var offset: Int64 = 0  // where buffer[0] is in the source
        while true {
            let read = Int(min(Int64(buffer.count - filled), size - offset - Int64(filled)))
            try buffer.withUnsafeMutableBytes { raw in
                let target = UnsafeMutableRawBufferPointer(rebasing: raw[filled..<(filled + read)])
                try source.read(at: offset + Int64(filled), into: target)
                whole.update(UnsafeRawBufferPointer(target))
            }
            filled += read
            let atEnd = offset + Int64(filled) == size
            var start = 0
            while filled - start >= parameters.maximum || (atEnd && start < filled) {
                let length = buffer.withUnsafeBytes {
                    chunker.cut(UnsafeRawBufferPointer(rebasing: $0[start..<filled]))
                }
                let digest = buffer.withUnsafeBytes {
                    ContentHash.prefix64(UnsafeRawBufferPointer(rebasing: $0[start..<(start + length)]))
                }
                chunks.append(Chunk(offset: offset + Int64(start), length: length, digest: digest))
                start += length
            }
            if atEnd { break }
            // Keep the unchunked tail at the front, then read more behind it.
            buffer.withUnsafeMutableBytes { raw in
                raw.baseAddress!.copyMemory(from: raw.baseAddress! + start, byteCount: filled - start)
            }
            filled -= start
            offset += Int64(start)
        }
        return ChunkIndex(parameters: parameters, fileSize: size, fileDigest: whole.finalize(), chunks: chunks)
    }
}

/// FastCDC's cut-point search over a gear table fixed for every FreshAir index, so that
/// publisher and device find the same boundaries.
struct Chunker {
    let parameters: ChunkIndex.Parameters
    /// More bits before the average size (cuts rarer), fewer after (cuts likelier): chunk
    /// sizes cluster near the average. The high bits of the hash, which depend on the last
    /// 64 bytes, not the low ones, which depend on the last few.
    let strictMask: UInt64
    let looseMask: UInt64

    init(parameters: ChunkIndex.Parameters) {
        self.parameters = parameters
        let bits = parameters.average.trailingZeroBitCount
        strictMask = ~UInt64(0) << UInt64(64 - (bits + 2))
        looseMask = ~UInt64(0) << UInt64(64 - (bits - 2))
    }

    /// The length of the chunk that starts `bytes`.
    func cut(_ bytes: UnsafeRawBufferPointer) -> Int {
        let count = bytes.count
        guard count > parameters.minimum else { return count }
        let normal = min(parameters.average, count)
        let end = min(parameters.maximum, count)
        var hash: UInt64 = 0
        var index = parameters.minimum
        return Self.gear.withUnsafeBufferPointer { gear in
            while index < normal {
                hash = (hash &<< 1) &+ gear[Int(bytes[index])]
                index += 1
                if hash & strictMask == 0 { return index }
            }
            while index < end {
                hash = (hash &<< 1) &+ gear[Int(bytes[index])]
                index += 1
                if hash & looseMask == 0 { return index }
            }
            return end
        }
    }

    /// 256 pseudo-random values from SplitMix64 seeded with FreshAir's constant; changing
    /// them changes every boundary (and needs a new index version).
    static let gear: [UInt64] = {
        var state: UInt64 = 0x4672_6573_6841_6972  // "FreshAir"
        return (0..<256).map { _ in
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }()
}

/// A chunk index that cannot be used; the file is then downloaded whole.
public struct ChunkIndexError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The index's URL or path.
    public var source: String
    /// What is wrong with it.
    public var problem: String
    public var description: String { "\(source): \(problem)" }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
