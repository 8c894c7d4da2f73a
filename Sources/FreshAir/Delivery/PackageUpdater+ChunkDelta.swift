import Foundation

// A `.tar` package rebuilt from the chunks of the package installed before it (see
// ``ChunkDelta`` and ``TarLayout``).
extension BundleStore {
    /// Where a version installed from a `.tar` package keeps the package's `TarLayout`.
    func tarLayoutPath(_ id: Int) -> String { versionsPath + "/\(id).tar-layout" }

    /// Where a version installed from a `.tar` package by chunks keeps the package's index,
    /// which spares the next update a search of the whole rebuilt package.
    func tarChunksPath(_ id: Int) -> String { versionsPath + "/\(id).tar-chunks" }

    /// Records `layout`, that of the `.tar` package at `package` which version `id` is
    /// installed from, so that the next package can reuse its chunks. `installed` are the paths
    /// the files went to: the archive's, or the ones below a top-level folder the installer moved
    /// up (`movedUp`). Best effort: without it the next package comes whole.
    func recordTarLayout(
        _ layout: TarLayout,
        of package: URL,
        for id: Int,
        movedUp top: String?,
        installed: [String: FileRecord]
    ) {
        // A layout must cover the package byte for byte, or it rebuilds another file.
        guard layout.size == Disk.status(package.path)?.size else { return }
        var layout = layout
        if let top, installed.keys.allSatisfy({ !$0.hasPrefix(top + "/") }) { layout = layout.movingUp(top) }
        try? Disk.createDirectory(versionsPath)
        try? Disk.writeAtomically(layout.serialized(), to: tarLayoutPath(id))
    }
}

extension PackageUpdater {
    /// Builds the signed package from the chunks of the installed one and the ranges it lacks,
    /// or answers `nil` when it cannot (deltas turned off, no index named, not a `.tar`, no
    /// layout, a server or result that cannot support it), and the package then comes whole;
    /// with deltas off its index is not fetched at all.
    ///
    /// With `streaming`, the package is unpacked as it is rebuilt and the job's partial file
    /// keeps only the fetched ranges; without, the whole package is built there, for the
    /// installer.
    ///
    /// - Throws: ``FreshAirError`` when the index the document names cannot be fetched or is
    ///   not the one signed (refused as any file that fails its digest), or when the network
    ///   fails mid-delta (the next update resumes it).
    func rebuildFromChunks(
        _ job: DownloadJob,
        signed: PackageSignature,
        live: VersionRecord,
        into version: Int,
        fetcher: Fetcher,
        streaming: StreamingExtraction?,
        progress: ProgressCounter
    ) async throws -> (file: DownloadedFile, saved: Int64)? {
        guard configuration.chunkDeltas.isEnabled, let reference = signed.chunkIndex, format == .tar,
            live.packageFormat == ArchiveFormat.tar.rawValue,
            let liveDirectory = store.liveDirectory?.path,
            let layout = (try? Disk.read(store.tarLayoutPath(live.id))).flatMap({ try? TarLayout(data: $0) })
        else { return nil }
        let indexURL = URL(string: remote.absoluteString + ChunkIndex.suffix)!
        let data = try await fetcher.listedDocument(
            at: indexURL,
            path: remote.lastPathComponent + ChunkIndex.suffix,
            expected: reference.sha256,
            limit: Int(min(Int64(configuration.maxDocumentSize), reference.size))
        )
        var delta = ChunkDelta(
            indexData: data,
            source: indexURL,
            url: remote,
            fileDigest: signed.sha256,
            fileSize: signed.size,
            limit: job.limit,
            policy: configuration.chunkDeltas,
            openOld: { ReassembledPackage(layout: layout, folder: liveDirectory) }
        )
        // The installed package's own index, when an update by chunks left one: no need to chunk it.
        delta?.reuseIndex(
            at: store.tarChunksPath(live.id),
            ofCopyWith: live.packageDigest.flatMap(ContentHash.init(hex:))
        )
        guard let delta,
            let fetched = try await delta.attempt(
                fetcher: fetcher,
                into: job.partialPath,
                unpacking: streaming,
                progress: { progress.add(bytes: $0) }
            )
        else {
            fetcher.ledger.discard(Int64(data.count))  // the index was for nothing
            return nil
        }
        try? Disk.writeAtomically(data, to: store.tarChunksPath(version))
        // The index is part of what this update downloaded.
        let saved = max(0, signed.size - fetched - Int64(data.count))
        let file = DownloadedFile(
            path: job.partialPath,
            hash: signed.sha256,
            size: signed.size,
            teedWholeBody: streaming != nil
        )
        return (file, saved)
    }
}
