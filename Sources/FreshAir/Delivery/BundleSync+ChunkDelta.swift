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
    /// The files of `downloads` that can be rebuilt: a SHA-256 digest and size, an index
    /// listed beside them with a digest, and a copy in the live version.
    func chunkDeltas(
        _ downloads: [SelectedFile],
        live: VersionRecord?,
        liveDirectory: String?,
        layout: ContentLayout
    ) -> [BundlePath: ChunkDeltaSource] {
        guard let live, let liveDirectory else { return [:] }
        let byPath = Dictionary(downloads.map { ($0.path.string, $0) }, uniquingKeysWith: { first, _ in first })
        var sources: [BundlePath: ChunkDeltaSource] = [:]
        for file in downloads {
            guard let hash = file.hash, hash.algorithm == .sha256, file.size != nil,
                let index = byPath[file.path.string + ChunkIndex.suffix], index.hash != nil,
                let old = live.files[file.path.string],
                Disk.status(liveDirectory + "/" + file.path.string)?.size == old.size
            else { continue }
            let oldIndexPath = file.path.string + ChunkIndex.suffix
            sources[file.path] = ChunkDeltaSource(
                index: index,
                indexURL: layout.url(for: index.path, hash: index.hash, base: baseURL),
                oldFile: liveDirectory + "/" + file.path.string,
                oldHash: old.hash,
                oldIndexFile: live.files[oldIndexPath] != nil ? liveDirectory + "/" + oldIndexPath : nil
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
        let expected = source.index.hash!
        guard
            case .fetched(let data, _) = try await fetcher.document(
                at: source.indexURL,
                validators: nil,
                limit: configuration.maxDocumentSize
            )
        else { throw FreshAirError.httpStatus(304, url: source.indexURL) }
        let actual = ContentHash.of(data, using: expected.algorithm)
        guard actual == expected else {
            throw FreshAirError.hashMismatch(
                path: source.index.path.string,
                url: source.indexURL,
                expected: expected,
                actual: actual
            )
        }
        var result = ChunkDeltaResult(indexFile: source.index, indexData: data, file: nil, saved: 0)
        // An index that does not describe the file the manifest names is not used.
        guard let index = try? ChunkIndex(data: data, source: source.indexURL.absoluteString),
            index.fileDigest == job.expectedHash, index.fileSize == job.expectedSize, index.fileSize <= job.limit
        else { return result }
        let oldIndex = source.oldIndexFile.flatMap { path in
            (try? Disk.read(path)).flatMap { try? ChunkIndex(data: $0, source: path) }
        }.flatMap { $0.fileDigest == source.oldHash && $0.parameters == index.parameters ? $0 : nil }
        let delta = ChunkDelta(index: index, url: job.url, oldFile: source.oldFile, oldIndex: oldIndex)
        do {
            let fetched = try await delta.run(fetcher: fetcher, into: job.partialPath) { progress.add(bytes: $0) }
            result.file = DownloadedFile(path: job.partialPath, hash: job.expectedHash, size: index.fileSize)
            result.saved = index.fileSize - fetched
        } catch is CancellationError {
            throw CancellationError()
        } catch let error as FreshAirError where error.isTransient {
            // The network failed (after retries): the sync fails as any download would, and
            // the ranges already fetched stay for the next run (`<partial>.delta`).
            throw error
        } catch {
            // A server that cannot serve the delta, or a result that does not check: the whole
            // file comes the plain way; what was assembled goes.
            for leftover in ["", ".resume", ".delta"] { try? Disk.remove(job.partialPath + leftover) }
        }
        return result
    }
}
