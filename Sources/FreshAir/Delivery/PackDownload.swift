import Foundation
import Synchronization

/// Small files taken from the root manifest's pack (`FilePack`): one request for thousands of
/// files, which otherwise cost a request each (on a phone's network, a round trip each).
///
/// The pack is a plain `.tar`, unpacked straight into the staged version as it arrives. Only
/// files the sync still needs are written: a file this plan downloads, at its own path, of the
/// size its entry gives. Every one is hashed as it is written and counts only when its SHA-256
/// is its entry's. Whatever the pack lacks, holds twice, holds with other bytes, or never
/// delivers (a `404`, a cut body, a broken header) is fetched alone afterwards, as without a
/// pack: the pack can make a sync faster, never different.
struct PackDownload {
    /// The fewest files that make a pack worth a request.
    static let minimumFiles = 16

    /// Why a pack asked for `asked` files did not bring `missed` of them: the error that
    /// stopped it, else a count. `nil` when it brought them all.
    static func problem(missed: Int, of asked: Int, failure: (any Error)?) -> String? {
        if let failure { return "\(failure)" }
        guard missed > 0 else { return nil }
        // A pack older or newer than its manifest, most likely: the author's to mend.
        return "\(missed) of its \(asked) files were missing or not the manifest's bytes; "
            + "run `breeze generate` on the bundle and publish it again, pack and manifest together"
    }

    /// Whether fetching a pack of `packSize` bytes pays: the files it would bring are at least
    /// ``minimumFiles`` and take at least half of it (`bytes`, counted as they sit in a tar: see
    /// ``footprint(of:)``). An update of a few files never takes the pack; a first sync of a
    /// bundle whose conditions leave out most of it does not either.
    static func isWorthFetching(packSize: Int64, files: Int, bytes: Int64) -> Bool {
        files >= minimumFiles && bytes >= packSize / 2
    }

    /// What a file of `size` bytes takes in a tar: its header and its bytes padded to a block.
    /// A 100-byte file takes 1,024.
    static func footprint(of size: Int64) -> Int64 { 512 + (size + 511) / 512 * 512 }

    /// The jobs a pack may bring, sorted by path: a small file with a size and a SHA-256
    /// digest, not rebuilt from chunks. Positions are in `jobs`.
    static func candidates(
        _ jobs: DownloadJobs,
        of downloads: SelectedFiles,
        rebuilt: [Int: ChunkDeltaSource]
    ) -> [Int32] {
        var found: [Int32] = []
        for (index, job) in jobs.enumerated() where rebuilt[index] == nil {
            let (hash, size) = (downloads.hash(at: job.download), downloads.size(at: job.download))
            guard hash?.algorithm == .sha256, let size, size < FilePack.largestFile else { continue }
            found.append(Int32(index))
        }
        func precedes(_ left: Int32, _ right: Int32) -> Bool {
            downloads.pathPrecedes(jobs[Int(left)].download, jobs[Int(right)].download)
        }
        // A plan read from manifests written in path order is in path order already: checked in
        // one pass, in order, rather than sorted. A sort reads paths from all over the plan,
        // which is on disk once it is long (`PathList`).
        if zip(found, found.dropFirst()).contains(where: { !precedes($0, $1) }) { found.sort(by: precedes) }
        return found
    }
}

/// Unpacks a pack into the staged version while it downloads, keeping the files that match
/// their entries; a `DownloadTee` for `Fetcher/download(_:tee:progress:)`.
///
/// Unchecked `Sendable`: one thread at a time feeds it (the download's writing lane), its
/// `ArchiveStream` writes on a thread of its own, and what arrived is behind a mutex.
final class PackExtraction: DownloadTee, @unchecked Sendable {
    private let folder: String
    private let limits: ExtractionLimits
    private let match: PackMatch
    private var stream: ArchiveStream?

    /// - Parameter arrived: told each file's size as it arrives whole and checked: progress is
    ///   counted in the files' bytes, not the pack's (its headers and padding would take a
    ///   progress bar past the end).
    init(
        into folder: String,
        size: Int64,
        candidates: [Int32],
        jobs: DownloadJobs,
        downloads: SelectedFiles,
        arrived: @escaping @Sendable (Int64) -> Void
    ) {
        self.folder = folder
        // What a pack may unpack to: the files it may bring, never more than it weighs.
        limits = ExtractionLimits(maxTotalBytes: max(size, 0), maxEntries: 1 << 24)
        match = PackMatch(candidates: candidates, jobs: jobs, downloads: downloads, onArrival: arrived)
    }

