import Foundation

/// Builds a changed large file from the blocks of the copy a device has and the blocks it
/// lacks, fetched with single-range `GET`s (see `ChunkIndex`).
///
/// `BlockFinder` places each of the new file's blocks in the old copy (by the index
/// installed beside it when it still describes it, and by a rolling search of the rest); the
/// blocks not found are fetched, neighbouring ranges merged when the bytes between them are
/// fewer than the policy's `ChunkDeltaPolicy/mergeGap`. The file is assembled in its
/// partial file, then its whole SHA-256 must be the manifest's. Whatever goes wrong (a server
/// that ignores `Range`, a block that does not match, a plan that would fetch most of the file
/// anyway), the caller downloads the file whole: a delta never installs anything the plain
/// path would not.
struct ChunkDelta {
    /// The new file's index, checked against the manifest's digest and size of the file.
    let index: ChunkIndex
    let url: URL
    /// Opens the device's previous copy (a file, or a package rebuilt from its files); its
    /// index, when one describes it, spares searching all of it.
    let openOld: @Sendable () throws -> any ChunkSource
    /// An index of the old copy, read only for the search (``reuseIndex(at:ofCopyWith:)``).
    var oldIndex: (path: String, digest: ContentHash)?
    /// How ranges are merged, weighed against the whole file and fetched.
    let policy: ChunkDeltaPolicy
    /// Ranges larger than this are fetched in pieces, to bound memory: at most
    /// `ChunkDeltaPolicy/concurrency` pieces are held at once (16 MB with the defaults).
    var pieceSize: Int64 = 2 << 20

    /// A delta that builds the file an index describes, or `nil` when the index cannot be
    /// read or describes another file than the one expected (its digest and size, as the
    /// manifest or the signed document give them), or one larger than `limit`.
    init?(
        indexData: Data,
        source: URL,
        url: URL,
        fileDigest: ContentHash?,
        fileSize: Int64?,
        limit: Int64,
        policy: ChunkDeltaPolicy,
        openOld: @escaping @Sendable () throws -> any ChunkSource
    ) {
        guard let index = try? ChunkIndex(data: indexData, source: source.absoluteString),
            index.fileDigest == fileDigest, index.fileSize == fileSize, index.fileSize <= limit
        else { return nil }
        self.index = index
        self.url = url
        self.policy = policy
        self.openOld = openOld
    }

    /// Uses the index at `path` for the old copy, sparing a search of all of it, when it is an
    /// index of a file with that digest (what the device installed) made with this index's
    /// block size; anything else is ignored and the whole old copy is searched.
    mutating func reuseIndex(at path: String?, ofCopyWith digest: ContentHash?) {
        guard let path, let digest else { return }
        oldIndex = (path, digest)
    }

    /// The old copy's index, read for the search and let go after it.
    private static func readIndex(_ source: (path: String, digest: ContentHash)?, blockSize: Int) -> ChunkIndex? {
        guard let source, let data = try? Disk.read(source.path),
            let old = try? ChunkIndex(data: data, source: source.path),
            old.fileDigest == source.digest, old.blockSize == blockSize
        else { return nil }
        return old
    }

    /// ``run(fetcher:into:unpacking:progress:)``, but a delta the server or the result cannot
    /// support answers `nil` (what was assembled is removed) and the caller downloads the file
    /// whole. A network that fails after its retries fails the update as any download would;
    /// the ranges fetched so far stay for the next run (`<partial>.delta`).
    func attempt(
        fetcher: Fetcher,
        into partialPath: String,
        unpacking tee: (any DownloadTee)? = nil,
        progress: @escaping @Sendable (Int64) -> Void
    ) async throws -> Int64? {
        do {
            return try await run(fetcher: fetcher, into: partialPath, unpacking: tee, progress: progress)
        } catch is CancellationError {
            throw CancellationError()
        } catch let error as FreshAirError where error.isTransient {
            throw error
        } catch {
            for leftover in ["", ".resume", ".delta"] { try? Disk.remove(partialPath + leftover) }
            return nil
        }
    }

