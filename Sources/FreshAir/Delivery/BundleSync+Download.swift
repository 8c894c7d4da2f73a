import Foundation
import Synchronization

// Filling the staged version: carried-over files linked, the rest downloaded concurrently.
extension BundleSync {
    /// Fills the staged tree: links kept files, writes manifests, downloads the rest with
    /// bounded concurrency. Identical content listed at several paths is fetched once.
    func install(
        _ plan: SyncPlan,
        documents: Handover<[(path: BundlePath, data: Data)]>,
        layout: ContentLayout,
        pack: FilePack?,
        into staged: inout StagedVersion,
        live: VersionRecord?,
        liveDirectory: String?,
        fetcher: Fetcher,
        report: @escaping @Sendable (SyncEvent) -> Void
    ) async throws -> Landed {
        try await carryOver(plan.kept, documents, placed: plan.placed, into: staged, liveDirectory: liveDirectory)

        let reusable = try await interruptedCopies(of: plan.downloads)
        // Large files with a chunk index and an older copy here (and none from an interrupted
        // update): rebuilt from chunks, their index fetched by the same task.
        let deltas = chunkDeltas(
            plan.downloads,
            except: reusable,
            live: live,
            liveDirectory: liveDirectory,
            layout: layout
        )
        let (jobs, deltaOf, reused) = try plannedJobs(
            for: plan.downloads,
            reusing: reusable,
            deltas: deltas,
            in: staged
        )
        let summary = plan.summary
        let progress = ProgressCounter(
            filesTotal: summary.filesToDownload,
            bytesExpected: summary.bytesToDownload,
            uptime: fetcher.environment.uptime,
            report: report
        )
        progress.completeFiles(reused.count)
        let downloads = plan.downloads
        var landed = Landed(downloads: downloads.count)
        for position in reused { landed.isLanded[position] = true }
        landed.reused = reused.count
        landed.reserveOrder(plan.downloads.count)
        let fromPack = try await takeFromPack(
            pack,
            jobs: jobs,
            of: downloads,
            rebuilt: deltaOf,
            into: staged,
            landed: &landed,
            fetcher: fetcher,
            progress: progress,
            report: report
        )
        let remaining = Self.startOrder(of: jobs, except: fromPack)
        // A pipelining transport sends several small files' requests on a connection at once: as
        // many more of them are in flight, a large file counting for that many.
        let depth = max(1, fetcher.transport(for: baseURL).pipelineDepth)
        try await forEachConcurrently(
            remaining,
            width: configuration.concurrency * depth,
            weight: { HTTPGetRequest.isPipelinable(bodySize: downloads.size(at: jobs[$0].download)) ? 1 : depth }
        ) { [staged] index in
            let job = downloadJob(for: downloads[jobs[index].download], into: staged, layout: layout)
            let (file, result) = try await fetch(job, delta: deltaOf[index], fetcher: fetcher, progress: progress)
            return (index, file, result)
        } take: { (index: Int, file: DownloadedFile, delta: ChunkDeltaResult?) in
            let positions = [jobs[index].download] + jobs[index].alsoAt.map(Int.init)
            try landed.place(
                file,
                at: positions,
                of: downloads,
                delta: delta,
                in: staged,
                progress: progress,
                report: report
            )
        }
        return landed
    }

    /// The jobs not landed from a pack, in the order they start: read as each job starts, not
    /// made into a list of 200,000; from eight stretches of the list at once, so that the files
    /// being created are in different folders (fewer where few folders may stay open, so that a
    /// folder is not opened again for each file).
    static func startOrder(of jobs: DownloadJobs, except fromPack: [Bool]) -> some Sequence<Int> {
        let lanes = min(8, max(1, ConfinedFolder.maxOpenFolders / 2))
        return InterleavedOrder(count: jobs.count, lanes: lanes).lazy.filter { fromPack.isEmpty || !fromPack[$0] }
    }