    /// The jobs whose file arrived whole and checked, by position in the plan's jobs.
    var arrived: [Bool] { match.arrived.withLock { $0 } }

    func restart() throws {
        stream = nil  // its writer stops first; files an earlier attempt completed stay, and are not written again
        stream = try ArchiveStream(
            format: .tar,
            destination: folder,
            singleFileName: "",
            limits: limits,
            filter: ArchiveExtractor.Filter(
                admits: { [match] path, size in match.job(for: path, size: size) != nil },
                written: { [match] path, record in match.written(path, record) }
            )
        )
    }

    func consume(_ bytes: UnsafeRawBufferPointer) throws { try stream?.feed(bytes) }

    func settle() throws { try stream?.settle() }

    /// Checks the pack ended where a tar should.
    func finish() throws {
        guard let stream else { throw ArchiveError(.truncated, "nothing was received") }
        _ = try stream.finish()
    }
}

/// Which of a plan's jobs a pack's file is for, and which arrived.
private final class PackMatch: Sendable {
    /// Job positions, sorted by their file's path.
    let candidates: [Int32]
    /// The plan's jobs (the list itself, not a copy).
    let jobs: DownloadJobs
    let downloads: SelectedFiles
    let arrived: Mutex<[Bool]>
    let onArrival: @Sendable (Int64) -> Void
    /// Where the next file's candidate most likely is, for the files admitted and for those
    /// written (which follow a few files behind): after the last one found.
    private let next = Mutex(Next())

    private struct Next {
        var admitted = 0
        var written = 0
    }

    init(
        candidates: [Int32],
        jobs: DownloadJobs,
        downloads: SelectedFiles,
        onArrival: @escaping @Sendable (Int64) -> Void
    ) {
        self.candidates = candidates
        self.jobs = jobs
        self.downloads = downloads
        self.onArrival = onArrival
        arrived = Mutex([Bool](repeating: false, count: jobs.count))
    }

    /// The job the pack's file at `path` of `size` bytes is for: one still waiting, whose file
    /// is that path, of that size.
    func job(for path: BundlePath, size: Int64?) -> Int? { job(for: path, size: size, near: \.admitted) }

    private func job(for path: BundlePath, size: Int64?, near hint: WritableKeyPath<Next, Int>) -> Int? {
        let low = lowerBound(of: path, near: next.withLock { $0[keyPath: hint] })
        guard low < candidates.count else { return nil }
        let job = Int(candidates[low])
        let file = downloads[jobs[job].download]
        guard file.path == path else {
            next.withLock { $0[keyPath: hint] = low }
            return nil
        }
        next.withLock { $0[keyPath: hint] = low + 1 }
        guard file.size == size, !arrived.withLock({ $0[job] }) else { return nil }
        return job
    }

    /// The first candidate whose path does not sort before `path`. Looked for first at `guess`
    /// and the one after it: a pack lists its files in path order, as the candidates are, so a
    /// file is most often the one after the last (or, when the plan does not want the last,
    /// the same). A binary search otherwise, for a pack in another order.
    private func lowerBound(of path: BundlePath, near guess: Int) -> Int {
        let precedes = { (index: Int) in
            self.downloads.path(at: self.jobs[Int(self.candidates[index])].download) < path
        }
        for place in guess...(guess + 1) where place <= candidates.count {
            if (place == 0 || precedes(place - 1)) && (place == candidates.count || !precedes(place)) { return place }
        }
        return candidates.indices.firstPosition { !precedes($0) }
    }

    /// A file written whole: it arrived if its bytes are its entry's.
    func written(_ path: BundlePath, _ record: FileRecord) {
        guard let job = job(for: path, size: record.size, near: \.written),
            downloads[jobs[job].download].hash == record.hash
        else {
            return
        }
        arrived.withLock { $0[job] = true }
        onArrival(record.size)
    }
}