    /// A run of bytes to copy from the old copy to the new file.
    struct Copy: Equatable {
        var from: Int64
        var to: Int64
        var length: Int64
    }

    /// The copies and the ranges to fetch that make `new` from an old copy holding its blocks
    /// where `found` says.
    static func plan(
        new: ChunkIndex,
        found: BlockFinder.Placements,
        mergeGap: Int64
    ) -> (copies: [Copy], fetches: [ClosedRange<Int64>]) {
        var copies: [Copy] = []
        var fetches: [ClosedRange<Int64>] = []
        for (block, source) in found.enumerated() {
            let (offset, length) = new.extent(ofBlock: block)
            if let source {
                if let last = copies.last, last.to + last.length == offset, last.from + last.length == source {
                    copies[copies.count - 1].length += Int64(length)
                } else {
                    copies.append(Copy(from: source, to: offset, length: Int64(length)))
                }
                continue
            }
            let end = offset + Int64(length) - 1
            if let last = fetches.last, offset - last.upperBound - 1 < max(1, mergeGap) {
                fetches[fetches.count - 1] = last.lowerBound...end
            } else {
                fetches.append(offset...end)
            }
        }
        return (copies, fetches)
    }

    /// Assembles the file at `partialPath` and checks it; returns the bytes fetched.
    ///
    /// Ranges are fetched in file order and written at their offsets; `<partial>.delta`
    /// records each one as it lands, so a run that was killed or failed keeps them and the next
    /// fetches only the rest. Meanwhile one pass in file order, following the fetched pieces,
    /// copies the kept blocks from the old copy and hashes every byte: no byte is read twice,
    /// and the network and the disk work at the same time.
    ///
    /// With a `tee` (a package unpacked as it is rebuilt), the pass hands it every byte in
    /// order and copies nothing: the partial file holds only the fetched ranges, and the
    /// package is written once, as the files it unpacks to.
    ///
    /// - Throws: anything that stops the delta; the caller then downloads the file whole.
    func run(
        fetcher: Fetcher,
        into partialPath: String,
        unpacking tee: (any DownloadTee)? = nil,
        progress: @escaping @Sendable (Int64) -> Void
    ) async throws -> Int64 {
        let (copies, pieces, toFetch) = try worthwhilePlan(
            found: await BlockingPool.run { [oldIndex, openOld, index] in
                try BlockFinder.find(
                    index,
                    opening: openOld,
                    oldIndex: Self.readIndex(oldIndex, blockSize: index.blockSize)
                ).offsets
            }
        )
        // What an earlier attempt at this same file fetched, when its record is there.
        let journal = DeltaJournal(path: partialPath + ".delta", file: index.fileDigest)
        let done = try await BlockingPool.run { [size = index.fileSize] in
            let done = Disk.status(partialPath)?.size == size ? journal.completed() : []
            if done.isEmpty {
                try? Disk.remove(partialPath + ".resume")  // a whole download's, for bytes this replaces
                let output = try OutputFile(path: partialPath, append: false)
                try output.setLength(size)
                try journal.start()
            }
            return done
        }
        let remaining = pieces.filter { !done.contains($0.lowerBound) }
        try tee?.restart()

        let (url, size) = (url, index.fileSize)
        let recording = try journal.recording()
        defer { recording.close() }
        // The pass runs while the ranges are fetched, following them in file order. Nothing
        // may throw between its start and the `do` below, whose `catch` releases it.
        let landed = LandedPieces(done)
        async let assembling = BlockingPool.run { [openOld] in
            try Self.assemble(
                partialPath,
                size: size,
                copies: copies,
                pieces: pieces,
                landed: landed,
                from: openOld(),
                tee: tee
            )
        }
        var fetchedNow: Int64 = 0
        do {
            try await forEachConcurrently(remaining, width: policy.concurrency) { piece in
                // A descriptor of its own: pieces land at once, each written as it arrives.
                let output = try OutputFile(updating: partialPath)
                defer { output.close() }
                return (piece.lowerBound, try await fetcher.range(piece, of: url, fileSize: size, into: output))
            } take: { (offset, written) in
                fetchedNow += written
                try recording.record(offset)
                landed.land(offset)
                progress(written)
            }
        } catch {
            landed.stop()  // the pass must not wait for a piece that will not come
            _ = try? await assembling
            throw error
        }
        let actual = try await assembling
        progress(copies.reduce(0) { $0 + $1.length })
        try? Disk.remove(journal.path)
        guard actual == index.fileDigest else {
            throw Fetcher.RangeRefused(url: url, detail: "the assembled file does not match its digest")
        }
        // The ranges are in the file now; a delta that gave way counts them as wasted.
        fetcher.ledger.use(fetchedNow)
        return toFetch
    }