    /// Lands the jobs the root manifest's pack brings, when it is worth a request
    /// (`PackDownload`); answers which did, by job (empty when the pack was not asked for).
    /// A pack that fails for any reason leaves its jobs to be fetched alone.
    private func takeFromPack(
        _ pack: FilePack?,
        jobs: DownloadJobs,
        of downloads: SelectedFiles,
        rebuilt: [Int: ChunkDeltaSource],
        into staged: StagedVersion,
        landed: inout Landed,
        fetcher: Fetcher,
        progress: ProgressCounter,
        report: @escaping @Sendable (SyncEvent) -> Void
    ) async throws -> [Bool] {
        guard let pack else { return [] }
        let candidates = PackDownload.candidates(jobs, of: downloads, rebuilt: rebuilt)
        let bytes = candidates.reduce(Int64(0)) {
            $0 + PackDownload.footprint(of: downloads.size(at: jobs[Int($1)].download)!)
        }
        guard PackDownload.isWorthFetching(packSize: pack.size, files: candidates.count, bytes: bytes) else {
            return []
        }
        let extraction = PackExtraction(
            into: staged.path,
            size: pack.size,
            candidates: candidates,
            jobs: jobs,
            downloads: downloads,
            arrived: { progress.add(bytes: $0) }
        )
        let job = DownloadJob(
            label: pack.path.string,
            url: pack.path.url(relativeTo: baseURL),
            partialPath: staged.partialsPath + "/pack.tar",
            expectedHash: nil,
            expectedSize: pack.size,
            limit: pack.size,
            validators: nil,
            resumable: false,
            confined: nil,
            isTransient: true,
            keepsBody: false
        )
        var received: Int64 = 0
        var failure: (any Error)?
        do {
            let outcome = try await fetcher.download(job, tee: extraction, progress: { _ in })
            if case .fetched(let file, _) = outcome { received = file.size }
            try extraction.finish()  // a tar that ends early, or a body never teed, throws here
        } catch {
            // Its writer stops before anything else writes; what arrived whole and checked
            // still counts, the rest is fetched alone (unless the sync is being cancelled).
            try? extraction.settle()
            if Task.isCancelled { throw error }
            failure = error
        }
        try await BlockingPool.run { try Disk.remove(job.partialPath) }
        let arrived = extraction.arrived
        var taken: Int64 = 0
        for (index, job) in jobs.enumerated() where arrived[index] {
            let file = downloads[job.download]
            let positions = [job.download] + job.alsoAt.map(Int.init)
            // Its other paths hold the same bytes, linked: done too (the total counts each path),
            // before the files are, whose last one reports the end.
            progress.add(bytes: file.size! * Int64(job.alsoAt.count))
            try landed.place(
                DownloadedFile(path: staged.path + "/" + file.path.string, hash: file.hash, size: file.size!),
                at: positions,
                of: downloads,
                delta: nil,
                in: staged,
                progress: progress,
                report: report
            )
            taken += file.size!
            landed.fromPack += positions.count
        }
        // What crossed the network beyond the files: the pack's headers, and files not taken.
        landed.bytes += max(received - taken, 0)
        let missed = candidates.count - candidates.count { arrived[Int($0)] }
        landed.packProblem = PackDownload.problem(missed: missed, of: candidates.count, failure: failure)
        return arrived
    }

