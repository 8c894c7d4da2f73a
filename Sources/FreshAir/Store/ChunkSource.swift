/// Bytes a chunk delta reuses: the previous copy of a file (`InputFile`), or a previous
/// package rebuilt from the files it installed (`ReassembledPackage`).
protocol ChunkSource: AnyObject {
    /// How many bytes there are.
    var size: Int64 { get throws }
    /// Fills `buffer` from `offset`; throws if the source ends first.
    func read(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws
}

extension ChunkIndex {
    /// Indexes the file at `path` and hashes it, in one pass.
    ///
    /// - Throws: ``FreshAirError`` when the file cannot be read.
    package static func make(fileAt path: String, blockSize: Int = defaultBlockSize) throws -> ChunkIndex {
        try make(reading: InputFile(path: path), blockSize: blockSize)
    }

    /// Indexes and hashes the bytes of `source`, in one pass: a file, or a previous package
    /// rebuilt from its installed files.
    static func make(reading source: any ChunkSource, blockSize: Int) throws -> ChunkIndex {
        precondition(isValid(blockSize: blockSize), "invalid block size")
        var whole = ContentHasher(.sha256)
        let size = try source.size
        var index = Writer(blockSize: blockSize, expectedBlocks: Int((size + Int64(blockSize) - 1) / Int64(blockSize)))
        var buffer = [UInt8](repeating: 0, count: max(blockSize, (4 << 20) / blockSize * blockSize))
        var offset: Int64 = 0
        while offset < size {
            let count = Int(min(Int64(buffer.count), size - offset))
            try buffer.withUnsafeMutableBytes { raw in
                let piece = UnsafeMutableRawBufferPointer(rebasing: raw[0..<count])
                try source.read(at: offset, into: piece)
                whole.update(UnsafeRawBufferPointer(piece))
                for start in stride(from: 0, to: count, by: blockSize) {
                    index.append(
                        block(of: UnsafeRawBufferPointer(rebasing: piece[start..<min(start + blockSize, count)]))
                    )
                }
            }
            offset += Int64(count)
        }
        return index.finish(fileSize: size, fileDigest: whole.finalize())
    }
}