    /// What to copy and what to fetch, the fetches cut into pieces of at most `pieceSize`.
    ///
    /// - Throws: ``Fetcher/RangeRefused`` when the ranges (with a request's cost each) would
    ///   cost more than `policy.maximumShare` of the whole file.
    private func worthwhilePlan(
        found: BlockFinder.Placements
    ) throws -> (copies: [Copy], pieces: [ClosedRange<Int64>], toFetch: Int64) {
        let (copies, fetches) = Self.plan(new: index, found: found, mergeGap: policy.mergeGap)
        let toFetch = fetches.reduce(Int64(0)) { $0 + $1.upperBound - $1.lowerBound + 1 }
        let cost = Double(toFetch + Int64(fetches.count) * policy.requestCost)
        guard cost <= policy.maximumShare * Double(index.fileSize) else {
            throw Fetcher.RangeRefused(
                url: url,
                detail: "\(fetches.count) ranges of \(toFetch) bytes would cost about as much as the whole file"
            )
        }
        let pieces = fetches.flatMap { range in
            stride(from: range.lowerBound, through: range.upperBound, by: Int(pieceSize)).map {
                $0...min($0 + pieceSize - 1, range.upperBound)
            }
        }
        return (copies, pieces, toFetch)
    }

    /// The pass in file order: kept runs copied from `old` into the partial file (shared with
    /// it, where the file system can; with a `tee`, handed to the tee instead), every byte
    /// hashed, fetched bytes read back from the file once their piece has landed; answers the
    /// file's SHA-256.
    ///
    /// A region is touched only once every piece that starts before its end has landed: a
    /// merged range can span kept blocks, and a piece written after their copy would leave in
    /// the file bytes that the hash never saw.
    private static func assemble(
        _ partialPath: String,
        size: Int64,
        copies: [Copy],
        pieces: [ClosedRange<Int64>],
        landed: LandedPieces,
        from input: any ChunkSource,
        tee: (any DownloadTee)?
    ) throws -> ContentHash {
        let assembled = try InputFile(path: partialPath)
        let writer = try OutputFile(updating: partialPath)
        // Hashed on another thread while the next piece is read and written: four buffers of 1 MB
        // (of 256 KB, the hand-offs made a 1 GB delta 0.25 s slower).
        let hashing = HashingPipe()
        defer { _ = hashing.finish() }
        // Whatever happens, nothing is still unpacking once the pass is over.
        defer { try? tee?.settle() }
        var waitedFor = 0
        func awaitPieces(before end: Int64) throws {
            while waitedFor < pieces.count, pieces[waitedFor].lowerBound < end {
                guard landed.wait(for: pieces[waitedFor].lowerBound) else { throw CancellationError() }
                waitedFor += 1
            }
        }
        // Kept bytes are read here for the hash all the same, so they are written from the
        // buffer they were read into: on a file system that cannot share blocks (ext4), a
        // kernel copy (copy_file_range) was a second read of them, and made a 489 MB database
        // take 0.60 s instead of 0.53 s. Where blocks can be shared (Btrfs, XFS), a kept run
        // of a file is shared instead, and takes neither a write nor space.
        var mayShare = input is InputFile
        func hash(from source: any ChunkSource, at offset: Int64, length: Int64, writingAt target: Int64?) throws {
            var target = target
            if let at = target, mayShare, let file = source as? InputFile {
                // A shared run is hashed from the old copy below, whose pages are in memory (the
                // new file's shared blocks would be read from disk). The store's versions are
                // never written to: whoever could change one between the share and the read
                // could change the live files as well.
                switch try writer.share(from: file, at: offset, length: length, to: at) {
                case .shared: target = nil
                case .notHere: break
                case .never: mayShare = false
                }
            }
            var done: Int64 = 0
            while done < length {
                try hashing.send { buffer in
                    let count = Int(min(Int64(buffer.count), length - done))
                    let piece = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count])
                    try source.read(at: offset + done, into: piece)
                    try tee?.consume(UnsafeRawBufferPointer(piece))
                    if let target { try writer.write(UnsafeRawBufferPointer(piece), at: target + done) }
                    done += Int64(count)
                    return count
                }
            }
        }
        // Fetched bytes were written through descriptors of their own, each too few to start
        // write-back; they count here, in file order with the copies, so the disk starts on
        // them as it does on copied blocks and the final flush waits only for the tail.
        func hashFetched(from start: Int64, to end: Int64) throws {
            try hash(from: assembled, at: start, length: end - start, writingAt: nil)
            writer.countWritten(start..<end)
        }
        var position: Int64 = 0
        for copy in copies {
            try awaitPieces(before: copy.to + copy.length)
            // Fetched bytes before this copy are in the file: hashed from there.
            try hashFetched(from: position, to: copy.to)
            try hash(from: input, at: copy.from, length: copy.length, writingAt: tee == nil ? copy.to : nil)
            position = copy.to + copy.length
        }
        try awaitPieces(before: size)
        try hashFetched(from: position, to: size)
        try tee?.settle()
        return hashing.finish()
    }
}