    /// One job per distinct content (its other paths are linked to the first), each naming its
    /// files by position in `downloads`; files an interrupted update left are linked now, and
    /// their positions returned. A job's request (its URL, its target) is made when it starts,
    /// not here: 100,000 of them held for the whole install cost more than anything else in it.
    private func plannedJobs(
        for downloads: SelectedFiles,
        reusing reusable: InterruptedCopies,
        deltas: [BundlePath: ChunkDeltaSource],
        in staged: StagedVersion
    ) throws -> (jobs: DownloadJobs, deltas: [Int: ChunkDeltaSource], reused: [Int]) {
        var jobs = DownloadJobs()
        var reused: [Int] = []
        // Sized once: a table of 100,000 files that grows by doubling holds two copies on the way.
        jobs.reserveCapacity(downloads.count)
        // Identical bytes found by sorting, not by a dictionary of digests (13 MB at 100,000
        // files): each file's group, and the job its group has once one is made.
        let group = Self.sameContent(downloads)
        var jobOfGroup = [Int32](repeating: -1, count: downloads.count)
        let indexesWithDeltas = Set(deltas.values.map(\.index.path))
        var deltaOfJob: [Int: ChunkDeltaSource] = [:]
        var indexesFetchedByDeltas: Set<BundlePath> = []
        func add(_ position: Int) throws {
            let file = downloads[position]
            let sameAs = Int(group[position])
            if sameAs >= 0, jobOfGroup[sameAs] >= 0 {
                jobs.add(position, toJob: Int(jobOfGroup[sameAs]))
                return
            }
            if let copy = reusable.copy(of: position, at: file.path), file.hash != nil, file.size != nil {
                try staged.link(copy, at: file.path)
                reused.append(position)
                return
            }
            if sameAs >= 0 { jobOfGroup[sameAs] = Int32(jobs.count) }
            if let delta = deltas[file.path] {
                deltaOfJob[jobs.count] = delta
                indexesFetchedByDeltas.insert(delta.index.path)
            }
            jobs.append(download: position)
        }
        // Indexes wait until their file's job is made: one whose file got no job of its own
        // (the same bytes as another file) is fetched as any file.
        for (position, file) in downloads.enumerated() where !indexesWithDeltas.contains(file.path) {
            try add(position)
        }
        for (position, file) in downloads.enumerated()
        where indexesWithDeltas.contains(file.path) && !indexesFetchedByDeltas.contains(file.path) {
            try add(position)
        }
        return (jobs, deltaOfJob, reused)
    }

    /// For each file, the position of the first file listing the same digest (its own, for
    /// the first), or -1 for a file listed without one.
    static func sameContent(_ files: SelectedFiles) -> [Int32] {
        // Sorted by each digest's first 8 bytes, then by position, read once in order: a long
        // list's digests are on disk (`DigestsAndSizes`), and a sort that read two of them for
        // each comparison would read the file millions of times. Neighbours with the same first
        // bytes are then compared whole: a file joins a group only with its exact digest. Two
        // digests made to share their first 8 bytes (2^32 tries) can split one digest's files
        // into two groups: one download more, never a file given another's bytes.
        var prefixes = [UInt64](repeating: 0, count: files.count)
        var order: [Int32] = []
        order.reserveCapacity(files.count)
        for position in files.indices {
            guard let hash = files.hash(at: position) else { continue }
            prefixes[position] = hash.digestWords.0
            order.append(Int32(position))
        }
        order.sort { left, right in
            let (a, b) = (prefixes[Int(left)], prefixes[Int(right)])
            return a == b ? left < right : a < b
        }
        var first = [Int32](repeating: -1, count: files.count)
        var leader: Int32 = -1
        for (rank, position) in order.enumerated() {
            let previous = rank == 0 ? nil : order[rank - 1]
            let sameAsPrevious = previous.map { previous in
                prefixes[Int(previous)] == prefixes[Int(position)]
                    && files.hash(at: Int(previous)) == files.hash(at: Int(position))
            }
            if sameAsPrevious != true { leader = position }
            first[Int(position)] = leader
        }
        return first
    }

    /// Links unchanged files from the live version and writes the manifests: thousands of
    /// system calls, made on the blocking pool.
    private func carryOver(
        _ kept: KeptFiles,
        _ documents: Handover<[(path: BundlePath, data: Data)]>,
        placed: [(file: SelectedFile, from: String, record: FileRecord)],
        into staged: StagedVersion,
        liveDirectory: String?
    ) async throws {
        try await BlockingPool.run { [staged] in
            // Moved, not linked: flushed with the version like any file written now.
            for (file, from, _) in placed { try staged.place(from, at: file.path) }
            if !kept.isEmpty {
                guard let live = FolderWalk(path: liveDirectory!) else {
                    throw Disk.failure("open folder", liveDirectory!)
                }
                try staged.link(kept.lazy.map(\.path), from: live)
            }
            for (path, data) in documents.take() { try staged.write(data, at: path) }
        }
    }

    /// What an update that was killed or failed already downloaded and verified, found by
    /// hashing its files again (on the blocking pool), by the position of its download.
    private func interruptedCopies(of downloads: SelectedFiles) async throws -> InterruptedCopies {
        let interrupted = store.interruptedFolders()
        guard !interrupted.isEmpty else { return InterruptedCopies() }
        return try await BlockingPool.run { [store] in
            var copies = InterruptedCopies(folders: interrupted, count: downloads.count)
            let folders = copies.searched
            for (position, file) in downloads.enumerated() {
                guard let hash = file.hash, let size = file.size,
                    let folder = store.interruptedCopy(of: file.path, hash: hash, size: size, in: folders)
                else { continue }
                copies.found(position, inFolder: folder)
            }
            return copies
        }
    }

