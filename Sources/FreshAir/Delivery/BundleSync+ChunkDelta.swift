import Foundation

/// A large file to rebuild from chunks: its new index (to fetch) and the copy this device has.
struct ChunkDeltaSource: Sendable {
    /// The `.freshair-chunks` entry beside the file.
    var index: SelectedFile
    var indexURL: URL
    /// The previous version's copy of the file, the digest it was verified to have, and its
    /// index there, when it has one.
    var oldFile: String
    var oldHash: ContentHash
    var oldIndexFile: String?
}

/// What a rebuild task brings back: the new index (installed in any case) and, unless the
/// delta fell back to a whole download, the assembled file.
struct ChunkDeltaResult: Sendable {
    var indexFile: SelectedFile
    var indexData: Data
    var file: DownloadedFile?
    /// File bytes not downloaded.
    var saved: Int64
}

// Large files rebuilt from the chunks the previous version has (see ``ChunkDelta``).
extension BundleSync {
    /// The files of `downloads` (but those an interrupted update left) that can be rebuilt: a
    /// SHA-256 digest and size, an index listed beside them with a digest, and a copy in the live
    /// version. None when the app turned deltas off: their indexes are then downloaded as any
    /// listed file.
    func chunkDeltas(
        _ downloads: SelectedFiles,
        except reused: InterruptedCopies,
        live: VersionRecord?,
        liveDirectory: String?,
        layout: ContentLayout
    ) -> [BundlePath: ChunkDeltaSource] {
        guard configuration.chunkDeltas.isEnabled, let live, let liveDirectory else { return [:] }
        // Only chunk indexes can be looked up: no table of every file for a sync of many.
        // A file an interrupted update left is linked, not rebuilt, and so is its index.
        let considered = downloads.indices.lazy.filter { !reused.has($0) }.map { downloads[$0] }
        let byPath = Dictionary(
            considered.filter { $0.path.string.hasSuffix(ChunkIndex.suffix) }.map { ($0.path.string, $0) },
            uniquingKeysWith: { first, _ in first }
        )
        var sources: [BundlePath: ChunkDeltaSource] = [:]
        for file in considered {
            guard let hash = file.hash, hash.algorithm == .sha256, file.size != nil,
                let index = byPath[file.path.string + ChunkIndex.suffix], index.hash != nil,
                let old = live.file(at: file.path.string),
                Disk.status(liveDirectory + "/" + file.path.string)?.size == old.size
            else { continue }
            let oldIndexPath = file.path.string + ChunkIndex.suffix
            sources[file.path] = ChunkDeltaSource(
                index: index,
                indexURL: layout.url(for: index.path, hash: index.hash, base: baseURL),
                oldFile: liveDirectory + "/" + file.path.string,
                oldHash: old.hash,
                oldIndexFile: live.file(at: oldIndexPath) != nil ? liveDirectory + "/" + oldIndexPath : nil
            )
        }
        return sources
    }

    /// Fetches the file's new index, then tries to build the file from chunks into the job's
    /// partial file. An index that cannot be fetched, or a network that fails mid-delta, fails
    /// the sync as any file would (the next run resumes the delta); a delta the server or the
    /// result cannot support leaves `file` nil, and the caller downloads the file whole.
    func rebuild(
        _ job: DownloadJob,
        from source: ChunkDeltaSource,
        fetcher: Fetcher,
        progress: ProgressCounter
    ) async throws -> ChunkDeltaResult {
        let data = try await fetcher.listedDocument(
            at: source.indexURL,
            path: source.index.path.string,
            expected: source.index.hash!,
            limit: configuration.maxDocumentSize
        )
        var result = ChunkDeltaResult(indexFile: source.index, indexData: data, file: nil, saved: 0)
        guard
            var delta = ChunkDelta(
                indexData: data,
                source: source.indexURL,
                url: job.url,
                fileDigest: job.expectedHash,
                fileSize: job.expectedSize,
                limit: job.limit,
                policy: configuration.chunkDeltas,
                openOld: { [path = source.oldFile] in try InputFile(path: path) }
            )
        else { return result }
        delta.reuseIndex(at: source.oldIndexFile, ofCopyWith: source.oldHash)
        if let fetched = try await delta.attempt(
            fetcher: fetcher,
            into: job.partialPath,
            progress: { progress.add(bytes: $0) }
        ) {
            result.file = DownloadedFile(path: job.partialPath, hash: job.expectedHash, size: delta.index.fileSize)
            result.saved = delta.index.fileSize - fetched
        }
        return result
    }
}
