import Foundation

/// Builds a changed large file from the chunks of the copy a device has and the chunks it
/// lacks, fetched with single-range `GET`s (see ``ChunkIndex``).
///
/// The plan compares the new file's index with the old copy's (the index installed beside it
/// when it still describes it, else the old copy chunked here): every chunk found is copied
/// from the old copy, the rest is fetched, neighbouring ranges merged when the bytes between
/// them are fewer than ``mergeGap``. The file is assembled in its partial file, then its whole
/// SHA-256 must be the manifest's. Whatever goes wrong (a server that ignores `Range`, a chunk
/// that does not match, a plan that would fetch most of the file anyway), the caller downloads
/// the file whole: a delta never installs anything the plain path would not.
struct ChunkDelta {
    /// The new file's index, checked against the manifest's digest and size of the file.
    let index: ChunkIndex
    let url: URL
    /// The device's previous copy, and its index when one describes it.
    let oldFile: String
    let oldIndex: ChunkIndex?
    /// Bytes between two ranges to fetch below which one request fetches both.
    var mergeGap: Int64 = 8 << 10
    /// A plan fetching more than this share of the file is not worth it: the file comes whole.
    var maximumShare = 0.6
    /// Ranges larger than this are fetched in pieces, to bound memory.
    var pieceSize: Int64 = 4 << 20
    var concurrency = 4

    /// What the delta did.
    struct Outcome {
        var fetched: Int64
        var copied: Int64
        var requests: Int
    }

    /// A run of bytes to copy from the old copy to the new file.
    struct Copy: Equatable {
        var from: Int64
        var to: Int64
        var length: Int64
    }

    /// The copies and the ranges to fetch that make `new` from a file chunked as `old`.
    static func plan(
        new: ChunkIndex,
        old: ChunkIndex,
        mergeGap: Int64
    ) -> (copies: [Copy], fetches: [ClosedRange<Int64>]) {
        var found: [UInt64: (offset: Int64, length: Int)] = [:]
        for chunk in old.chunks where found[chunk.digest] == nil { found[chunk.digest] = (chunk.offset, chunk.length) }
        var copies: [Copy] = []
        var fetches: [ClosedRange<Int64>] = []
        for chunk in new.chunks {
            if let source = found[chunk.digest], source.length == chunk.length {
                let length = Int64(chunk.length)
                if let last = copies.last, last.to + last.length == chunk.offset,
                    last.from + last.length == source.offset
                {
                    copies[copies.count - 1].length += length
                } else {
                    copies.append(Copy(from: source.offset, to: chunk.offset, length: length))
                }
                continue
            }
            let end = chunk.offset + Int64(chunk.length) - 1
            if let last = fetches.last, chunk.offset - last.upperBound - 1 < mergeGap {
                fetches[fetches.count - 1] = last.lowerBound...end
            } else {
                fetches.append(chunk.offset...end)
            }
        }
        return (copies, fetches)
    }

    /// Assembles the file at `partialPath` and checks it; returns what it cost.
    ///
    /// - Throws: anything that stops the delta; the caller then downloads the file whole.
    func run(
        fetcher: Fetcher,
        into partialPath: String,
        progress: @escaping @Sendable (Int64) -> Void
    ) async throws -> Outcome {
        let old = try await BlockingPool.run { [oldIndex, oldFile, index] in
            try oldIndex ?? ChunkIndex.make(fileAt: oldFile, parameters: index.parameters)
        }
        let (copies, fetches) = Self.plan(new: index, old: old, mergeGap: mergeGap)
        let toFetch = fetches.reduce(Int64(0)) { $0 + $1.upperBound - $1.lowerBound + 1 }
        guard Double(toFetch) <= maximumShare * Double(index.fileSize) else {
            throw Fetcher.RangeRefused(url: url, detail: "the changed chunks are most of the file")
        }
        let copied = try await BlockingPool.run { [oldFile, size = index.fileSize] in
            let output = try OutputFile(path: partialPath, append: false)
            try output.setLength(size)
            let input = try InputFile(path: oldFile)
            var buffer = [UInt8](repeating: 0, count: 1 << 20)
            var total: Int64 = 0
            for copy in copies {
                var done: Int64 = 0
                while done < copy.length {
                    let count = Int(min(Int64(buffer.count), copy.length - done))
                    try buffer.withUnsafeMutableBytes { raw in
                        let piece = UnsafeMutableRawBufferPointer(rebasing: raw[0..<count])
                        try input.read(at: copy.from + done, into: piece)
                        try output.write(UnsafeRawBufferPointer(piece), at: copy.to + done)
                    }
                    done += Int64(count)
                }
                total += copy.length
            }
            return total
        }
        progress(copied)

        let pieces = fetches.flatMap { range in
            stride(from: range.lowerBound, through: range.upperBound, by: Int(pieceSize)).map {
                $0...min($0 + pieceSize - 1, range.upperBound)
            }
        }
        let (url, size) = (url, index.fileSize)
        let output = try OutputFile(updating: partialPath)
        defer { output.close() }
        try await withThrowingTaskGroup(of: (Int64, Data).self) { group in
            var next = 0
            func startNext() {
                guard next < pieces.count else { return }
                let piece = pieces[next]
                next += 1
                group.addTask { (piece.lowerBound, try await fetcher.range(piece, of: url, fileSize: size)) }
            }
            for _ in 0..<max(1, concurrency) { startNext() }
            while let (offset, data) = try await group.next() {
                try data.withUnsafeBytes { try output.write($0, at: offset) }
                progress(Int64(data.count))
                startNext()
            }
        }
        let actual = try await BlockingPool.run { try Disk.hash(partialPath, algorithm: .sha256) }
        guard actual.0 == index.fileDigest, actual.1 == index.fileSize else {
            throw Fetcher.RangeRefused(url: url, detail: "the assembled file does not match its digest")
        }
        return Outcome(fetched: toFetch, copied: copied, requests: pieces.count)
    }
}