    /// The name of `file`'s partial download: its digest, or the digest of its path.
    static func partialKey(of file: SelectedFile) -> String {
        (file.hash ?? ContentHash.of(Array(file.path.string.utf8), using: .sha256)).hex
    }

    /// Removes the partial downloads (and their resume points) of large files this update does
    /// not download: a release since dropped or changed them. Called before anything is
    /// fetched, even before the staged folder is made (on a disk a failed download filled, even
    /// that fails), so that such a download does not keep the disk full for every smaller update
    /// after it. Only names this code gives partials (40 or 64 hex digits) go.
    static func dropUnneededPartials(of downloads: SelectedFiles, in folder: String) async {
        try? await BlockingPool.run {
            let needed = Set(downloads.map(partialKey(of:)))
            for name in Disk.contentsOfDirectory(folder) {
                let key = name.hasSuffix(".resume") ? String(name.dropLast(".resume".count)) : name
                guard key.count == 40 || key.count == 64, ContentHash.isLowercaseHex(key, digits: key.count),
                    !needed.contains(key)
                else { continue }
                try? Disk.remove(folder + "/" + name)
            }
        }
    }

    /// The download of `file`. A small file goes straight to its place in the staged tree: one
    /// create in its own folder instead of a create, a rename and side-file checks in one shared
    /// folder; a large one to the update's partials, where an interruption leaves it to resume.
    private func downloadJob(for file: SelectedFile, into staged: StagedVersion, layout: ContentLayout) -> DownloadJob {
        let small = (file.size ?? .max) < Fetcher.resumableSize
        let partialPath: String
        if small {
            partialPath = staged.path + "/" + file.path.string
        } else {
            partialPath = staged.partialsPath + "/" + Self.partialKey(of: file)
        }
        return DownloadJob(
            label: file.path.string,
            url: layout.url(for: file.path, hash: file.hash, base: baseURL),
            partialPath: partialPath,
            expectedHash: file.hash,
            expectedSize: file.size,
            limit: configuration.sizeCap(declared: file.size != nil),
            validators: nil,
            resumable: !small,
            confined: small ? ConfinedTarget(folder: staged.folder, path: file.path) : nil
        )
    }

    /// One file: rebuilt from its chunks when it has a delta that works, else downloaded whole.
    private func fetch(
        _ job: DownloadJob,
        delta: ChunkDeltaSource?,
        fetcher: Fetcher,
        progress: ProgressCounter
    ) async throws -> (DownloadedFile, ChunkDeltaResult?) {
        var result: ChunkDeltaResult?
        if let delta {
            result = try await rebuild(job, from: delta, fetcher: fetcher, progress: progress)
            if let file = result?.file { return (file, result) }
        }
        guard case .fetched(let file, _) = try await fetcher.download(job, progress: { progress.add(bytes: $0) }) else {
            throw FreshAirError.httpStatus(304, url: job.url)
        }
        return (file, result)
    }

    /// What an install put in the staged tree, as it landed.
    ///
    /// A downloaded file's record is what its manifest entry says, once the download is checked
    /// against it: only whether it landed is kept here, and only a record that differs from the
    /// entry (one that gave no digest or no size) is kept whole. A list of 100,000 records
    /// beside the list of downloads was 6.4 MB; a size for each, 0.8 MB.
    struct Landed {
        /// Whether each download landed (or was reused), by its position.
        var isLanded: [Bool]
        /// Records that are not the entry's (it gave no digest or no size), by position.
        var unlisted: [(position: Int32, record: FileRecord)] = []
        /// Files that are not downloads of the plan: rebuilt files' chunk indexes.
        var records: [FileTable.Entry] = []
        /// Files an interrupted update left, reused.
        var reused = 0
        /// What was downloaded, in the order it landed: a download's position, or `-1 - i` for
        /// `records[i]`. Positions, not paths: at 100,000 files a list of the paths' strings was
        /// 1.6 MB held through every download, and the paths are in the plan already.
        private(set) var order: [Int32] = []
        /// Body bytes downloaded.
        var bytes: Int64 = 0
        /// Bytes not downloaded thanks to chunk deltas.
        var saved: Int64 = 0
        /// Files taken from the root manifest's pack.
        var fromPack = 0
        /// Why the pack did not bring every file it was asked for, if it did not.
        var packProblem: String?