/// The pieces of a delta written to its partial file so far, for the assembly pass that
/// follows them (on a thread of `BlockingPool`, so it may block here). Unchecked `Sendable`:
/// its state is guarded by `condition`.
final class LandedPieces: @unchecked Sendable {
    // `offsets` and `stopped` are guarded by `condition`.
    private let condition = NSCondition()
    private var offsets: Set<Int64>
    private var stopped = false

    /// Pieces already in the file (kept by an earlier attempt) start out landed.
    init(_ offsets: Set<Int64>) {
        self.offsets = offsets
    }

    /// The piece starting at `offset` is written.
    func land(_ offset: Int64) {
        condition.lock()
        offsets.insert(offset)
        condition.broadcast()
        condition.unlock()
    }

    /// No more pieces will land: waiters give up.
    func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
    }

    /// Waits for the piece starting at `offset`; `false` when fetching stopped first.
    func wait(for offset: Int64) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while !offsets.contains(offset) {
            if stopped { return false }
            condition.wait()
        }
        return true
    }
}

/// `<partial>.delta`: the file a delta is building (its digest, first line) and the offset of
/// every fetched piece written so far, one per line.
struct DeltaJournal: Sendable {
    let path: String
    let file: ContentHash

    /// Offsets of pieces an earlier attempt at this file completed; empty when there is no
    /// journal or it is another file's.
    func completed() -> Set<Int64> {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [] }
        let lines = text.split(separator: "\n")
        guard lines.first.map(String.init) == file.hex else { return [] }
        return Set(lines.dropFirst().compactMap { Int64($0) })
    }

    /// Starts the journal of a new attempt: the file's digest, no pieces.
    func start() throws {
        try Disk.writeAtomically(Data((file.hex + "\n").utf8), to: path)
    }

    /// The journal, open for the run to record pieces as they land: one open file, not one
    /// open and close for each of thousands of pieces.
    func recording() throws -> Recording {
        Recording(file: try OutputFile(path: path, append: true, startsWriteback: false))
    }

    /// A journal open for appending (``recording()``); closed by its caller.
    struct Recording {
        let file: OutputFile

        /// The piece starting at `offset` is in the partial file.
        func record(_ offset: Int64) throws {
            try Data("\(offset)\n".utf8).withUnsafeBytes { try file.write($0) }
        }

        func close() { file.close() }
    }
}