        init(downloads: Int) { isLanded = [Bool](repeating: false, count: downloads) }

        /// Room for `count` more landings.
        mutating func reserveOrder(_ count: Int) { order.reserveCapacity(count) }

        /// `first`, then the paths downloaded, in the order they landed.
        func downloadedPaths(after first: [String], of downloads: SelectedFiles) -> PathsByPosition {
            var paths = PathsByPosition(readingFrom: downloads.pathList)
            paths.reserveCapacity(first.count + order.count)
            for path in first { paths.append(path) }
            for landed in order {
                if landed >= 0 {
                    paths.append(position: Int(landed))
                } else {
                    paths.append(records[Int(-1 - landed)].path)
                }
            }
            return paths
        }

        /// The version's files, in path order, read from the plan's lists as the record is
        /// written: the rebuilt files' chunk indexes, the downloads that landed (a chunk index
        /// a rebuilt file brought with it is not one of them), and what was kept, written and
        /// placed.
        func listing(of plan: SyncPlan) -> FileListing {
            let (downloads, isLanded) = (plan.downloads, isLanded)
            let unlisted = Dictionary(unlisted.map { ($0.position, $0.record) }, uniquingKeysWith: { $1 })
            let landed = FileListing.Run(downloads, path: \.path.string) { position, file in
                guard isLanded[position] else { return nil }
                guard
                    let record = unlisted[Int32(position)] ?? file.hash.map({ FileRecord(hash: $0, size: file.size!) })
                else { return nil }
                return FileTable.Entry(path: file.path.string, record: record)
            }
            // Manifests: a few files.
            let documents =
                plan.written.map { FileTable.Entry(path: $0.file.path.string, record: $0.record) }
                + plan.placed.map { FileTable.Entry(path: $0.file.path.string, record: $0.record) }
            return FileListing([
                FileListing.Run(FileTable(sorting: records)), landed, plan.kept.run,
                FileListing.Run(FileTable(sorting: documents)),
            ])
        }

        /// Puts a downloaded (or rebuilt) file at its first path in the staged tree and links
        /// its other paths to it; a rebuilt file's chunk index comes with it.
        mutating func place(
            _ file: DownloadedFile,
            at positions: [Int],
            of downloads: SelectedFiles,
            delta: ChunkDeltaResult?,
            in staged: StagedVersion,
            progress: ProgressCounter,
            report: @Sendable (SyncEvent) -> Void
        ) throws {
            if let delta {
                // The index came with its file (and stays beside it, for the next update).
                let path = delta.indexFile.path
                try staged.write(delta.indexData, at: path)
                records.append(
                    FileTable.Entry(
                        path: path.string,
                        record: FileRecord(hash: delta.indexFile.hash!, size: Int64(delta.indexData.count))
                    )
                )
                order.append(-Int32(records.count))
                report(.downloaded(path: path.string, bytes: Int64(delta.indexData.count)))
                bytes += Int64(delta.indexData.count)
                progress.completeFiles(1)
                saved += delta.saved
            }
            let first = downloads[positions[0]].path
            try staged.place(file.path, at: first)
            for extra in positions.dropFirst() { try staged.duplicate(first, at: downloads[extra].path) }
            for position in positions {
                let path = downloads[position].path
                // Every bundle file is hashed as it arrives (only transient packages are not).
                if let hash = file.hash {
                    isLanded[position] = true
                    if hash != downloads.hash(at: position) || file.size != downloads.size(at: position) {
                        unlisted.append((Int32(position), FileRecord(hash: hash, size: file.size)))
                    }
                }
                order.append(Int32(position))
                report(.downloaded(path: path.string, bytes: file.size))
            }
            bytes += file.size - (delta?.saved ?? 0)  // a rebuilt file's copied chunks did not cross the network
            progress.completeFiles(positions.count)
        }
    }
}
